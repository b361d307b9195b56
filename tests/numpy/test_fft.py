"""`jnp.fft` against NumPy in float64/complex128 (every transform, n/s cropping and padding,
axes in any order, more than three axes, every norm), JAX's dtypes in single precision,
frequencies and shifts, jit against eager, vmap against a loop, derivatives to second order,
and JAX's recorded derivatives of the real transforms
(`make_jax_reference_fft.py`); JAX's errors for bad input."""

import importlib.util
import json
import pathlib
import warnings

import numpy as np
import pytest
from helpers import assert_close, check_vmap, jaxpr_text

import tracejit as jax
import tracejit.numpy as jnp
from tracejit.test_util import check_grads

RNG = np.random.default_rng(1)
X = RNG.normal(size=(2, 3, 4, 5))
Z = X + 1j * RNG.normal(size=X.shape)
NORMS = [None, "backward", "ortho", "forward"]

_HERE = pathlib.Path(__file__).parent
_spec = importlib.util.spec_from_file_location("fft_reference", _HERE / "make_jax_reference_fft.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
RECORDED = json.loads((_HERE / "data" / "jax_reference_fft.json").read_text())


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


def _input(name):
    return X if name in ("rfft", "ihfft", "rfft2", "rfftn") else Z


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("n", [None, 3, 8])
@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("norm", NORMS)
def test_one_dimensional_transforms_match_numpy(x64, name, n, axis, norm):
    got = getattr(jnp.fft, name)(_input(name), n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(_input(name), n=n, axis=axis, norm=norm)
    assert_close(got, want, 1e-12, dtype=want.dtype)


ND = [
    (None, None),
    ((3, 6), None),
    (None, (0, 2)),
    ((3, 4, 6), (2, 0, 1)),
    ((2, 3, 4, 6), None),  # four axes: two calls of the primitive
    (None, (3, 1, 0, 2)),
]


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("s,axes", ND)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_n_dimensional_transforms_match_numpy(x64, name, s, axes, norm):
    with warnings.catch_warnings():  # (NumPy deprecates s without axes)
        warnings.simplefilter("ignore", DeprecationWarning)
        want = getattr(np.fft, name)(_input(name), s=s, axes=axes, norm=norm)
    got = getattr(jnp.fft, name)(_input(name), s=s, axes=axes, norm=norm)
    assert_close(got, want, 1e-12, dtype=want.dtype)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("s,axes", [(None, (-2, -1)), ((3, 6), (-2, -1)), (None, (2, 0))])
def test_two_dimensional_transforms_match_numpy(x64, name, s, axes):
    got = getattr(jnp.fft, name)(_input(name), s=s, axes=axes, norm="ortho")
    want = getattr(np.fft, name)(_input(name), s=s, axes=axes, norm="ortho")
    assert_close(got, want, 1e-12, dtype=want.dtype)


@pytest.mark.parametrize(
    "name,dtype,want",
    [
        ("fft", np.float32, np.complex64),
        ("fft", np.int32, np.complex64),
        ("fft", np.complex64, np.complex64),
        ("ifft", np.bool_, np.complex64),
        ("rfft", np.float32, np.complex64),
        ("rfft", np.uint8, np.complex64),
        ("irfft", np.float32, np.float32),
        ("irfft", np.float16, np.float32),
        ("hfft", np.complex64, np.float32),
        ("ihfft", np.int32, np.complex64),
        ("fftn", np.float64, np.complex64),  # (float64 becomes float32 without x64)
        ("irfftn", np.complex64, np.float32),
    ],
)
def test_single_precision_results_as_jax(name, dtype, want):
    x = (RNG.normal(size=(3, 6)) * 4).astype(dtype)
    out = getattr(jnp.fft, name)(x)
    wide = x.astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    assert_close(out, getattr(np.fft, name)(wide), 1e-4, dtype=want)
    assert not out.weak_type


def test_jit_matches_eager_and_vmap_a_loop():
    x = X.astype(np.float32)
    for fun in (
        lambda v: jnp.fft.rfftn(v, axes=(0, 2)),
        lambda v: jnp.fft.irfft(jnp.fft.rfft(v, n=6), n=6, norm="ortho"),
        lambda v: jnp.fft.fftshift(jnp.fft.fft2(v)),
    ):
        assert_close(jax.jit(fun)(x), fun(x), 2e-5)
        check_vmap(fun, [x], (1,), tol=2e-5, jit=True)


@pytest.mark.parametrize(
    "fun",
    [
        lambda v: jnp.fft.rfft(v, n=6, norm="ortho"),
        lambda v: jnp.fft.irfft(jnp.fft.fft(v), n=7),
        lambda v: jnp.fft.hfft(v + 0.5j * v[::-1], norm="forward"),
        lambda v: jnp.fft.ihfft(v, n=9),
        lambda v: jnp.fft.rfftn(v, s=(3, 4)),
        lambda v: jnp.fft.irfftn(v * (1 + 1j), axes=(0, 1)),
        lambda v: jnp.fft.ifftn(v, axes=(1, 0)),
    ],
)
def test_derivatives_to_second_order(x64, fun):
    check_grads(fun, (RNG.normal(size=(3, 8)),), order=2)


@pytest.mark.parametrize("name", sorted(reference.CASES))
def test_matches_jax_recorded(x64, name):
    got = reference.outcome(reference.CASES[name], jax)
    want = RECORDED[name]
    assert got.keys() == want.keys(), (name, got, want)
    if "values" in want:
        assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"]), name
        np.testing.assert_allclose(got["values"], want["values"], rtol=1e-9, atol=1e-12)
    else:
        assert got == want


def test_every_recorded_case_is_tested():
    assert set(RECORDED) == set(reference.CASES)


@pytest.mark.parametrize("n", [1, 4, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.3])
def test_frequencies_match_numpy(n, d):
    assert_close(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), 1e-6, dtype=np.float32)
    assert_close(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), 1e-6, dtype=np.float32)


