"""Dtypes and type promotion, checked against tables generated once from reference JAX 0.10.2.

The tables below were produced by running `jnp.promote_types` / `jax.dtypes.result_type` in the
reference installation with x64 off and on, then pasted here; nothing here imports JAX. Results are
written with the jaxpr printer's short names, and a trailing `*` means the weak-type flag is set.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import dtypes
from tracejit._src.config import config

# Every dtype in the promotion lattice, NumPy name -> the short name JAX prints.
LATTICE = {
    "bool": "bool",
    "uint1": "u1",
    "uint2": "u2",
    "uint4": "u4",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "int1": "i1",
    "int2": "i2",
    "int4": "i4",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "float4_e2m1fn": "f4_e2m1fn",
    "float6_e2m3fn": "f6_e2m3fn",
    "float6_e3m2fn": "f6_e3m2fn",
    "float8_e3m4": "f8_e3m4",
    "float8_e4m3": "f8_e4m3",
    "float8_e8m0fnu": "f8_e8m0fnu",
    "float8_e4m3b11fnuz": "f8_e4m3b11fnuz",
    "float8_e4m3fn": "f8_e4m3fn",
    "float8_e4m3fnuz": "f8_e4m3fnuz",
    "float8_e5m2": "f8_e5m2",
    "float8_e5m2fnuz": "f8_e5m2fnuz",
    "bfloat16": "bf16",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
}
# Older ml_dtypes releases lack some of the exotic types; the tables skip those.
AVAILABLE = {
    name: short for name, short in LATTICE.items() if hasattr(ml_dtypes, name) or hasattr(np, name)
}
BY_SHORT = {short: np.dtype(name) for name, short in AVAILABLE.items()}
STANDARD = [
    *("bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"),
    *("bf16", "f16", "f32", "f64", "c64", "c128"),
]


class WeakValue:
    """Stands in for a weakly typed array: all `result_type` looks at is dtype and weak_type."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.weak_type = True


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    old = config.enable_x64
    config.update("jax_enable_x64", request.param)
    yield request.param
    config.update("jax_enable_x64", old)


@pytest.fixture
def x32_only():
    old = config.enable_x64
    config.update("jax_enable_x64", False)
    yield
    config.update("jax_enable_x64", old)


def parse_grid(text):
    """A table whose first line names the columns and whose rows start with their own name."""
    header, *rows = text.strip().splitlines()
    columns = header.split()
    table = {}
    for row in rows:
        row_name, *cells = row.split()
        assert len(cells) == len(columns)
        for column, cell in zip(columns, cells):
            table[(row_name, column)] = cell
    return table


def show(result):
    """(dtype, weak) -> 'f32' / 'f32*', the notation the tables use."""
    dtype, weak = result
    return dtypes.short_dtype_name(dtype) + ("*" if weak else "")


def show_result_type(*args):
    try:
        return show(dtypes.result_type(*args, return_weak_type_flag=True))
    except dtypes.TypePromotionError:
        return "-"


# ---------------------------------------------------------------------------------------------
# jnp.promote_types over the standard dtypes: no canonicalisation of the answer, but the lattice
# itself differs with x64 (uint32 meets signed ints at int32 when x64 is off).

PROMOTE_X32 = """
       bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
bool   bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
u8       u8   u8  u16  u32  u64  i16  i16  i32  i64 bf16  f16  f32  f64  c64 c128
u16     u16  u16  u16  u32  u64  i32  i32  i32  i64 bf16  f16  f32  f64  c64 c128
u32     u32  u32  u32  u32  u64  i32  i32  i32  i64 bf16  f16  f32  f64  c64 c128
u64     u64  u64  u64  u64  u64  f64  f64  f64  f64 bf16  f16  f32  f64  c64 c128
i8       i8  i16  i32  i32  f64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
i16     i16  i16  i32  i32  f64  i16  i16  i32  i64 bf16  f16  f32  f64  c64 c128
i32     i32  i32  i32  i32  f64  i32  i32  i32  i64 bf16  f16  f32  f64  c64 c128
i64     i64  i64  i64  i64  f64  i64  i64  i64  i64 bf16  f16  f32  f64  c64 c128
bf16   bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16  f32  f32  f64  c64 c128
f16     f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f16  f32  f64  c64 c128
f32     f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64 c128
f64     f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64 c128 c128
c64     c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64 c128  c64 c128
c128   c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
"""

PROMOTE_X64 = """
       bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
bool   bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
u8       u8   u8  u16  u32  u64  i16  i16  i32  i64 bf16  f16  f32  f64  c64 c128
u16     u16  u16  u16  u32  u64  i32  i32  i32  i64 bf16  f16  f32  f64  c64 c128
u32     u32  u32  u32  u32  u64  i64  i64  i64  i64 bf16  f16  f32  f64  c64 c128
u64     u64  u64  u64  u64  u64  f64  f64  f64  f64 bf16  f16  f32  f64  c64 c128
i8       i8  i16  i32  i64  f64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
i16     i16  i16  i32  i64  f64  i16  i16  i32  i64 bf16  f16  f32  f64  c64 c128
i32     i32  i32  i32  i64  f64  i32  i32  i32  i64 bf16  f16  f32  f64  c64 c128
i64     i64  i64  i64  i64  f64  i64  i64  i64  i64 bf16  f16  f32  f64  c64 c128
bf16   bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16  f32  f32  f64  c64 c128
f16     f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f16  f32  f64  c64 c128
f32     f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64 c128
f64     f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64 c128 c128
c64     c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64 c128  c64 c128
c128   c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
"""

