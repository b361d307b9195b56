"""`lax.fft`: the four transforms over the last 1-3 axes against NumPy's pocketfft in
float64/complex128, JAX's dtypes in single precision (complex64 stays complex64), the jaxpr
JAX prints, jit against eager, vmap against a loop, derivatives to second order (the RFFT and
IRFFT transposes through the adjoint identity), and JAX's errors for bad input."""

import numpy as np
import pytest
from helpers import assert_close, check_vmap, jaxpr_text

import tracejit as jax
from tracejit import lax
from tracejit.test_util import check_grads

RNG = np.random.default_rng(0)


def _complex(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


def _numpy(x, fft_type, lengths):
    axes = tuple(range(-len(lengths), 0))
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=lengths, axes=axes)


def _operand(fft_type, lengths, batch=(2,)):
    """An operand of `fft_type` for `lengths`: real for RFFT, n // 2 + 1 last for IRFFT."""
    if fft_type == "RFFT":
        return RNG.normal(size=(*batch, *lengths))
    if fft_type == "IRFFT":
        return _complex(*batch, *lengths[:-1], lengths[-1] // 2 + 1)
    return _complex(*batch, *lengths)


CASES = [
    (fft_type, lengths)
    for fft_type in ("FFT", "IFFT", "RFFT", "IRFFT")
    for lengths in ((8,), (7,), (3, 4), (2, 3, 5), (1,))
]


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("fft_type,lengths", CASES)
def test_matches_numpy_in_double_precision(x64, fft_type, lengths):
    x = _operand(fft_type, lengths)
    out = lax.fft(x, fft_type, lengths)
    want_dtype = np.float64 if fft_type == "IRFFT" else np.complex128
    assert_close(out, _numpy(x, fft_type, lengths), 1e-12, dtype=want_dtype)
    assert_close(jax.jit(lambda v: lax.fft(v, fft_type, lengths))(x), out, 1e-12)


@pytest.mark.parametrize(
    "fft_type,dtype,want",
    [
        ("FFT", np.complex64, np.complex64),
        ("FFT", np.float32, np.complex64),
        ("FFT", np.int32, np.complex64),
        ("FFT", np.bool_, np.complex64),
        ("FFT", np.float16, np.complex64),
        ("IFFT", np.complex64, np.complex64),
        ("RFFT", np.float32, np.complex64),
        ("RFFT", np.int8, np.complex64),
        ("IRFFT", np.complex64, np.float32),
        ("IRFFT", np.float32, np.float32),
    ],
)
def test_single_precision_stays_single(fft_type, dtype, want):
    lengths = (3, 8) if fft_type != "IRFFT" else (3, 14)
    x = RNG.normal(size=(3, 8)).astype(dtype)
    out = lax.fft(x, fft_type, lengths)
    reference = _numpy(x.astype(np.complex128 if fft_type != "RFFT" else np.float64),
                       fft_type, lengths)  # fmt: skip
    assert_close(out, reference, 2e-5, dtype=want)
    assert not out.weak_type
    assert_close(jax.jit(lambda v: lax.fft(v, fft_type, lengths))(x), out, 2e-5, dtype=want)


def test_64_bit_integers_transform_in_double_precision(x64):
    assert lax.fft(np.arange(4), "FFT", (4,)).dtype == np.complex128
    assert lax.fft(np.arange(4, dtype=np.int32), "RFFT", (4,)).dtype == np.complex64


def test_jaxprs_print_as_jax_prints_them():
    x = np.ones(8, np.float32)
    assert jaxpr_text(lambda v: lax.fft(v, "RFFT", (8,)), x) == (
        "{ lambda ; a:f32[8]. let b:c64[5] = fft[fft_lengths=(8,) fft_type=2] a in (b,) }"
    )
    assert jaxpr_text(lambda v: lax.fft(v, lax.FftType.FFT, [8]), x) == (
        "{ lambda ; a:f32[8]. let\n"
        "    b:c64[8] = convert_element_type[new_dtype=complex64 weak_type=False] a\n"
        "    c:c64[8] = fft[fft_lengths=(8,) fft_type=0] b\n"
        "  in (c,) }"
    )


def test_fft_type_is_jaxs_int_enum():
    assert [(t.name, int(t)) for t in lax.FftType] == [
        ("FFT", 0), ("IFFT", 1), ("RFFT", 2), ("IRFFT", 3),
    ]  # fmt: skip
    x = _complex(4).astype(np.complex64)
    assert_close(lax.fft(x, "ifft", (4,)), lax.fft(x, lax.FftType.IFFT, (4,)), 0)


def test_no_lengths_is_the_converted_operand():
    out = lax.fft(np.arange(3.0, dtype=np.float32), "FFT", ())
    assert_close(out, np.arange(3.0), 0, dtype=np.complex64)


@pytest.mark.parametrize("fft_type,lengths", [c for c in CASES if c[1] != (1,)])
def test_derivatives_to_second_order(x64, fft_type, lengths):
    x = _operand(fft_type, lengths, batch=())
    check_grads(lambda v: lax.fft(v, fft_type, lengths), (x,), order=2)


@pytest.mark.parametrize("fft_type,lengths", [c for c in CASES if len(c[1]) < 3])
def test_vmap_matches_a_loop(fft_type, lengths):
    x = _operand(fft_type, lengths, batch=(3, 2)).astype(
        np.float32 if fft_type == "RFFT" else np.complex64
    )
    fun = lambda v: lax.fft(v, fft_type, lengths)
    check_vmap(fun, [x], (0,), tol=2e-5, jit=True)
    check_vmap(fun, [np.moveaxis(x, 1, 0)], (1,), tol=2e-5)


def test_empty_operands_give_empty_results():
    assert lax.fft(np.ones((0, 4), np.complex64), "FFT", (4,)).shape == (0, 4)
    assert lax.fft(np.ones((0,), np.complex64), "FFT", (0,)).shape == (0,)
    irfft = lax.fft(np.ones((1,), np.complex64), "IRFFT", (0,))
    assert irfft.shape == (0,) and irfft.dtype == np.float32


@pytest.mark.parametrize(
    "args,error,match",
    [
        ((np.ones(8, np.complex64), "RFFT", (8,)), ValueError, "only real valued inputs"),
        ((np.ones(8, np.float16), "RFFT", (8,)), ValueError, "float32 or float64, got float16"),
        ((np.ones(8, np.complex64), "FFT", (4,)), ValueError, "must be equal to fft_lengths"),
        ((np.ones(8, np.complex64), "IRFFT", (8,)), ValueError, "compatible with fft_lengths"),
        ((np.ones(8, np.complex64), "FFT", (8, 8)), ValueError, "at least as many input dim"),
        ((np.ones((2,) * 4, np.complex64), "FFT", (2,) * 4), ValueError, "1 to 3 entries"),
        ((np.ones(0, np.float32), "RFFT", (0,)), ValueError, "length 0"),
        ((np.ones(8, np.complex64), "XFFT", (8,)), ValueError, "Unknown FFT type 'XFFT'"),
        ((np.ones(8, np.complex64), 1, (8,)), TypeError, "Unknown FFT type value"),
        ((np.ones(8, np.complex64), "FFT", 8), TypeError, "sequence of integers"),
    ],
)
def test_bad_input_raises_jax_errors(args, error, match):
    with pytest.raises(error, match=match):
        lax.fft(*args)
    if not isinstance(args[2], int) and args[1] in ("FFT", "RFFT", "IRFFT"):
        with pytest.raises(error, match=match):
            jax.jit(lambda v: lax.fft(v, *args[1:]))(args[0])


def test_the_primitive_refuses_operands_it_was_not_converted_for():
    with pytest.raises(ValueError, match="FFT input must be complex64 or complex128"):
        jax.make_jaxpr(lambda v: lax.fft_p.bind(v, fft_type=lax.FftType.FFT, fft_lengths=(4,)))(
            np.ones(4, np.float32)
        )
