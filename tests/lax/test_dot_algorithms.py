"""`precision=` of the contractions with JAX's algorithm types (`DotAlgorithmPreset`,
`DotAlgorithm`): on the CPU, as in JAX, DEFAULT and F32_F32_F32 compute the ordinary product
(recorded in the jaxpr), every other algorithm is refused."""

import numpy as np
import pytest
from helpers import check_eager_jit_numpy, jaxpr_text

import tracejit
from tracejit import lax

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)
Y = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7


@pytest.mark.parametrize(
    "preset", [lax.DotAlgorithmPreset.DEFAULT, lax.DotAlgorithmPreset.F32_F32_F32]
)
def test_cpu_presets_compute_the_product(preset):
    fun = lambda x, y: lax.dot(x, y, precision=preset)
    check_eager_jit_numpy(fun, [X, Y], X @ Y, tol=1e-6)
    assert f"precision={preset.name}" in jaxpr_text(fun, X, Y)
    grad = tracejit.grad(lambda x: fun(x, Y).sum())(X)
    np.testing.assert_allclose(grad, np.broadcast_to(Y.sum(1), X.shape), rtol=1e-6)
    bf16 = X.astype(lax.dtype(np.ones(1, "bfloat16")))
    assert lax.dot(bf16, bf16.T, precision=preset).dtype == bf16.dtype


@pytest.mark.parametrize(
    "precision",
    [
        lax.DotAlgorithmPreset.BF16_BF16_F32,
        lax.DotAlgorithmPreset.TF32_TF32_F32,
        lax.DotAlgorithmPreset.F64_F64_F64,
        lax.DotAlgorithm(np.float32, np.float32, np.float32),
    ],
)
def test_other_algorithms_are_refused_on_the_cpu(precision):
    with pytest.raises(ValueError, match="is not supported by dot_general on CPU"):
        lax.dot_general(X, Y, (((1,), (0,)), ((), ())), precision=precision)


def test_dot_algorithm_fields_default_as_jax():
    algorithm = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    assert algorithm.lhs_component_count == 1 and algorithm.num_primitive_operations == 1
    assert algorithm.allow_imprecise_accumulation is False