RESULT_STRONG_STRONG_X32 = """
       bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
bool   bool   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
u8       u8   u8  u16  u32  u32  i16  i16  i32  i32 bf16  f16  f32  f32  c64  c64
u16     u16  u16  u16  u32  u32  i32  i32  i32  i32 bf16  f16  f32  f32  c64  c64
u32     u32  u32  u32  u32  u32  i32  i32  i32  i32 bf16  f16  f32  f32  c64  c64
u64     u32  u32  u32  u32  u32  i32  i32  i32  i32 bf16  f16  f32  f32  c64  c64
i8       i8  i16  i32  i32  i32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
i16     i16  i16  i32  i32  i32  i16  i16  i32  i32 bf16  f16  f32  f32  c64  c64
i32     i32  i32  i32  i32  i32  i32  i32  i32  i32 bf16  f16  f32  f32  c64  c64
i64     i32  i32  i32  i32  i32  i32  i32  i32  i32 bf16  f16  f32  f32  c64  c64
bf16   bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16  f32  f32  f32  c64  c64
f16     f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f16  f32  f32  c64  c64
f32     f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  c64  c64
f64     f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  c64  c64
c64     c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64
c128    c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64
"""

RESULT_STRONG_STRONG_X64 = """
       bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
bool   bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
u8       u8   u8  u16  u32  u64  i16  i16  i32  i64 bf16  f16  f32  f64  c64 c128
u16     u16  u16  u16  u32  u64  i32  i32  i32  i64 bf16  f16  f32  f64  c64 c128
u32     u32  u32  u32  u32  u64  i64  i64  i64  i64 bf16  f16  f32  f64  c64 c128
u64     u64  u64  u64  u64  u64 f64* f64* f64* f64* bf16  f16  f32  f64  c64 c128
i8       i8  i16  i32  i64 f64*   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
i16     i16  i16  i32  i64 f64*  i16  i16  i32  i64 bf16  f16  f32  f64  c64 c128
i32     i32  i32  i32  i64 f64*  i32  i32  i32  i64 bf16  f16  f32  f64  c64 c128
i64     i64  i64  i64  i64 f64*  i64  i64  i64  i64 bf16  f16  f32  f64  c64 c128
bf16   bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16  f32  f32  f64  c64 c128
f16     f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f16  f32  f64  c64 c128
f32     f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64 c128
f64     f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64 c128 c128
c64     c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64 c128  c64 c128
c128   c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
"""

RESULT_WEAK_STRONG_X32 = """
       bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
bool   bool   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
u8     i32*   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
u16    i32*   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
u32    i32*   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
u64    i32*   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
i8     i32*   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
i16    i32*   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
i32    i32*   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
i64    i32*   u8  u16  u32  u32   i8  i16  i32  i32 bf16  f16  f32  f32  c64  c64
bf16   f32* f32* f32* f32* f32* f32* f32* f32* f32* bf16  f16  f32  f32  c64  c64
f16    f32* f32* f32* f32* f32* f32* f32* f32* f32* bf16  f16  f32  f32  c64  c64
f32    f32* f32* f32* f32* f32* f32* f32* f32* f32* bf16  f16  f32  f32  c64  c64
f64    f32* f32* f32* f32* f32* f32* f32* f32* f32* bf16  f16  f32  f32  c64  c64
c64    c64* c64* c64* c64* c64* c64* c64* c64* c64*  c64  c64  c64  c64  c64  c64
c128   c64* c64* c64* c64* c64* c64* c64* c64* c64*  c64  c64  c64  c64  c64  c64
"""

RESULT_WEAK_STRONG_X64 = """
        bool    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
bool    bool    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
u8      i64*    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
u16     i64*    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
u32     i64*    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
u64     i64*    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
i8      i64*    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
i16     i64*    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
i32     i64*    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
i64     i64*    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
bf16    f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  bf16   f16   f32   f64   c64  c128
f16     f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  bf16   f16   f32   f64   c64  c128
f32     f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  bf16   f16   f32   f64   c64  c128
f64     f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  bf16   f16   f32   f64   c64  c128
c64    c128* c128* c128* c128* c128* c128* c128* c128* c128*   c64   c64   c64  c128   c64  c128
c128   c128* c128* c128* c128* c128* c128* c128* c128* c128*   c64   c64   c64  c128   c64  c128
"""

