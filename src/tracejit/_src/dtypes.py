r"""Dtypes and JAX's type-promotion lattice, including weak types.

NumPy's promotion table widens to 64 bits quickly (`int8 + uint64 -> float64`,
`float32 + int64 -> float64`). Accelerator code wants narrower,
predictable results, so JAX defines promotion as the *join* (least upper bound) in a small
partially ordered set of types: the result of combining `a` and `b` is the lowest type that both
`a` and `b` can move up to. Here is that lattice (arrows point to wider types):

    b1 -> i* -+-> u8 -> u16 -> u32 -> u64 -----------+
              |     \      \      \                  |
              |      \      \      \  (u32 -> i64 when x64 is on,
              |       v      v      v   u32 -> i32 when it is off)
              +-> i8 -> i16 -> i32 -> i64 -----------+-> f* -+-> bf16 -+-> f32 -> f64 -> c128
              |                                              +-> f16 --+     \            ^
              +-> i4, i2, i1, u4, u2, u1  (dead ends)        |                v           |
                                                             +-> c* --------> c64 --------+
                                                             +-> f8_*, f6_*, f4_*  (dead ends)

`i*`, `f*` and `c*` are the *weak* nodes: the type of a Python `int`, `float` or `complex`
(or of an array flagged `weak_type`). A weak value has a kind but no width, so it takes the width
of whatever strongly typed value it meets: `uint8 + 3 -> uint8`, `bfloat16 + 1.5 -> bfloat16`,
`int32 + 1.5 -> f*`, which becomes the default float. A weak result always takes the default dtype
of its kind (int32/float32/complex64, or the 64-bit ones under x64).

The sub-byte integers and the 8/6/4-bit floats are dead ends on purpose: they only absorb `bool`,
weak scalars and (for the floats) ordinary integers, so that nothing is silently widened to or from
those exotic formats. Pairs with no common upper bound raise `TypePromotionError`.

The lattice is turned into a join table (`(a, b) -> join`) once at import, per x64 mode, so
promotion on the eager hot path is a couple of dict lookups; `binary_result` additionally memoises
the whole `(dtype, weak, dtype, weak) -> (dtype, weak)` answer. With x64 off, results are
canonicalised: 64-bit types are represented by their 32-bit counterparts.
"""

import abc
import warnings

import ml_dtypes
import numpy as np

from tracejit._src.config import config

# ---------------------------------------------------------------------------------------------
# Dtype objects. Scalar types (np.float32, ml_dtypes.bfloat16, ...) so they can be passed anywhere
# NumPy accepts a dtype, exactly as `jnp.float32` / `jnp.bfloat16` can.

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
bfloat16 = ml_dtypes.bfloat16
int4, uint4 = ml_dtypes.int4, ml_dtypes.uint4
float8_e4m3fn = ml_dtypes.float8_e4m3fn
float8_e4m3fnuz = ml_dtypes.float8_e4m3fnuz
float8_e4m3b11fnuz = ml_dtypes.float8_e4m3b11fnuz
float8_e5m2 = ml_dtypes.float8_e5m2
float8_e5m2fnuz = ml_dtypes.float8_e5m2fnuz
# Newer ml_dtypes releases add these; on older ones the name is None and the type is absent.
int1 = getattr(ml_dtypes, "int1", None)
int2 = getattr(ml_dtypes, "int2", None)
uint1 = getattr(ml_dtypes, "uint1", None)
uint2 = getattr(ml_dtypes, "uint2", None)
float8_e3m4 = getattr(ml_dtypes, "float8_e3m4", None)
float8_e4m3 = getattr(ml_dtypes, "float8_e4m3", None)
float8_e8m0fnu = getattr(ml_dtypes, "float8_e8m0fnu", None)
float6_e2m3fn = getattr(ml_dtypes, "float6_e2m3fn", None)
float6_e3m2fn = getattr(ml_dtypes, "float6_e3m2fn", None)
float4_e2m1fn = getattr(ml_dtypes, "float4_e2m1fn", None)

# The tangent type of integer/bool values: a zero-size structured dtype that carries no data.
float0 = np.dtype([("float0", "V")])

# NumPy's abstract scalar classes, which `issubdtype` accepts as categories.
generic, number, inexact = np.generic, np.number, np.inexact
floating, complexfloating = np.floating, np.complexfloating
integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger

