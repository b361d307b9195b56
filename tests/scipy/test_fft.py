"""`tracejit.scipy.fft`'s DCT-II and its inverse against SciPy in float64 and complex128
(every norm JAX has, n cropping and padding, any axis, the N-dimensional forms), JAX's dtypes
and errors (other types are not built, as in JAX), jit, vmap and second-order derivatives."""

import numpy as np
import pytest
import scipy.fft
from helpers import assert_close, check_vmap

import tracejit as jax
import tracejit.scipy.fft as jsp_fft
from tracejit.test_util import check_grads

RNG = np.random.default_rng(2)
X = RNG.normal(size=(3, 7, 8))


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("name", ["dct", "idct"])
@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
@pytest.mark.parametrize("n", [None, 5, 8, 11])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_axis_matches_scipy(x64, name, norm, n, axis):
    got = getattr(jsp_fft, name)(X, n=n, axis=axis, norm=norm)
    want = getattr(scipy.fft, name)(X, n=n, axis=axis, norm=norm)
    assert_close(got, want, 1e-12, dtype=np.float64)


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_complex_input_is_transformed_in_its_parts(x64, name):
    z = X + 1j * X[::-1]
    assert_close(getattr(jsp_fft, name)(z), getattr(scipy.fft, name)(z), 1e-12, dtype=np.complex128)


@pytest.mark.parametrize("name", ["dctn", "idctn"])
@pytest.mark.parametrize("s,axes", [(None, None), ((4, 5), None), (None, (0, 2)), ((9, 2), (1, 0))])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_n_dimensional_forms_match_scipy(x64, name, s, axes, norm):
    got = getattr(jsp_fft, name)(X, s=s, axes=axes, norm=norm)
    want = getattr(scipy.fft, name)(X, s=s, axes=axes, norm=norm)
    assert_close(got, want, 1e-12, dtype=np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_single_precision_results(dtype):
    x = (X * 3).astype(dtype)
    out = jsp_fft.dct(x, norm="ortho")
    assert_close(out, scipy.fft.dct(x.astype(np.float64), norm="ortho"), 2e-4, dtype=np.float32)
    back = jsp_fft.idct(out, norm="ortho")
    assert_close(back, x.astype(np.float64), 2e-4, dtype=np.float32)


def test_jit_vmap_and_derivatives(x64):
    fun = lambda v: jsp_fft.idctn(jsp_fft.dct(v, n=6, axis=0), norm="ortho")
    assert_close(jax.jit(fun)(X), fun(X), 1e-12)
    check_vmap(fun, [X], (2,), tol=1e-12, jit=True)
    check_grads(fun, (X[:, :3, :4],), order=2)
    check_grads(lambda v: jsp_fft.dct(v + 1j * v[::-1]), (X[0],), order=2)


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: jsp_fft.dct(X, type=3), NotImplementedError, "Only DCT type 2"),
        (lambda: jsp_fft.idctn(X, type=1), NotImplementedError, "Only DCT type 2"),
        (lambda: jsp_fft.dct(X, norm="forward"), ValueError, "norm='forward' is not"),
        (lambda: jsp_fft.dct(X, n=0), ValueError, "invalid number of data points"),
        (lambda: jsp_fft.dct(X, axis=3), ValueError, "out of bounds"),
        (lambda: jsp_fft.dct([1.0, 2.0]), TypeError, "requires ndarray or scalar"),
        (lambda: jsp_fft.dctn(X, s=(4,), axes=(0, 1)), ValueError, "differ in length"),
    ],
)
def test_bad_input_raises_jax_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