RESULT_WEAK_WEAK_X32 = """
       bool   u8  u16  u32  u64   i8  i16  i32  i64 bf16  f16  f32  f64  c64 c128
bool   bool u32* u32* u32* u32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
u8     u32* u32* u32* u32* u32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
u16    u32* u32* u32* u32* u32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
u32    u32* u32* u32* u32* u32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
u64    u32* u32* u32* u32* u32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
i8     i32* i32* i32* i32* i32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
i16    i32* i32* i32* i32* i32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
i32    i32* i32* i32* i32* i32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
i64    i32* i32* i32* i32* i32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*
bf16   f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* c64* c64*
f16    f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* c64* c64*
f32    f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* c64* c64*
f64    f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* f32* c64* c64*
c64    c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64*
c128   c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64* c64*
"""

RESULT_WEAK_WEAK_X64 = """
        bool    u8   u16   u32   u64    i8   i16   i32   i64  bf16   f16   f32   f64   c64  c128
bool    bool  u64*  u64*  u64*  u64*  i64*  i64*  i64*  i64*  f64*  f64*  f64*  f64* c128* c128*
u8      u64*  u64*  u64*  u64*  u64*  i64*  i64*  i64*  i64*  f64*  f64*  f64*  f64* c128* c128*
u16     u64*  u64*  u64*  u64*  u64*  i64*  i64*  i64*  i64*  f64*  f64*  f64*  f64* c128* c128*
u32     u64*  u64*  u64*  u64*  u64*  i64*  i64*  i64*  i64*  f64*  f64*  f64*  f64* c128* c128*
u64     u64*  u64*  u64*  u64*  u64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64* c128* c128*
i8      i64*  i64*  i64*  i64*  f64*  i64*  i64*  i64*  i64*  f64*  f64*  f64*  f64* c128* c128*
i16     i64*  i64*  i64*  i64*  f64*  i64*  i64*  i64*  i64*  f64*  f64*  f64*  f64* c128* c128*
i32     i64*  i64*  i64*  i64*  f64*  i64*  i64*  i64*  i64*  f64*  f64*  f64*  f64* c128* c128*
i64     i64*  i64*  i64*  i64*  f64*  i64*  i64*  i64*  i64*  f64*  f64*  f64*  f64* c128* c128*
bf16    f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64* c128* c128*
f16     f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64* c128* c128*
f32     f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64* c128* c128*
f64     f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64*  f64* c128* c128*
c64    c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128*
c128   c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128* c128*
"""

# Python types are the weak nodes i*/f*/c* for promote_types (bool is strong); a join landing on
# a weak node reports the 64-bit type of its kind, in both modes.
PROMOTE_PYTHON_TYPES = """
              u8      i8     u64     i64    bf16     f16     f32     f64     c64    bool     int   float complex
bool          u8      i8     u64     i64    bf16     f16     f32     f64     c64    bool     i64     f64    c128
int           u8      i8     u64     i64    bf16     f16     f32     f64     c64     i64     i64     f64    c128
float        f64     f64     f64     f64    bf16     f16     f32     f64     c64     f64     f64     f64    c128
complex     c128    c128    c128    c128     c64     c64     c64    c128     c64    c128    c128    c128    c128
"""

