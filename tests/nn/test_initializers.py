"""tracejit.nn.initializers against values recorded from JAX 0.10.2
(`tests/random/make_reference.py`), eagerly and under `jit`."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tracejit
from tracejit import random
from tracejit.nn import initializers

_spec = importlib.util.spec_from_file_location(
    "random_reference", pathlib.Path(__file__).parents[1] / "random" / "make_reference.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
DATA = dict(np.load(reference.DATA))


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", reference.INIT_CASES)
def test_initializer_matches_jax(name, jitted):
    fun = reference.INIT_CASES[name]
    init = lambda key: fun(initializers, key)
    if jitted:
        init = tracejit.jit(init)
    actual = np.stack([np.asarray(init(random.PRNGKey(s))) for s in reference.SEEDS])
    expected = DATA[f"init/{name}"]
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    real = np.finfo(expected.dtype).dtype
    actual, expected = (x.view(real).astype(np.float64) for x in (actual, expected))
    # within 4 eps of max(|x|, 1) compiled, as the distributions they draw from
    # (test_random.py); eagerly 8: NumPy's erf_inv is a few ulp from XLA's in the tails
    # (orthogonal matrices: 32, LAPACK's QR in tracejit and XLA's in JAX round differently)
    eps = (32 if "orthogonal" in name else 4 if jitted else 8) * np.finfo(real).eps
    bound = eps * np.maximum(np.abs(expected), 1.0)
    assert np.all(np.abs(actual - expected) <= bound)


def test_initializers_are_initializers():
    assert isinstance(initializers.zeros, initializers.Initializer)
    assert isinstance(initializers.glorot_normal(), initializers.Initializer)


@pytest.mark.parametrize(
    "make, shape, error, match",
    [
        (lambda: initializers.glorot_normal(), (3,), ValueError, "Can't compute input"),
        (lambda: initializers.variance_scaling(1.0, "x", "normal"), (2, 2), ValueError, "mode"),
        (lambda: initializers.variance_scaling(1.0, "fan_in", "x"), (2, 2), ValueError, "distr"),
    ],
)
def test_bad_arguments_raise_as_jax(make, shape, error, match):
    with pytest.raises(error, match=match):
        make()(random.PRNGKey(0), shape)


def test_he_normal_has_its_variance():
    values = np.asarray(initializers.he_normal()(random.PRNGKey(1), (400, 300)))
    np.testing.assert_allclose(values.var(), 2.0 / 400, rtol=0.03)