# `jnp.dtype` is NumPy's dtype constructor; it already understands 'bfloat16' and friends once
# ml_dtypes is imported.
dtype = np.dtype


def _dtypes(*scalar_types):
    return tuple(np.dtype(t) for t in scalar_types if t is not None)


_BOOL = np.dtype(bool_)
_UNSIGNED_SUBBYTE = _dtypes(uint1, uint2, uint4)
_SIGNED_SUBBYTE = _dtypes(int1, int2, int4)
_UNSIGNED = _UNSIGNED_SUBBYTE + _dtypes(uint8, uint16, uint32, uint64)
_SIGNED = _SIGNED_SUBBYTE + _dtypes(int8, int16, int32, int64)
_LOW_PRECISION_FLOATS = _dtypes(
    float4_e2m1fn,
    float6_e2m3fn,
    float6_e3m2fn,
    float8_e3m4,
    float8_e4m3,
    float8_e8m0fnu,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
)
_FLOATS = _LOW_PRECISION_FLOATS + _dtypes(bfloat16, float16, float32, float64)
_COMPLEXES = _dtypes(complex64, complex128)

# Every dtype that takes part in promotion, in the order JAX lists them.
LATTICE_DTYPES = (_BOOL,) + _UNSIGNED + _SIGNED + _FLOATS + _COMPLEXES
_LATTICE_DTYPE_SET = frozenset(LATTICE_DTYPES)
# Dtypes a value may have at all: the lattice ones plus float0, which only ever meets itself.
_VALID_DTYPE_SET = _LATTICE_DTYPE_SET | {float0}

# Frozen sets behind the quick predicates (one hash lookup each).
_FLOAT_SET = frozenset(_FLOATS)
_COMPLEX_SET = frozenset(_COMPLEXES)
_INEXACT_SET = _FLOAT_SET | _COMPLEX_SET
_UNSIGNED_SET = frozenset(_UNSIGNED)
_INT_SET = frozenset(_SIGNED) | _UNSIGNED_SET

# ml_dtypes scalar types derive straight from np.generic, so NumPy does not know that bfloat16 is
# floating or that int4 is a signed integer. `issubdtype` consults this map instead.
_ML_DTYPES_CATEGORY = {
    **{d.type: np.floating for d in _FLOATS if d not in _dtypes(float16, float32, float64)},
    **{d.type: np.signedinteger for d in _SIGNED_SUBBYTE},
    **{d.type: np.unsignedinteger for d in _UNSIGNED_SUBBYTE},
}


class TypePromotionError(ValueError):
    """Raised when two dtypes have no common upper bound in the lattice (e.g. bf16 and f8)."""


# ---------------------------------------------------------------------------------------------
# x64 mode: defaults and canonicalisation.

_TO_32BIT = {
    np.dtype(float64): np.dtype(float32),
    np.dtype(int64): np.dtype(int32),
    np.dtype(uint64): np.dtype(uint32),
    np.dtype(complex128): np.dtype(complex64),
}

# kind letter -> default dtype, per x64 flag. 'u' is used for weak unsigned results.
_DEFAULTS = {
    x64: {kind: np.dtype(f"{name}{bits}") for kind, name, bits in table}
    for x64, table in (
        (False, (("i", "int", 32), ("u", "uint", 32), ("f", "float", 32), ("c", "complex", 64))),
        (True, (("i", "int", 64), ("u", "uint", 64), ("f", "float", 64), ("c", "complex", 128))),
    )
}


def default_int_dtype() -> np.dtype:
    return _DEFAULTS[config.enable_x64]["i"]


def default_uint_dtype() -> np.dtype:
    return _DEFAULTS[config.enable_x64]["u"]


def default_float_dtype() -> np.dtype:
    return _DEFAULTS[config.enable_x64]["f"]


def default_complex_dtype() -> np.dtype:
    return _DEFAULTS[config.enable_x64]["c"]


