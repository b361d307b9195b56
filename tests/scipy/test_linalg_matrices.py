"""`tracejit.scipy.linalg`'s special matrices against SciPy's: values, JAX's dtypes (which
differ from SciPy's where JAX's do: `pascal` is float32, `invpascal` float64), batches over
leading axes, jit, and JAX's errors."""

import numpy as np
import pytest
import scipy.linalg

import tracejit as jax
import tracejit.scipy.linalg as jsl

RNG = np.random.default_rng(4)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


POLY = np.array([1.0, -16, 86, -176, 105])

# (name, arguments, JAX's dtype or None for SciPy's)
CASES = [
    ("block_diag", (np.ones((2, 2)), np.arange(3).reshape(1, 3), 5.0), None),
    ("block_diag", (np.ones(3),), None),
    ("block_diag", (), None),
    ("circulant", (np.arange(4),), None),
    ("companion", (POLY,), None),
    ("companion", (np.arange(1, 5),), np.float64),
    ("convolution_matrix", (np.arange(1, 4), 5), None),
    ("convolution_matrix", (np.arange(1.0, 6), 3, "same"), None),
    ("convolution_matrix", (np.arange(1.0, 4), 5, "valid"), None),
    ("dft", (5,), None),
    ("dft", (4, "sqrtn"), None),
    ("dft", (4, "n"), None),
    ("fiedler", (np.array([1, 4, 12, 45]),), None),
    ("fiedler_companion", (POLY,), None),
    ("fiedler_companion", (np.arange(1.0, 8),), None),
    ("fiedler_companion", (np.array([2.0, 3]),), None),
    ("hadamard", (8,), None),
    ("hadamard", (4, float), None),
    ("hankel", (np.arange(3), np.arange(4)), None),
    ("hankel", (np.arange(3.0),), None),
    ("helmert", (5,), None),
    ("helmert", (5, True), None),
    ("hilbert", (4,), None),
    ("invhilbert", (4,), None),
    ("invhilbert", (14,), None),
    ("invpascal", (5,), np.float64),
    ("invpascal", (5, "lower"), np.float64),
    ("invpascal", (5, "upper"), np.float64),
    ("pascal", (5,), np.float32),
    ("pascal", (5, "lower"), np.float32),
    ("pascal", (5, "upper"), np.float32),
    ("leslie", (np.array([0.1, 2, 1, 0.1]), np.array([0.2, 0.8, 0.7])), None),
    ("leslie", (np.array([1, 2, 1]), np.array([1, 1])), None),
    ("toeplitz", (np.arange(3), np.arange(4)), None),
    ("toeplitz", (np.arange(3) + 1j,), None),
]


@pytest.mark.parametrize("name, args, dtype", CASES, ids=lambda x: str(x)[:20])
def test_special_matrix_matches_scipy(name, args, dtype):
    got = getattr(jsl, name)(*args)
    want = np.asarray(getattr(scipy.linalg, name)(*args))
    assert got.dtype == (want.dtype if dtype is None else dtype)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize(
    "name, args",
    [
        ("circulant", (RNG.normal(size=(2, 4)),)),
        ("companion", (RNG.normal(size=(2, 4)),)),
        ("fiedler", (RNG.normal(size=(2, 4)),)),
        ("fiedler_companion", (RNG.normal(size=(2, 5)),)),
        ("hankel", (RNG.normal(size=(2, 3)), RNG.normal(size=(2, 4)))),
        ("toeplitz", (RNG.normal(size=(2, 3)), RNG.normal(size=(2, 4)))),
        ("leslie", (RNG.normal(size=(2, 4)), RNG.normal(size=(2, 3)))),
        ("convolution_matrix", (RNG.normal(size=(2, 3)), 4)),
    ],
)
def test_special_matrices_batch_over_leading_axes_and_jit(name, args):
    fun = getattr(jsl, name)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    static = args[len(arrays) :]
    got = jax.jit(lambda *xs: fun(*xs, *static))(*arrays)
    for i in range(2):
        want = getattr(scipy.linalg, name)(*[a[i] for a in arrays], *static)
        np.testing.assert_allclose(got[i], want, rtol=1e-12)


def test_special_matrix_errors():
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        jsl.block_diag(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="at least 2"):
        jsl.companion(np.ones(1))
    with pytest.raises(ValueError, match="mode must be one of"):
        jsl.convolution_matrix(np.ones(3), 5, "x")
    with pytest.raises(ValueError, match="scale must be None"):
        jsl.dft(4, "x")
    with pytest.raises(ValueError, match="positive power of 2"):
        jsl.hadamard(3)
    with pytest.raises(ValueError, match="Expected kind to be one of"):
        jsl.pascal(3, "x")
    with pytest.raises(ValueError, match="Incorrect lengths for f and s"):
        jsl.leslie(np.ones(3), np.ones(3))
    assert jsl.fiedler_companion(np.ones(1)).shape == (0, 0)
    assert jsl.dft(4, dtype=np.complex64).dtype == np.complex64
