"""lax.composite (`lax/composite.py`): one named `composite` equation holding its
decomposition's jaxpr, as JAX prints it; evaluated, compiled and batched as the decomposition;
not differentiable, as in JAX; closure constants become operands."""

import numpy as np
import pytest
from helpers import check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit
import tracejit.numpy as jnp
from tracejit import lax

scale = lax.composite(lambda x, *, factor: x * factor, name="my.scale")


def test_one_named_equation_with_attributes():
    assert jaxpr_text(lambda x: scale(x, factor=2.0), np.float32(1)) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = composite[\n      name=my.scale\n"
        "      attributes=(('factor', 2.0),)\n"
        "      jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }\n"
        "      version=0\n    ] a\n  in (b,) }"
    )


def test_values_eager_jit_and_vmap():
    x = np.arange(4.0, dtype=np.float32)
    check_eager_jit_numpy(lambda v: scale(v, factor=3.0), [x], 3 * x)
    check_vmap(lambda v: scale(v, factor=3.0), [x.reshape(2, 2)], [1])
    tanh = lax.composite(lambda v: {"t": jnp.tanh(v)}, name="my.tanh", version=2)
    check_eager_jit_numpy(tanh, [x], {"t": np.tanh(x)}, tol=1e-6)


def test_closure_constants_are_operands():
    offset = np.float32(5)

    @tracejit.jit
    def fun(x, y):
        shifted = lax.composite(lambda v: v + y, name="my.shift")
        return shifted(x)

    np.testing.assert_allclose(fun(np.float32(1), offset), 6.0)


def test_not_differentiable_as_in_jax():
    with pytest.raises(NotImplementedError, match="composite"):
        tracejit.grad(lambda x: scale(x, factor=2.0))(1.0)