# Per-x64-mode memo of `canonicalize_dtype`, keyed by whatever the caller passed (a dtype, a
# scalar type, a string). Keeping one dict per mode means a flag flipped behind config's back still
# reads the right table; `config.on_update` empties them anyway. This module's memos are keyed
# by dtypes and dtype specifiers (or pairs of them; invalid ones raise before being remembered),
# so their size is bounded by the dtypes a program names.
_canonical_cache = {False: {}, True: {}}


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False) -> np.dtype:
    """The dtype arrays of `dtype` really get: 64-bit types become 32-bit ones when x64 is off.

    Dtypes outside the lattice (float0, object, ...) pass through unchanged; callers that need
    a numeric type validate separately. The dtype of typed keys passes only when
    `allow_extended_dtype` says the caller expects it (it is never cached, so that the check
    always runs).
    """
    x64 = config.enable_x64
    try:
        return _canonical_cache[x64][dtype]
    except KeyError:
        pass
    except TypeError:  # unhashable spec, e.g. a list describing a structured dtype
        return _canonicalize_uncached(np.dtype(dtype), x64)
    result = _canonicalize_uncached(np.dtype(dtype), x64)
    if result == key_fry:
        if not allow_extended_dtype:
            raise ValueError(
                "Internal: canonicalize_dtype called on extended dtype key<fry> with "
                "allow_extended_dtype=False"
            )
        return result
    _canonical_cache[x64][dtype] = result
    return result


def _canonicalize_uncached(np_dtype: np.dtype, x64: bool) -> np.dtype:
    return np_dtype if x64 else _TO_32BIT.get(np_dtype, np_dtype)


# ---------------------------------------------------------------------------------------------
# Python scalars and the dtype of arbitrary values.

_PYTHON_SCALAR_KIND = {bool: "b", int: "i", float: "f", complex: "c"}
# The non-canonical NumPy dtype of each Python scalar type (what `np.dtype(int)` says).
_PYTHON_SCALAR_WIDE = {t: np.dtype(t) for t in _PYTHON_SCALAR_KIND}
_PYTHON_SCALAR_DTYPE = {
    x64: {t: (_BOOL if k == "b" else _DEFAULTS[x64][k]) for t, k in _PYTHON_SCALAR_KIND.items()}
    for x64 in (False, True)
}
# Python types whose values are weak (bool is not: a Python bool is just a strong bool_).
_WEAK_PYTHON_TYPES = frozenset((int, float, complex))


def is_python_scalar(x) -> bool:
    """True for values of exactly bool/int/float/complex (np.float64 subclasses float: excluded)."""
    return type(x) in _PYTHON_SCALAR_KIND


def python_scalar_dtype(x) -> np.dtype:
    """The canonical dtype a Python scalar (or Python scalar type) becomes: the x64-aware default."""
    scalar_type = x if isinstance(x, type) else type(x)
    return _PYTHON_SCALAR_DTYPE[config.enable_x64][scalar_type]


def dtype_of(x, canonicalize: bool = True) -> np.dtype:
    """The dtype of any array-like: arrays, NumPy scalars, Python scalars, dtype specifiers.

    This is what `jnp.dtype(x)` does for values in JAX: Python scalars get the default dtype of
    their kind; with `canonicalize`, 64-bit types collapse to 32-bit when x64 is off.
    """
    x_type = type(x)
    if x_type in _PYTHON_SCALAR_KIND:
        if canonicalize:
            return _PYTHON_SCALAR_DTYPE[config.enable_x64][x_type]
        return _PYTHON_SCALAR_WIDE[x_type]
    if x is None:
        raise ValueError("Invalid argument to dtype: None.")
    if isinstance(x, type):
        # A scalar type such as np.float32 or int; `np.float32.dtype` is a descriptor, not a dtype.
        if x in _PYTHON_SCALAR_KIND and canonicalize:
            return _PYTHON_SCALAR_DTYPE[config.enable_x64][x]
        found = np.dtype(x)
    elif isinstance(x, (np.dtype, str)):
        found = np.dtype(x)
    else:
        found = getattr(x, "dtype", None)
        if found is None:
            raise TypeError(f"Cannot determine dtype of {x!r}")
        if not isinstance(found, np.dtype):
            found = np.dtype(found)
    return canonicalize_dtype(found) if canonicalize else found


def is_weakly_typed(x) -> bool:
    """Python int/float/complex values are weak; objects report their `weak_type` attribute."""
    if type(x) in _WEAK_PYTHON_TYPES:
        return True
    if isinstance(x, type):  # a class may define `weak_type` as a property
        return False
    return bool(getattr(x, "weak_type", False))


# ---------------------------------------------------------------------------------------------
# The lattice.