def test_frequency_dtypes_and_spacings():
    assert jnp.fft.fftfreq(4, dtype=jnp.float16).dtype == np.float16
    assert jnp.fft.rfftfreq(4, dtype=jnp.complex64).dtype == np.complex64
    spacings = np.array([[1.0], [2.0]], np.float32)
    assert_close(jnp.fft.fftfreq(4, spacings), np.fft.fftfreq(4) / spacings, 1e-6)
    assert jnp.fft.fftfreq(0).shape == (0,)
    assert jnp.fft.fftfreq(5, device=jax.devices()[0]).shape == (5,)


@pytest.mark.parametrize("axes", [None, 0, (1,), (0, 2), ()])
def test_shifts_match_numpy(axes):
    assert_close(jnp.fft.fftshift(X, axes), np.fft.fftshift(X, axes), 0, dtype=np.float32)
    assert_close(jnp.fft.ifftshift(X, axes), np.fft.ifftshift(X, axes), 0, dtype=np.float32)
    assert jnp.fft.fftshift(3.0).weak_type


def test_printed_jaxpr_crops_then_transforms():
    assert jaxpr_text(lambda v: jnp.fft.rfft(v, n=6), np.ones(8, np.float32)) == (
        "{ lambda ; a:f32[8]. let\n"
        "    b:f32[6] = slice[limit_indices=(6,) start_indices=(0,) strides=None] a\n"
        "    c:c64[4] = fft[fft_lengths=(6,) fft_type=2] b\n"
        "  in (c,) }"
    )


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: jnp.fft.rfft(Z), ValueError, "only real valued inputs supported for rfft"),
        (lambda: jnp.fft.rfft(np.ones(4, np.float16)), ValueError, "float32 or float64"),
        (lambda: jnp.fft.fft(X, n=0), ValueError, "Shape should be positive"),
        (lambda: jnp.fft.fft(X, n=4.0), TypeError, "integer"),
        (lambda: jnp.fft.fft(X, axis=4), ValueError, "out of bounds"),
        (lambda: jnp.fft.fft(np.float32(1)), ValueError, "out of bounds"),
        (lambda: jnp.fft.fft(X, norm="Ortho"), ValueError, "Invalid norm value Ortho"),
        (lambda: jnp.fft.fft([1.0, 2.0]), TypeError, "requires ndarray or scalar"),
        (lambda: jnp.fft.fftn(X, axes=(1, 1)), ValueError, "does not support repeated axes"),
        (lambda: jnp.fft.fftn(X, axes=(3, -1)), TypeError, "name an axis twice"),
        (lambda: jnp.fft.fftn(X, s=(4,), axes=(0, 1)), ValueError, "different lengths"),
        (lambda: jnp.fft.fftn(X[0, 0], s=(2, 3, 4)), ValueError, "at least as many input"),
        (lambda: jnp.fft.fft2(X, axes=(0,)), ValueError, "only supports 2 axes"),
        (lambda: jnp.fft.fftfreq(4, np.ones(3)), TypeError, "does not broadcast"),
        (lambda: jnp.fft.fftshift([1, 2]), TypeError, "requires ndarray or scalar"),
    ],
)
def test_bad_input_raises_jax_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
