"""Comparisons the fuzz properties share: results against NumPy within a dtype's tolerance,
and the exception classes allowed to leave the public API."""

import traceback

import ml_dtypes
import numpy as np

import tracejit.errors

F32 = np.dtype(np.float32)
C64 = np.dtype(np.complex64)

# What JAX lets leave its API for bad input; `FORBIDDEN` are never an answer, even when they
# subclass an allowed class (KeyError and IndexError are both LookupErrors, but only IndexError
# is JAX's).
ALLOWED = (
    TypeError,
    ValueError,
    IndexError,
    OverflowError,
    NameError,
    FloatingPointError,
    NotImplementedError,
    tracejit.errors.JaxRuntimeError,
    tracejit.errors.JAXTypeError,
    tracejit.errors.JAXIndexError,
)
FORBIDDEN = (AttributeError, KeyError, AssertionError, UnboundLocalError, RecursionError)


def check_allowed_exception(error: BaseException, call: str) -> None:
    """Fails, printing the call, if `error` is not one JAX could raise there."""
    forbidden = isinstance(error, FORBIDDEN) or not isinstance(error, ALLOWED)
    where = "".join(traceback.format_exception(error)[-4:]) if forbidden else ""
    assert not forbidden, f"{call} raised {type(error).__name__}: {error}\n{where}"
    assert str(error), f"{call} raised {type(error).__name__} with no message"


def reference_input(x: np.ndarray, promote_to_float: bool) -> np.ndarray:
    """What NumPy computes the reference on: low-precision floats in float32 (JAX's results are
    rounded from there), and integers and bools in float32 where JAX promotes them."""
    if x.dtype in (np.float16, ml_dtypes.bfloat16):
        return x.astype(F32)
    if promote_to_float and x.dtype.kind in "biu":
        return x.astype(F32)
    return x


def expected_dtype(rule: str | None, dtype: np.dtype):
    if rule == "same":
        return dtype
    if rule == "bool":
        return np.dtype(bool)
    if rule == "float":
        return F32 if dtype.kind in "biu" else dtype
    if rule == "real":
        return F32 if dtype == C64 else dtype
    return None


def tolerance(dtype: np.dtype) -> float:
    return {np.dtype(np.float16): 1e-2, np.dtype(ml_dtypes.bfloat16): 4e-2}.get(
        np.dtype(dtype), 2e-5 if np.dtype(dtype).kind in "fc" else 0
    )


def assert_close(got, want, dtype, call: str, expect_dtype=None) -> None:
    """`got` (a tracejit result) has `want`'s shape, `expect_dtype` where given, and its values
    within the tolerance of `dtype` (exact for integers and bools)."""
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, f"{call}: shape {got_np.shape}, NumPy {want.shape}"
    if expect_dtype is not None:
        assert got_np.dtype == expect_dtype, f"{call}: dtype {got_np.dtype}, want {expect_dtype}"
    tol = max(tolerance(dtype), tolerance(got_np.dtype))
    if got_np.dtype.kind in "biu" and want.dtype.kind in "biu":
        np.testing.assert_array_equal(got_np, want, err_msg=call)
        return
    # Complex values part by part: NumPy compares complex infinities exactly.
    got_c, want_c = got_np.astype(np.complex128), want.astype(np.complex128)
    for part in ("real", "imag"):
        np.testing.assert_allclose(
            getattr(got_c, part),
            getattr(want_c, part),
            rtol=tol,
            atol=tol,
            equal_nan=True,
            err_msg=f"{call} ({part} part)",
        )