class _WeakNode:
    """A lattice node for a weakly typed value of one kind: `i*`, `f*` or `c*`.

    `widest` is the dtype `promote_types` reports when a join lands on this node (JAX answers
    `promote_types(int, int) == int64` regardless of x64); `kind` picks the default dtype that
    `result_type` reports instead.
    """

    __slots__ = ("kind", "name", "widest")

    def __init__(self, name: str, kind: str, widest):
        self.name, self.kind, self.widest = name, kind, np.dtype(widest)

    def __repr__(self):
        return self.name


WEAK_INT = _WeakNode("i*", "i", int64)
WEAK_FLOAT = _WeakNode("f*", "f", float64)
WEAK_COMPLEX = _WeakNode("c*", "c", complex128)
_WEAK_NODES = (WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX)
_WEAK_NODE_FOR_PYTHON_TYPE = {int: WEAK_INT, float: WEAK_FLOAT, complex: WEAK_COMPLEX}


def _lattice_edges(x64: bool) -> dict:
    """Each node -> the nodes immediately above it (the diagram in the module docstring)."""
    d = np.dtype
    u8, u16, u32, u64 = d(uint8), d(uint16), d(uint32), d(uint64)
    i8, i16, i32, i64 = d(int8), d(int16), d(int32), d(int64)
    bf16, f16, f32, f64 = d(bfloat16), d(float16), d(float32), d(float64)
    c64, c128 = d(complex64), d(complex128)
    edges = {
        _BOOL: [WEAK_INT],
        WEAK_INT: [u8, i8, *_UNSIGNED_SUBBYTE, *_SIGNED_SUBBYTE],
        u8: [u16, i16],
        u16: [u32, i32],
        # Without x64, uint32 meets int32 at int32 rather than at an int64 that would be truncated.
        u32: [u64, i64 if x64 else i32],
        u64: [WEAK_FLOAT],
        i8: [i16],
        i16: [i32],
        i32: [i64],
        i64: [WEAK_FLOAT],
        WEAK_FLOAT: [bf16, f16, WEAK_COMPLEX, *_LOW_PRECISION_FLOATS],
        bf16: [f32],
        f16: [f32],
        f32: [f64, c64],
        f64: [c128],
        WEAK_COMPLEX: [c64],
        c64: [c128],
        c128: [],
    }
    for dead_end in _UNSIGNED_SUBBYTE + _SIGNED_SUBBYTE + _LOW_PRECISION_FLOATS:
        edges[dead_end] = []
    return edges


def _build_join_table(x64: bool) -> dict:
    """All pairwise least upper bounds; pairs without a common upper bound are simply absent."""
    edges = _lattice_edges(x64)
    upper_bounds = {}

    def bounds_of(node):  # reflexive-transitive closure of `edges`
        if node not in upper_bounds:
            found = {node}
            for above in edges[node]:
                found |= bounds_of(above)
            upper_bounds[node] = frozenset(found)
        return upper_bounds[node]

    nodes = list(edges)
    table = {}
    for a in nodes:
        for b in nodes:
            common = bounds_of(a) & bounds_of(b)
            if not common:
                continue
            # The join is the common bound that all the others lie above: the one with most.
            least = max(common, key=lambda c: len(bounds_of(c)))
            if not common <= bounds_of(least):
                raise AssertionError(f"lattice has no unique join for {a} and {b}")
            table[(a, b)] = least
    return table


_JOIN = {}


def _join_table(x64: bool) -> dict:
    """The join table of the x64 mode, built the first time that mode promotes."""
    table = _JOIN.get(x64)
    if table is None:
        table = _JOIN[x64] = _build_join_table(x64)
    return table


_SUBBYTE_SET = frozenset(_UNSIGNED_SUBBYTE + _SIGNED_SUBBYTE)


def _promotion_error(a, b) -> TypePromotionError:
    names = sorted(str(n) for n in (a, b))
    msg = f"Input dtypes {tuple(names)} have no available implicit dtype promotion path."
    exotic = [n for n in (a, b) if n in _LOW_PRECISION_FLOATS or n in _SUBBYTE_SET]
    if exotic:
        msg += (
            f" {exotic[0]} does not take part in implicit promotion; convert explicitly,"
            " e.g. x.astype('float32')."
        )
    return TypePromotionError(msg)


