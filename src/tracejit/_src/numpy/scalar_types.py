"""`jnp.float32` and friends: dtype specifiers that are also constructors, plus dtype queries.

`jnp.float32` can stand wherever a dtype can (`np.dtype(jnp.float32)`, `x.astype(jnp.float32)`,
`jnp.zeros(3, jnp.float32)`), and calling it makes an Array: `jnp.float32(3)` is
`jnp.asarray(3, dtype=jnp.float32)`, a strongly typed float32 scalar. It compares and hashes
equal to NumPy's `np.float32`, and `isinstance(v, jnp.float32)` asks whether `v` is a NumPy
float32 scalar, as in JAX.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.numpy import creation


class _ScalarMeta(type):
    """The metaclass of jnp's scalar types: a `dtype` attribute, and calls make Arrays."""

    dtype: np.dtype

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not _ScalarMeta.__eq__(cls, other)

    def __call__(cls, x):
        return creation.asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'tracejit.numpy.{cls.__name__}'>"


def _scalar_type(name: str, scalar_type) -> type:
    return _ScalarMeta(
        name, (object,), {"dtype": np.dtype(scalar_type), "__module__": "tracejit.numpy"}
    )


bool_ = _scalar_type("bool_", np.bool_)
int8 = _scalar_type("int8", np.int8)
int16 = _scalar_type("int16", np.int16)
int32 = _scalar_type("int32", np.int32)
int64 = _scalar_type("int64", np.int64)
uint8 = _scalar_type("uint8", np.uint8)
uint16 = _scalar_type("uint16", np.uint16)
uint32 = _scalar_type("uint32", np.uint32)
uint64 = _scalar_type("uint64", np.uint64)
float16 = _scalar_type("float16", np.float16)
float32 = _scalar_type("float32", np.float32)
float64 = _scalar_type("float64", np.float64)
bfloat16 = _scalar_type("bfloat16", dtypes.bfloat16)
complex64 = _scalar_type("complex64", np.complex64)
complex128 = _scalar_type("complex128", np.complex128)
int4 = _scalar_type("int4", dtypes.int4)
uint4 = _scalar_type("uint4", dtypes.uint4)
float8_e4m3fn = _scalar_type("float8_e4m3fn", dtypes.float8_e4m3fn)
float8_e4m3fnuz = _scalar_type("float8_e4m3fnuz", dtypes.float8_e4m3fnuz)
float8_e4m3b11fnuz = _scalar_type("float8_e4m3b11fnuz", dtypes.float8_e4m3b11fnuz)
float8_e5m2 = _scalar_type("float8_e5m2", dtypes.float8_e5m2)
float8_e5m2fnuz = _scalar_type("float8_e5m2fnuz", dtypes.float8_e5m2fnuz)
float8_e3m4 = _scalar_type("float8_e3m4", dtypes.float8_e3m4)
float8_e4m3 = _scalar_type("float8_e4m3", dtypes.float8_e4m3)
float8_e8m0fnu = _scalar_type("float8_e8m0fnu", dtypes.float8_e8m0fnu)
float6_e2m3fn = _scalar_type("float6_e2m3fn", dtypes.float6_e2m3fn)
float6_e3m2fn = _scalar_type("float6_e3m2fn", dtypes.float6_e3m2fn)
float4_e2m1fn = _scalar_type("float4_e2m1fn", dtypes.float4_e2m1fn)
int2 = _scalar_type("int2", dtypes.int2)
uint2 = _scalar_type("uint2", dtypes.uint2)
# ml_dtypes has 1-bit integers since 0.5.1 only: as in JAX, the names exist where it has them.
if dtypes.int1 is not None:
    int1 = _scalar_type("int1", dtypes.int1)
if dtypes.uint1 is not None:
    uint1 = _scalar_type("uint1", dtypes.uint1)

# NumPy's platform names: 64-bit types, which become 32-bit ones unless x64 is enabled.
int_ = _scalar_type("int_", np.int64)
uint = _scalar_type("uint", np.uint64)
float_ = _scalar_type("float_", np.float64)
complex_ = _scalar_type("complex_", np.complex128)
single, double = float32, float64
csingle, cdouble = complex64, complex128

# Abstract categories, for issubdtype.
generic = np.generic
number = np.number
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
bool = bool_
# NumPy's own, as JAX re-exports them: the abstract types of strings and bytes, and objects.
character = np.character
flexible = np.flexible
object_ = np.object_
ComplexWarning = np.exceptions.ComplexWarning

dtype = np.dtype
promote_types = dtypes.promote_types
result_type = dtypes.result_type
finfo = dtypes.finfo
iinfo = dtypes.iinfo


def issubdtype(arg1, arg2) -> bool:
    """`jnp.issubdtype` (`jax.dtypes.issubdtype` under NumPy's parameter names)."""
    return dtypes.issubdtype(arg1, arg2)


def can_cast(from_, to, casting="safe"):
    """NumPy's `can_cast` between dtypes (values are judged by their dtype)."""
    if hasattr(from_, "dtype") and not isinstance(from_, type):
        from_ = from_.dtype
    return np.can_cast(np.dtype(from_), np.dtype(to), casting=casting)


def isdtype(dtype, kind) -> bool:
    """The array API's dtype-kind test: kind is a dtype or one of 'bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric', or a
    tuple of those."""
    d = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if (
                (k == "bool" and d == np.bool_)
                or (k == "signed integer" and dtypes.is_int(d) and not dtypes.is_unsigned(d))
                or (k == "unsigned integer" and dtypes.is_unsigned(d))
                or (k == "integral" and dtypes.is_int(d))
                or (k == "real floating" and dtypes.is_float(d))
                or (k == "complex floating" and dtypes.is_complex(d))
                or (k == "numeric" and d != np.bool_)
            ):
                return True
        elif np.dtype(k) == d:
            return True
    return False