# Sub-byte ints and 8/6/4-bit floats promote only with the partners listed here (the result is
# always the exotic dtype itself); every other pairing raises TypePromotionError, in both modes.
SUBBYTE_INTS = ["u1", "u2", "u4", "i1", "i2", "i4"]
SUBBYTE_INT_PARTNERS = ["bool", "int"]
LOW_PRECISION_FLOATS = [
    *("f4_e2m1fn", "f6_e2m3fn", "f6_e3m2fn", "f8_e3m4", "f8_e4m3", "f8_e8m0fnu"),
    *("f8_e4m3b11fnuz", "f8_e4m3fn", "f8_e4m3fnuz", "f8_e5m2", "f8_e5m2fnuz"),
]
LOW_PRECISION_FLOAT_PARTNERS = [
    *("bool", "int", "float", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"),
]
EXOTIC_PARTNERS = {
    **{name: [name, *SUBBYTE_INT_PARTNERS] for name in SUBBYTE_INTS},
    **{name: [name, *LOW_PRECISION_FLOAT_PARTNERS] for name in LOW_PRECISION_FLOATS},
}

# result_type(strong dtype, Python scalar) for True, 1, 1.0, 1j: (x32, x64).
STRONG_WITH_SCALARS = {
    "bool": ("bool i32* f32* c64*", "bool i64* f64* c128*"),
    "u1": ("u1 u1 - -", "u1 u1 - -"),
    "u2": ("u2 u2 - -", "u2 u2 - -"),
    "u4": ("u4 u4 - -", "u4 u4 - -"),
    "u8": ("u8 u8 f32* c64*", "u8 u8 f64* c128*"),
    "u16": ("u16 u16 f32* c64*", "u16 u16 f64* c128*"),
    "u32": ("u32 u32 f32* c64*", "u32 u32 f64* c128*"),
    "u64": ("u32 u32 f32* c64*", "u64 u64 f64* c128*"),
    "i1": ("i1 i1 - -", "i1 i1 - -"),
    "i2": ("i2 i2 - -", "i2 i2 - -"),
    "i4": ("i4 i4 - -", "i4 i4 - -"),
    "i8": ("i8 i8 f32* c64*", "i8 i8 f64* c128*"),
    "i16": ("i16 i16 f32* c64*", "i16 i16 f64* c128*"),
    "i32": ("i32 i32 f32* c64*", "i32 i32 f64* c128*"),
    "i64": ("i32 i32 f32* c64*", "i64 i64 f64* c128*"),
    "f4_e2m1fn": ("f4_e2m1fn f4_e2m1fn f4_e2m1fn -", "f4_e2m1fn f4_e2m1fn f4_e2m1fn -"),
    "f6_e2m3fn": ("f6_e2m3fn f6_e2m3fn f6_e2m3fn -", "f6_e2m3fn f6_e2m3fn f6_e2m3fn -"),
    "f6_e3m2fn": ("f6_e3m2fn f6_e3m2fn f6_e3m2fn -", "f6_e3m2fn f6_e3m2fn f6_e3m2fn -"),
    "f8_e3m4": ("f8_e3m4 f8_e3m4 f8_e3m4 -", "f8_e3m4 f8_e3m4 f8_e3m4 -"),
    "f8_e4m3": ("f8_e4m3 f8_e4m3 f8_e4m3 -", "f8_e4m3 f8_e4m3 f8_e4m3 -"),
    "f8_e8m0fnu": ("f8_e8m0fnu f8_e8m0fnu f8_e8m0fnu -", "f8_e8m0fnu f8_e8m0fnu f8_e8m0fnu -"),
    "f8_e4m3b11fnuz": (
        "f8_e4m3b11fnuz f8_e4m3b11fnuz f8_e4m3b11fnuz -",
        "f8_e4m3b11fnuz f8_e4m3b11fnuz f8_e4m3b11fnuz -",
    ),
    "f8_e4m3fn": ("f8_e4m3fn f8_e4m3fn f8_e4m3fn -", "f8_e4m3fn f8_e4m3fn f8_e4m3fn -"),
    "f8_e4m3fnuz": (
        "f8_e4m3fnuz f8_e4m3fnuz f8_e4m3fnuz -",
        "f8_e4m3fnuz f8_e4m3fnuz f8_e4m3fnuz -",
    ),
    "f8_e5m2": ("f8_e5m2 f8_e5m2 f8_e5m2 -", "f8_e5m2 f8_e5m2 f8_e5m2 -"),
    "f8_e5m2fnuz": (
        "f8_e5m2fnuz f8_e5m2fnuz f8_e5m2fnuz -",
        "f8_e5m2fnuz f8_e5m2fnuz f8_e5m2fnuz -",
    ),
    "bf16": ("bf16 bf16 bf16 c64", "bf16 bf16 bf16 c64"),
    "f16": ("f16 f16 f16 c64", "f16 f16 f16 c64"),
    "f32": ("f32 f32 f32 c64", "f32 f32 f32 c64"),
    "f64": ("f32 f32 f32 c64", "f64 f64 f64 c128"),
    "c64": ("c64 c64 c64 c64", "c64 c64 c64 c64"),
    "c128": ("c64 c64 c64 c64", "c128 c128 c128 c128"),
}

# result_type of a single weakly typed value of each standard dtype: (x32, x64).
WEAK_ALONE = (
    "bool u32* u32* u32* u32* i32* i32* i32* i32* f32* f32* f32* f32* c64* c64*",
    "bool u64* u64* u64* u64* i64* i64* i64* i64* f64* f64* f64* f64* c128* c128*",
)

# Multi-argument result_type cases: (x32, x64).
MIXED_CASES = {
    (
        1,
        1.0,
        "int8",
    ): ("f32*", "f64*"),
    (
        True,
        1,
    ): ("i32*", "i64*"),
    (
        "uint8",
        "int8",
        1.0,
    ): ("f32*", "f64*"),
    (
        "bfloat16",
        "float16",
        1,
    ): ("f32", "f32"),
    (
        "uint64",
        "int64",
        1,
    ): ("i32", "f64*"),
    (
        "int8",
        "uint8",
        "float16",
    ): ("f16", "f16"),
    (
        None,
        "int8",
    ): ("f32", "f64"),
    (
        1,
        1j,
    ): ("c64*", "c128*"),
    (
        "float32",
        1j,
    ): ("c64", "c64"),
    (
        "bfloat16",
        1j,
    ): ("c64", "c64"),
    (
        "int4",
        True,
        1,
    ): ("i4", "i4"),
    (
        "float8_e5m2",
        1.0,
        1,
    ): ("f8_e5m2", "f8_e5m2"),
    (
        "uint32",
        "int32",
    ): ("i32", "i64"),
    (
        "uint32",
        "int8",
    ): ("i32", "i64"),
}


def test_short_names():
    for name, short in AVAILABLE.items():
        assert dtypes.short_dtype_name(np.dtype(name)) == short
    assert dtypes.short_dtype_name(dtypes.float0) == "float0"
    assert dtypes.short_dtype_name(np.float32) == "f32"
    assert dtypes.short_dtype_name("bfloat16") == "bf16"


def test_lattice_covers_every_dtype():
    assert {dtypes.short_dtype_name(d) for d in dtypes.LATTICE_DTYPES} == set(AVAILABLE.values())


def test_promote_types_standard_table(x64):
    expected = parse_grid(PROMOTE_X64 if x64 else PROMOTE_X32)
    for a in STANDARD:
        for b in STANDARD:
            got = dtypes.promote_types(BY_SHORT[a], BY_SHORT[b])
            assert isinstance(got, np.dtype)
            assert dtypes.short_dtype_name(got) == expected[(a, b)], (a, b)


def test_promote_types_exotic_dtypes(x64):
    python_types = {"bool": bool, "int": int, "float": float, "complex": complex}
    for exotic, partners in EXOTIC_PARTNERS.items():
        if exotic not in BY_SHORT:
            continue
        for other, other_dtype in [*BY_SHORT.items(), *python_types.items()]:
            if other in partners:
                assert dtypes.promote_types(BY_SHORT[exotic], other_dtype) == BY_SHORT[exotic]
                assert dtypes.promote_types(other_dtype, BY_SHORT[exotic]) == BY_SHORT[exotic]
            else:
                with pytest.raises(dtypes.TypePromotionError):
                    dtypes.promote_types(BY_SHORT[exotic], other_dtype)


def test_promote_types_python_types(x64):
    python_types = {"bool": bool, "int": int, "float": float, "complex": complex}
    for (row, column), expected in parse_grid(PROMOTE_PYTHON_TYPES).items():
        other = python_types.get(column) or BY_SHORT[column]
        got = dtypes.promote_types(python_types[row], other)
        assert dtypes.short_dtype_name(got) == expected, (row, column)


def test_promote_types_accepts_specifiers_and_rejects_others():
    assert dtypes.promote_types("int8", "uint8") == np.int16
    assert dtypes.promote_types(np.float64, np.float32) == np.float64  # not canonicalised
    assert dtypes.promote_types("bfloat16", np.float16) == np.float32
    for bad in (dtypes.float0, np.str_, ">f4"):
        with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
            dtypes.promote_types(bad, np.float32)
    with pytest.raises(dtypes.TypePromotionError, match="no available implicit dtype promotion"):
        dtypes.promote_types("bfloat16", "float8_e4m3fn")
    assert issubclass(dtypes.TypePromotionError, ValueError)


@pytest.mark.parametrize(
    "table", ["RESULT_STRONG_STRONG", "RESULT_WEAK_STRONG", "RESULT_WEAK_WEAK"]
)
def test_result_type_tables(x64, table):
    expected = parse_grid(globals()[table + ("_X64" if x64 else "_X32")])
    weak_a, weak_b = {"RESULT_STRONG_STRONG": (0, 0), "RESULT_WEAK_STRONG": (1, 0)}.get(
        table, (1, 1)
    )
    for a in STANDARD:
        for b in STANDARD:
            arg_a = WeakValue(BY_SHORT[a]) if weak_a else np.zeros((), BY_SHORT[a])
            arg_b = WeakValue(BY_SHORT[b]) if weak_b else np.zeros((), BY_SHORT[b])
            assert show_result_type(arg_a, arg_b) == expected[(a, b)], (table, a, b)
            # The hot-path helper must agree with the general entry point.
            got = dtypes.binary_result(BY_SHORT[a], bool(weak_a), BY_SHORT[b], bool(weak_b))
            assert show(got) == expected[(a, b)], (table, a, b)


def test_result_type_with_python_scalars(x64):
    for short, answers in STRONG_WITH_SCALARS.items():
        if short not in BY_SHORT:
            continue
        expected = answers[x64].split()
        got = [show_result_type(np.zeros(2, BY_SHORT[short]), s) for s in (True, 1, 1.0, 1j)]
        assert got == expected, short
        # A dtype given as a specifier behaves like an array of that dtype.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = [show_result_type(BY_SHORT[short], s) for s in (True, 1, 1.0, 1j)]
        assert got == expected, short


def test_result_type_weak_value_alone(x64):
    expected = WEAK_ALONE[x64].split()
    assert [show_result_type(WeakValue(BY_SHORT[s])) for s in STANDARD] == expected


def test_result_type_mixed_cases(x64):
    for args, answers in MIXED_CASES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert show_result_type(*args) == answers[x64], args


def test_result_type_python_scalars_alone(x64):
    bits = 64 if x64 else 32
    assert show_result_type(True) == "bool"
    assert show_result_type(1) == f"i{bits}*"
    assert show_result_type(2.5) == f"f{bits}*"
    assert show_result_type(1j) == f"c{2 * bits}*"
    assert show_result_type(int) == f"i{bits}*"
    assert show_result_type(bool) == "bool"
    assert show_result_type(None) == f"f{bits}"  # None means the default float, strongly typed


def test_result_type_brief_examples(x32_only):
    f32 = np.zeros(3, np.float32)
    assert dtypes.result_type(f32, 1.0) == np.float32
    assert dtypes.result_type(np.zeros(3, np.int32), 1.0) == np.float32
    assert dtypes.result_type(np.zeros(3, np.uint8), 1) == np.uint8
    assert dtypes.result_type(np.zeros(3, dtypes.bfloat16), 1.0) == dtypes.bfloat16
    # The weak flag follows the join, not "all inputs weak": int32 + 1.5 is a weak float.
    assert dtypes.result_type(np.int32, 1.5, return_weak_type_flag=True) == (np.float32, True)
    assert dtypes.result_type(f32, 1.5, return_weak_type_flag=True) == (np.float32, False)
    # NumPy values are strong even though np.float64 subclasses float.
    assert dtypes.result_type(np.float64(1.0), return_weak_type_flag=True) == (np.float32, False)


def test_result_type_errors_and_float0(x32_only):
    with pytest.raises(ValueError, match="at least one"):
        dtypes.result_type()
    with pytest.raises(TypeError, match="not a valid JAX array type"):
        dtypes.result_type(np.dtype("O"))
    with pytest.raises(TypeError, match="Cannot determine dtype"):
        dtypes.result_type([1, 2])
    with pytest.raises(dtypes.TypePromotionError):
        dtypes.result_type(np.zeros(2, "int4"), 1.0)
    assert dtypes.result_type(dtypes.float0, return_weak_type_flag=True) == (dtypes.float0, False)
    assert dtypes.result_type(dtypes.float0, dtypes.float0) == dtypes.float0
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        dtypes.result_type(dtypes.float0, np.float32)


def test_result_type_warns_on_truncated_specifier(x32_only):
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
        assert dtypes.result_type("float64") == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dtypes.result_type(np.zeros(2)) == np.float32  # values are not "requested"
        assert dtypes.result_type(float) == np.float32


def test_canonicalize_dtype(x64):
    wide = {"float64": "float32", "int64": "int32", "uint64": "uint32", "complex128": "complex64"}
    for name in AVAILABLE:
        expected = name if x64 else wide.get(name, name)
        assert dtypes.canonicalize_dtype(name) == np.dtype(expected)
        assert dtypes.canonicalize_dtype(np.dtype(name)) == np.dtype(expected)
    assert dtypes.canonicalize_dtype(float) == np.dtype("float64" if x64 else "float32")
    assert dtypes.canonicalize_dtype(int) == np.dtype("int64" if x64 else "int32")
    assert dtypes.canonicalize_dtype(dtypes.float0) == dtypes.float0
    assert isinstance(dtypes.canonicalize_dtype(np.float64), np.dtype)


def test_canonicalize_cache_follows_config_updates():
    old = config.enable_x64
    try:
        config.update("jax_enable_x64", False)
        assert dtypes.canonicalize_dtype(np.int64) == np.int32
        assert (
            dtypes.binary_result(np.dtype("int64"), False, np.dtype("int8"), False)[0] == np.int32
        )
        config.update("jax_enable_x64", True)
        assert dtypes.canonicalize_dtype(np.int64) == np.int64
        assert (
            dtypes.binary_result(np.dtype("int64"), False, np.dtype("int8"), False)[0] == np.int64
        )
    finally:
        config.update("jax_enable_x64", old)


def test_defaults(x64):
    bits = 64 if x64 else 32
    assert dtypes.default_int_dtype() == np.dtype(f"int{bits}")
    assert dtypes.default_uint_dtype() == np.dtype(f"uint{bits}")
    assert dtypes.default_float_dtype() == np.dtype(f"float{bits}")
    assert dtypes.default_complex_dtype() == np.dtype(f"complex{2 * bits}")


def test_python_scalars(x64):
    bits = 64 if x64 else 32
    assert [dtypes.is_python_scalar(x) for x in (True, 1, 1.0, 1j)] == [True] * 4
    assert not dtypes.is_python_scalar(np.float64(1.0))  # subclasses float, but is NumPy's
    assert not dtypes.is_python_scalar(np.zeros(()))
    assert dtypes.python_scalar_dtype(True) == np.bool_
    assert dtypes.python_scalar_dtype(3) == np.dtype(f"int{bits}")
    assert dtypes.python_scalar_dtype(3.0) == np.dtype(f"float{bits}")
    assert dtypes.python_scalar_dtype(3j) == np.dtype(f"complex{2 * bits}")
    assert dtypes.python_scalar_dtype(float) == np.dtype(f"float{bits}")


def test_is_weakly_typed():
    assert dtypes.is_weakly_typed(1) and dtypes.is_weakly_typed(1.0) and dtypes.is_weakly_typed(1j)
    assert not dtypes.is_weakly_typed(True)  # a Python bool is a strong bool
    assert not dtypes.is_weakly_typed(np.float32(1))
    assert not dtypes.is_weakly_typed(np.zeros(2))
    assert not dtypes.is_weakly_typed(int)
    assert dtypes.is_weakly_typed(WeakValue(np.float32))
    assert not dtypes.is_weakly_typed(WeakValue)  # the class, whose attribute is not a flag


def test_dtype_of(x64):
    bits = 64 if x64 else 32
    assert dtypes.dtype_of(1) == np.dtype(f"int{bits}")
    assert dtypes.dtype_of(1, canonicalize=False) == np.int64
    assert dtypes.dtype_of(1.0) == np.dtype(f"float{bits}")
    assert dtypes.dtype_of(True) == np.bool_
    assert dtypes.dtype_of(np.float64(1)) == np.dtype(f"float{bits}")
    assert dtypes.dtype_of(np.zeros(2, np.int64)) == np.dtype(f"int{bits}")
    assert dtypes.dtype_of(np.zeros(2, np.int64), canonicalize=False) == np.int64
    assert dtypes.dtype_of(np.float32) == np.float32
    assert dtypes.dtype_of(float) == np.dtype(f"float{bits}")
    assert dtypes.dtype_of("bfloat16") == dtypes.bfloat16
    assert dtypes.dtype_of(WeakValue(np.int8)) == np.int8
    with pytest.raises(ValueError):
        dtypes.dtype_of(None)
    with pytest.raises(TypeError, match="Cannot determine dtype"):
        dtypes.dtype_of([1, 2])


def test_dtype_constructor():
    assert dtypes.dtype("bfloat16") == dtypes.bfloat16
    assert dtypes.dtype("float8_e4m3fn") == dtypes.float8_e4m3fn
    assert dtypes.dtype(float) == np.float64  # jnp.dtype does not canonicalise
    assert dtypes.dtype(np.int8) == np.int8


def test_dtype_objects():
    assert dtypes.float0 == np.dtype([("float0", "V")])
    assert dtypes.float0.itemsize == 0
    assert np.dtype(dtypes.bfloat16).itemsize == 2
    assert np.dtype(dtypes.float32) == np.float32
    assert dtypes.bool_ is np.bool_


def test_check_user_dtype(x32_only):
    with pytest.warns(UserWarning, match="requested in zeros is not available"):
        assert dtypes.check_user_dtype("float64", "zeros") == np.float32
    with pytest.warns(UserWarning, match="truncated to dtype uint32"):
        assert dtypes.check_user_dtype(np.uint64, "ones") == np.uint32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dtypes.check_user_dtype(int, "zeros") == np.int32  # Python types: no warning
        assert dtypes.check_user_dtype(float, "zeros") == np.float32
        assert dtypes.check_user_dtype("bfloat16", "zeros") == dtypes.bfloat16
        assert dtypes.check_user_dtype(dtypes.float0, "zeros") == dtypes.float0
        assert dtypes.check_user_dtype(None, "zeros") is None
    with pytest.raises(TypeError, match="got dtype O in zeros"):
        dtypes.check_user_dtype("O", "zeros")
    with pytest.raises(ValueError, match="array as a dtype"):
        dtypes.check_user_dtype(np.zeros(2), "zeros")


def test_check_user_dtype_x64():
    old = config.enable_x64
    try:
        config.update("jax_enable_x64", True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert dtypes.check_user_dtype("float64", "zeros") == np.float64
            assert dtypes.check_user_dtype(int, "zeros") == np.int64
    finally:
        config.update("jax_enable_x64", old)


# issubdtype(row, column) as reference JAX answers it; "1" is True. Strings are dtype names.
ISSUBDTYPE_COLUMNS = [
    *(np.generic, np.number, np.inexact, np.floating, np.complexfloating),
    *(np.integer, np.signedinteger, np.unsignedinteger, np.bool_, np.void),
    *("bool", "uint4", "uint8", "uint32", "int4", "int8", "int64", "float8_e4m3fn"),
    *("float8_e5m2", "bfloat16", "float16", "float32", "float64", "complex64", "complex128"),
    *(int, float, complex, bool),
]
ISSUBDTYPE = {
    "bool": "10000000101000000000000000001",
    "uint4": "11000101000100000000000000000",
    "uint8": "11000101000010000000000000000",
    "uint32": "11000101000001000000000000000",
    "int4": "11000110000000100000000000000",
    "int8": "11000110000000010000000000000",
    "int64": "11000110000000001000000001000",
    "float8_e4m3fn": "11110000000000000100000000000",
    "float8_e5m2": "11110000000000000010000000000",
    "bfloat16": "11110000000000000001000000000",
    "float16": "11110000000000000000100000000",
    "float32": "11110000000000000000010000000",
    "float64": "11110000000000000000001000100",
    "complex64": "11101000000000000000000100000",
    "complex128": "11101000000000000000000010010",
    int: "11000110000000001000000001000",
    float: "11110000000000000000001000100",
    complex: "11101000000000000000000010010",
    dtypes.float0: "10000000010000000000000000000",
}


def test_issubdtype_table():
    for row, answers in ISSUBDTYPE.items():
        for column, answer in zip(ISSUBDTYPE_COLUMNS, answers, strict=True):
            assert dtypes.issubdtype(row, column) == (answer == "1"), (row, column)


def test_issubdtype_named_categories():
    assert dtypes.issubdtype(dtypes.bfloat16, dtypes.floating)
    assert dtypes.issubdtype(dtypes.bfloat16, dtypes.inexact)
    assert not dtypes.issubdtype(dtypes.bfloat16, np.void)
    assert dtypes.issubdtype(np.zeros(2, np.float32), dtypes.floating)  # values are accepted
    assert dtypes.issubdtype("int4", dtypes.signedinteger)
    assert not dtypes.issubdtype(np.bool_, dtypes.number)
    # None is NumPy's default dtype, float64, as JAX 0.10.2 reads it (optax passes it)
    assert dtypes.issubdtype(None, dtypes.floating)
    assert not dtypes.issubdtype(None, dtypes.complexfloating)


def test_quick_predicates():
    floats = ["bfloat16", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"]
    assert all(dtypes.is_float(n) for n in floats)
    assert not any(dtypes.is_float(n) for n in ["int8", "bool", "complex64"])
    assert dtypes.is_complex("complex64") and dtypes.is_complex(np.complex128)
    assert not dtypes.is_complex("float32")
    assert all(dtypes.is_int(n) for n in ["int4", "int8", "uint8", "uint64"])
    assert not dtypes.is_int("bool") and not dtypes.is_int("float32")
    assert dtypes.is_unsigned("uint32") and dtypes.is_unsigned("uint4")
    assert not dtypes.is_unsigned("int32")
    assert dtypes.is_bool(np.bool_) and not dtypes.is_bool("uint8")
    assert dtypes.is_inexact("bfloat16") and dtypes.is_inexact("complex64")
    assert not dtypes.is_inexact("int32")


def test_finfo_bfloat16():
    info = dtypes.finfo(dtypes.bfloat16)
    assert info.bits == 16
    assert info.nmant == 7 and info.nexp == 8
    assert info.minexp == -126 and info.maxexp == 128
    assert float(info.eps) == 0.0078125
    assert float(info.epsneg) == 0.00390625
    assert float(info.max) == 3.3895313892515355e38
    assert float(info.min) == -3.3895313892515355e38
    assert float(info.tiny) == float(info.smallest_normal) == 1.1754943508222875e-38
    assert float(info.smallest_subnormal) == 9.183549615799121e-41
    assert info.dtype == dtypes.bfloat16


def test_finfo_float16_and_float8():
    assert float(dtypes.finfo(np.float16).eps) == 0.0009765625
    assert float(dtypes.finfo("float16").max) == 65504.0
    assert float(dtypes.finfo(dtypes.float8_e4m3fn).max) == 448.0
    assert float(dtypes.finfo(dtypes.float8_e4m3fn).eps) == 0.125
    assert dtypes.finfo(float).dtype == np.float64


def test_iinfo():
    assert (dtypes.iinfo(dtypes.int4).min, dtypes.iinfo(dtypes.int4).max) == (-8, 7)
    assert dtypes.iinfo(dtypes.int4).bits == 4
    assert (dtypes.iinfo(dtypes.uint4).min, dtypes.iinfo(dtypes.uint4).max) == (0, 15)
    assert dtypes.iinfo(np.uint8).max == 255
    assert dtypes.iinfo(np.int32).min == -(2**31)


def test_the_public_dtypes_module():
    import tracejit as jax
    from tracejit import dtypes as jdt

    assert jdt.canonicalize_dtype(np.float64) == np.float32  # x64 off
    assert jdt.scalar_type_of(1.0) is float and jdt.scalar_type_of(np.int8(1)) is int
    assert jdt.scalar_type_of(True) is bool
    assert jdt.itemsize_bits(np.float32) == 32 and jdt.itemsize_bits(ml_dtypes.int4) == 4
    assert jdt.itemsize_bits(np.bool_) == 8
    assert jdt.issubdtype(jdt.bfloat16, np.floating)
    assert jdt.finfo(jdt.bfloat16).eps == 2.0**-7
    assert jdt.result_type(1, np.float32) == np.float32
    assert jax.grad(lambda x: x * 1.0, allow_int=True)(1).dtype == jdt.float0
    with pytest.raises(jdt.TypePromotionError):
        jdt.result_type(np.dtype(jdt.bfloat16), np.float16, np.dtype(ml_dtypes.float8_e4m3fn))


@pytest.mark.parametrize(
    "operands",
    [
        (np.ones(2, np.float32), np.ones(2, np.float16)),
        (np.ones(2, np.int32), np.ones(2, np.float32)),
        (np.ones(2, np.int8), np.ones(2, np.int16)),
        (np.ones(2, np.int32), 1.0),
    ],
)
def test_strict_promotion_refuses_implicit_promotion(operands):
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(jax.dtypes.TypePromotionError, match="strict"):
            jnp.add(*operands)
        with pytest.raises(jax.dtypes.TypePromotionError, match="strict"):
            jax.jit(jnp.add)(*operands)
    assert jnp.add(*operands).dtype == jnp.result_type(*operands)


def test_strict_promotion_keeps_weak_scalars_that_fit():
    with jax.numpy_dtype_promotion("strict"):
        assert (jnp.ones(2, np.float32) + 1).dtype == np.float32
        assert (jnp.ones(2, np.int32) * 2).dtype == np.int32
        assert (jnp.ones(2, np.float16) + jnp.ones(2, np.float16)).dtype == np.float16


def test_canonicalize_dtype_takes_key_dtypes_only_when_allowed():
    key_dtype = jax.random.key(0).dtype
    with pytest.raises(ValueError, match="extended dtype key<fry>"):
        jax.dtypes.canonicalize_dtype(key_dtype)
    assert jax.dtypes.canonicalize_dtype(key_dtype, allow_extended_dtype=True) == key_dtype