def _join(table: dict, a, b):
    try:
        return table[(a, b)]
    except KeyError:
        for node in (a, b):
            if not isinstance(node, _WeakNode) and node not in _LATTICE_DTYPE_SET:
                raise ValueError(
                    f"dtype={node!r} is not a valid dtype for JAX type promotion."
                ) from None
        raise _promotion_error(a, b) from None


# ---------------------------------------------------------------------------------------------
# promote_types: the strong-type join, as `jnp.promote_types`.

# Weak-node kind for each lattice dtype: weak unsigned values join as `i*`.
_WEAK_NODE_FOR_DTYPE = {
    **{d: WEAK_INT for d in _UNSIGNED + _SIGNED},
    **{d: WEAK_FLOAT for d in _FLOATS},
    **{d: WEAK_COMPLEX for d in _COMPLEXES},
    _BOOL: _BOOL,
}
_promote_cache = {False: {}, True: {}}


def _promote_node(x):
    """A `promote_types` argument as a lattice node: Python int/float/complex are weak nodes."""
    node = _WEAK_NODE_FOR_PYTHON_TYPE.get(x) if isinstance(x, type) else None
    return node if node is not None else np.dtype(x)


def promote_types(a, b) -> np.dtype:
    """`jnp.promote_types`: the join of two dtypes, with no x64 canonicalisation of the answer.

    Python `int`/`float`/`complex` count as weak (`promote_types(int, 'int8') == int8`); a join
    landing on a weak node reports the 64-bit type of that kind, as JAX does. The lattice used
    still depends on x64 (uint32 with int8 is int32 without x64, int64 with it).
    """
    x64 = config.enable_x64
    try:
        return _promote_cache[x64][(a, b)]
    except (KeyError, TypeError):
        pass
    joined = _join(_join_table(x64), _promote_node(a), _promote_node(b))
    result = joined.widest if isinstance(joined, _WeakNode) else joined
    try:
        _promote_cache[x64][(a, b)] = result
    except TypeError:
        pass
    return result


# ---------------------------------------------------------------------------------------------
# result_type / binary_result: promotion of values, weak types included.

# The kind letter used to pick a default dtype for a weak result.
_DEFAULT_KIND = {
    **{d: "u" for d in _UNSIGNED},
    **{d: "i" for d in _SIGNED},
    **{d: "f" for d in _FLOATS},
    **{d: "c" for d in _COMPLEXES},
}


def _promote_canonical(dtypes: list, weaks: list) -> tuple:
    """Join already-canonical (dtype, weak) inputs; returns (canonical dtype, weak).

    Three regimes, following JAX:
      * identical dtypes, not all weak: that dtype, strong (this also lets float0 through);
      * all inputs weak: join the dtypes as if strong and mark the result weak, so that two weak
        int16 values stay an integer instead of being pushed through `i*`;
      * otherwise: weak inputs enter the lattice as `i*`/`f*`/`c*`; the result is weak exactly
        when the join is a weak node (so `int32 + 1.5` is a weak float).
    A weak result then takes the default dtype of its kind; bool is never weak.
    """
    x64 = config.enable_x64
    table = _join_table(x64)
    first = dtypes[0]
    if len(dtypes) == 1:
        result, weak = first, weaks[0]
    elif all(d == first for d in dtypes) and not all(weaks):
        result, weak = first, False
    else:
        all_weak = all(weaks)
        node = first if all_weak or not weaks[0] else _WEAK_NODE_FOR_DTYPE.get(first, first)
        for d, w in zip(dtypes[1:], weaks[1:]):
            other = d if all_weak or not w else _WEAK_NODE_FOR_DTYPE.get(d, d)
            node = _join(table, node, other)
        if isinstance(node, _WeakNode):
            result, weak = node.widest, True
        else:
            result, weak = node, all_weak
    if weak:
        if result == _BOOL:
            weak = False
        elif result in _DEFAULT_KIND:
            result = _DEFAULTS[x64][_DEFAULT_KIND[result]]
    return _canonicalize_uncached(result, x64), weak


_binary_cache = {False: {}, True: {}}


