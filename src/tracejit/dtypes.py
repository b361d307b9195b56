"""`tracejit.dtypes`: JAX's dtype utilities (`jax.dtypes`): the extra dtypes, canonicalization
under the x64 switch, JAX's promotion lattice with weak types, and `float0`, the dtype of the
tangents of integer and boolean values."""

import numpy as np

from tracejit._src.dtypes import (  # noqa: F401
    TypePromotionError,
    bfloat16,
    canonicalize_dtype,
    extended,
    finfo,
    float0,
    iinfo,
    issubdtype,
    prng_key,
    result_type,
)


def scalar_type_of(x) -> type:
    """The Python scalar type (bool, int, float, complex) whose values `x`'s dtype holds."""
    dtype = np.dtype(result_type(x))
    if dtype == np.bool_:
        return bool
    if issubdtype(dtype, np.integer):
        return int
    if issubdtype(dtype, np.floating):
        return float
    if issubdtype(dtype, np.complexfloating):
        return complex
    raise TypeError(f"Invalid scalar value {x!r}")


def itemsize_bits(dtype) -> int:
    """The size of one element of `dtype` in bits: 4 for int4, 8 for bool (as JAX counts)."""
    dtype = np.dtype(dtype)
    bits = getattr(iinfo(dtype), "bits", None) if issubdtype(dtype, np.integer) else None
    return int(bits) if bits else dtype.itemsize * 8