def binary_result(dtype_a, weak_a: bool, dtype_b, weak_b: bool) -> tuple:
    """(dtype, weak) of a binary op on two values; memoised, so usually one dict lookup."""
    key = (dtype_a, weak_a, dtype_b, weak_b)
    x64 = config.enable_x64
    try:
        return _binary_cache[x64][key]
    except KeyError:
        pass
    a, b = canonicalize_dtype(dtype_a), canonicalize_dtype(dtype_b)
    _check_valid(a)
    _check_valid(b)
    result = _promote_canonical([a, b], [bool(weak_a), bool(weak_b)])
    _binary_cache[x64][key] = result
    return result


def _check_valid(np_dtype: np.dtype) -> None:
    if np_dtype not in _VALID_DTYPE_SET:
        raise TypeError(
            f"Value {str(np_dtype)!r} with dtype {np_dtype} is not a valid JAX array type. "
            "Only arrays of numeric types are supported by JAX."
        )


# Per-mode memo for dtype specifiers given to `result_type`: spec -> (canonical, truncated?).
_spec_cache = {False: {}, True: {}}


def _dtype_and_weak(arg) -> tuple:
    """(canonical dtype, weak) of one `result_type` argument."""
    arg_type = type(arg)
    if arg_type in _PYTHON_SCALAR_KIND:
        return _PYTHON_SCALAR_DTYPE[config.enable_x64][arg_type], arg_type in _WEAK_PYTHON_TYPES
    if not isinstance(arg, (type, np.dtype, str)):
        if arg is None:  # JAX reads None as "the default float"
            return default_float_dtype(), False
        found = getattr(arg, "dtype", None)  # arrays, tracers, NumPy scalars
        if found is None:
            raise TypeError(f"Cannot determine dtype of {arg!r}")
        found = canonicalize_dtype(found, allow_extended_dtype=True)
        if found != key_fry:  # an array of typed keys joins only other keys (`_join_keys`)
            _check_valid(found)
        if isinstance(arg, (np.ndarray, np.generic)):  # NumPy values are never weak
            return found, False
        return found, bool(getattr(arg, "weak_type", False))
    # A dtype specifier: a Python type (weak for int/float/complex), a scalar type, a string.
    if arg_type is type and arg in _PYTHON_SCALAR_KIND:
        return _PYTHON_SCALAR_DTYPE[config.enable_x64][arg], arg in _WEAK_PYTHON_TYPES
    per_mode = _spec_cache[config.enable_x64]
    try:
        result, truncated = per_mode[arg]
    except KeyError:
        requested = np.dtype(arg)
        _check_valid(requested)
        result = canonicalize_dtype(requested)
        truncated = result != requested
        per_mode[arg] = result, truncated
    if truncated:
        _warn_truncated(np.dtype(arg), result, "result_type")
    return result, False


def result_type(*args, return_weak_type_flag: bool = False):
    """`jnp.result_type`: promote dtypes, arrays and Python scalars (weak) to one dtype.

    The answer is canonical (32-bit when x64 is off). With `return_weak_type_flag`, returns
    `(dtype, weak)`; `weak` is True when the join is a weak node or every input is weak, which is
    how JAX decides whether the result array is itself weakly typed.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    if len(args) == 2:
        (dtype_a, weak_a), (dtype_b, weak_b) = _dtype_and_weak(args[0]), _dtype_and_weak(args[1])
        if dtype_a == key_fry or dtype_b == key_fry:
            result = _join_keys([dtype_a, dtype_b])
        else:
            result = binary_result(dtype_a, weak_a, dtype_b, weak_b)
    else:
        pairs = [_dtype_and_weak(arg) for arg in args]
        if any(d == key_fry for d, _ in pairs):
            result = _join_keys([d for d, _ in pairs])
        else:
            result = _promote_canonical([d for d, _ in pairs], [w for _, w in pairs])
    if config.numpy_dtype_promotion == "strict":
        _check_strict(args, result[0])
    return result if return_weak_type_flag else result[0]


def _check_strict(args, result: np.dtype) -> None:
    """`jax_numpy_dtype_promotion="strict"`: strong dtypes join only themselves; weakly typed
    values join a strong dtype only where the result is that dtype."""
    pairs = [_dtype_and_weak(arg) for arg in args]
    strong = {d for d, weak in pairs if not weak}
    if len(strong) > 1 or (strong and result not in strong):
        names = ", ".join(
            repr(str(d)) if not weak else repr(str(arg if isinstance(arg, type) else type(arg)))
            for arg, (d, weak) in zip(args, pairs, strict=True)
        )
        raise TypePromotionError(
            f"Input dtypes ({names}) have no available implicit dtype promotion path when "
            "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
            "output type, or set jax_numpy_dtype_promotion=standard."
        )


def _join_keys(found: list) -> tuple:
    """Typed keys stack, concatenate and select with keys only: nothing promotes to them."""
    if any(d != key_fry for d in found):
        names = ", ".join(short_dtype_name(d) for d in found)
        raise TypeError(f"typed PRNG keys do not promote with other dtypes: got {names}")
    return key_fry, False


# ---------------------------------------------------------------------------------------------
# User-supplied dtypes.


def _warn_truncated(requested: np.dtype, result: np.dtype, fun_name: str) -> None:
    warnings.warn(
        f"Explicitly requested dtype {requested} requested in {fun_name} is not available, and "
        f"will be truncated to dtype {result}. To enable more dtypes, set the jax_enable_x64 "
        "configuration option or the JAX_ENABLE_X64 shell environment variable.",
        stacklevel=3,
    )


def check_user_dtype(dtype, fun_name: str | None = None):
    """Validate a `dtype=` argument and return the dtype arrays will really have.

    Python types map to their defaults silently; an explicit 64-bit dtype with x64 off is truncated
    with a warning (JAX's behaviour). Returns None for None, so callers can apply their own default.
    """
    if dtype is None:
        return None
    if isinstance(dtype, type) and dtype in _PYTHON_SCALAR_KIND:
        return _PYTHON_SCALAR_DTYPE[config.enable_x64][dtype]
    if not isinstance(dtype, (type, np.dtype, str, KeyTy)) and hasattr(dtype, "dtype"):
        raise ValueError(
            "Passing an array as a dtype argument is not supported; use dtype=arr.dtype."
        )
    requested = np.dtype(dtype)
    if requested not in _VALID_DTYPE_SET:
        where = f" in {fun_name}" if fun_name else ""
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dtype}{where}")
    result = canonicalize_dtype(requested)
    if result != requested:
        _warn_truncated(requested, result, fun_name or "a function")
    return result


# ---------------------------------------------------------------------------------------------
# Categories and info.

_issubdtype_cache = {}


def _scalar_type(x):
    """The NumPy scalar type (or abstract class) that `x` names, for subclass tests."""
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    if x is None or isinstance(x, (type, np.dtype, str)):
        dtype = np.dtype(x)  # (None: NumPy's default, float64, as JAX's issubdtype reads it)
    else:
        dtype = dtype_of(x, canonicalize=False)
    return prng_key if dtype == key_fry else dtype.type


def issubdtype(a, b) -> bool:
    """`jnp.issubdtype`: NumPy's rule, but ml_dtypes types sit in their proper category.

    So `issubdtype(bfloat16, floating)` and `issubdtype(int4, signedinteger)` are True while
    NumPy alone says False. Like NumPy, a concrete Python type means its 64-bit dtype:
    `issubdtype(float32, float)` is False.
    """
    cacheable = isinstance(a, (type, np.dtype, str)) and isinstance(b, (type, np.dtype, str))
    if cacheable:
        try:
            return _issubdtype_cache[(a, b)]
        except KeyError:
            pass
    a_type, b_type = _scalar_type(a), _scalar_type(b)
    category = _ML_DTYPES_CATEGORY.get(a_type)
    if category is None:
        result = issubclass(a_type, b_type)
    else:
        result = a_type is b_type or issubclass(category, b_type)
    if cacheable:
        _issubdtype_cache[(a, b)] = result
    return result


def _as_dtype(d) -> np.dtype:
    return d if isinstance(d, np.dtype) else np.dtype(d)


def is_float(d) -> bool:
    """Real floating point, including bfloat16 and the 8/6/4-bit floats."""
    return _as_dtype(d) in _FLOAT_SET


def is_complex(d) -> bool:
    return _as_dtype(d) in _COMPLEX_SET


def is_inexact(d) -> bool:
    """Floating or complex: the dtypes that have tangents (everything else gets float0)."""
    return _as_dtype(d) in _INEXACT_SET


def is_int(d) -> bool:
    """Signed or unsigned integer of any width (bool excluded)."""
    return _as_dtype(d) in _INT_SET


def is_unsigned(d) -> bool:
    return _as_dtype(d) in _UNSIGNED_SET


def is_bool(d) -> bool:
    return _as_dtype(d) == _BOOL


# `jnp.finfo`/`jnp.iinfo` are ml_dtypes' versions, which extend NumPy's to bfloat16, float8, int4.
finfo = ml_dtypes.finfo
iinfo = ml_dtypes.iinfo

# Typed PRNG keys (`random.key`, `_src/prng.py`): an extended dtype whose element is one
# Threefry key, two uint32 words. NumPy holds it as a structured dtype, so that eager key arrays
# index, reshape and stack as arrays of keys; jaxprs print it `key<fry>`; lowering gives each key
# a trailing dimension of two ui32 (`lowering.lower.aval_type`).
key_fry = np.dtype([("fry", np.uint32, (2,))])


class extended(np.generic):
    """The category of dtypes that are not NumPy's (`jax.dtypes.extended`): for
    `issubdtype(x.dtype, dtypes.extended)`."""


class prng_key(extended):
    """The category of typed PRNG keys' dtypes (`jax.dtypes.prng_key`)."""


class ExtendedDType(abc.ABC):
    """JAX's base class of dtypes that are not NumPy's (private in JAX: `jax._src.dtypes`),
    for libraries that define one at import (flax's fp8 metadata). A subclass names its
    category (`type`, a subclass of `extended`) and JAX's lowering rules (`_rules`), which
    tracejit does not read: arrays of such a dtype are not built."""

    @property
    @abc.abstractmethod
    def type(self) -> type: ...

    @property
    @abc.abstractmethod
    def _rules(self): ...


class KeyTy(ExtendedDType):
    """The dtype of typed PRNG keys as an array's `.dtype` gives it: printed `key<fry>`, as JAX.

    NumPy holds arrays of keys with the structured dtype `key_fry`; this object stands for it
    where users read a dtype, and is it everywhere else: it compares and hashes equal to it,
    NumPy converts it to it (`np.dtype(keys.dtype)`, through its `dtype` attribute), and its
    other attributes are its."""

    name = "key<fry>"
    type = prng_key
    _rules = None
    dtype = key_fry

    def __eq__(self, other):
        return other is self or key_fry == other

    def __hash__(self):
        return hash(key_fry)

    def __repr__(self):
        return "key<fry>"

    def __getattr__(self, name):
        return getattr(key_fry, name)


key_dtype = KeyTy()


def user_dtype(np_dtype: np.dtype):
    """What an array's `.dtype` gives for its NumPy dtype: `key_dtype` for typed keys."""
    return key_dtype if type(np_dtype) is _VOID_DTYPE and np_dtype == key_fry else np_dtype


_VOID_DTYPE = type(key_fry)  # (a type test is cheaper than reading the dtype's kind)


_SHORT_NAMES = {
    _BOOL: "bool",
    **{d: "u" + d.name[len("uint") :] for d in _UNSIGNED},
    **{d: "i" + d.name[len("int") :] for d in _SIGNED},
    **{d: "f" + d.name[len("float") :] for d in _FLOATS},
    np.dtype(bfloat16): "bf16",
    **{d: "c" + d.name[len("complex") :] for d in _COMPLEXES},
    float0: "float0",
    key_fry: "key<fry>",
}


def dtype_name(dtype) -> str:
    """The name JAX prints for `dtype` in reprs (`ShapedArray(key<fry>[2])`): NumPy's, and
    `key<fry>` for typed keys, whose NumPy dtype is a structured one."""
    np_dtype = _as_dtype(dtype)
    return "key<fry>" if np_dtype == key_fry else np_dtype.name


def short_dtype_name(dtype) -> str:
    """The name the jaxpr printer uses: f32, bf16, i8, u32, c64, f8_e4m3fn, float0, bool."""
    np_dtype = _as_dtype(dtype)
    return _SHORT_NAMES.get(np_dtype, np_dtype.name)


# ---------------------------------------------------------------------------------------------
# Cache invalidation.


def _clear_caches(option_name: str) -> None:
    """Every memo above depends on the x64 flag; drop them all when any option changes."""
    for per_mode in (_canonical_cache, _promote_cache, _binary_cache, _spec_cache):
        for cache in per_mode.values():
            cache.clear()


config.on_update(_clear_caches)
