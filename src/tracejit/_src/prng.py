"""The counter-based PRNG: the Threefry-2x32 block cipher and the key-array primitives.

A key is two uint32 words. Random numbers are the cipher's encryption of counters under a key:
`random_bits(key, shape)` encrypts the counters 0, 1, ... of its elements, `random_split`
encrypts the counters of the new keys, `random_fold_in` one counter given by the user. Nothing
is stateful, so every transformation sees plain functions of the key.

Inside jaxprs keys are typed (`key<fry>[]`, the dtype `dtypes.key_fry`), as JAX prints them:

    { lambda ; a:u32[2]. let
        b:key<fry>[] = random_wrap[impl=fry] a
        c:key<fry>[2] = random_split[shape=(2,)] b
        d:u32[2,2] = random_unwrap c
      in (d,) }

`random_wrap`/`random_unwrap` convert between typed keys and their uint32 words (a trailing
dimension of 2). `random_seed`, `random_bits`, `random_split` and `random_fold_in` are each
written once as a function of the words in lax operations (`_seed_words`, `_bits_words`, ...):
their eager implementation evaluates its jaxpr on NumPy, their lowering emits it, so that the
two cannot disagree. `threefry2x32` is the one primitive of the cipher itself; its NumPy
implementation and its lowering share `_threefry_rounds`, written over the operations given.

Two ways of numbering the counters exist, as in JAX (`jax_threefry_partitionable`, on by
default as in JAX 0.10.2): the partitionable one gives element `i` the counter pair `(0, i)`
and xors the two cipher words; the original one encrypts the counters `0 .. n-1` split in two
halves and concatenates the halves.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from tracejit._src import dtypes
from tracejit._src.accel import accel
from tracejit._src.config import config
from tracejit._src.core import Primitive, ShapedArray, get_aval, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import (
    batch_at_front,
    batch_rules,
    move_batch_dim,
    vmap_flat,
)
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.lax import binary, bitwise, conversions, reductions, shapes, slicing, special
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import key_words_rule, lowering_rules, takes_key_words

UINT32 = np.dtype(np.uint32)
KEY_SHAPE = (2,)  # the words of one Threefry key
UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: UINT32, 64: np.dtype(np.uint64)}

# --- threefry2x32 ---------------------------------------------------------------------------
threefry2x32_p = Primitive("threefry2x32", multiple_results=True)


def threefry2x32(key1, key2, x1, x2):
    """The Threefry-2x32 block cipher (20 rounds): the encryption of the word pairs
    `(x1, x2)` under the key `(key1, key2)`, elementwise; uint32 operands broadcast as NumPy
    broadcasts (trailing dimensions line up)."""
    return threefry2x32_p.bind(key1, key2, x1, x2)


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_SCHEDULE_PARITY = 0x1BD11BDA


def _threefry_rounds(add, xor, rotate_left, constant, key1, key2, x1, x2):
    """Threefry-2x32 over the operations given (NumPy's or StableHLO emitters): five groups of
    four rounds, with a key injection after each group."""
    keys = (key1, key2, xor(xor(key1, key2), constant(_KEY_SCHEDULE_PARITY)))
    x1, x2 = add(x1, keys[0]), add(x2, keys[1])
    for group in range(5):
        for rotation in _ROTATIONS[group % 2]:
            x1 = add(x1, x2)
            x2 = xor(rotate_left(x2, rotation), x1)
        x1 = add(x1, keys[(group + 1) % 3])
        x2 = add(add(x2, keys[(group + 2) % 3]), constant(group + 1))
    return x1, x2


@threefry2x32_p.def_impl
def _threefry2x32_impl(key1, key2, x1, x2):
    operands = (key1, key2, x1, x2)
    shape = np.broadcast_shapes(*(np.shape(a) for a in operands))
    count = math.prod(shape)
    if accel is not None:
        # One element or all of them per operand, as the C cipher takes them.
        flat = [
            np.ascontiguousarray(a if np.size(a) in (1, count) else np.broadcast_to(a, shape))
            for a in operands
        ]
        return [y.reshape(shape) for y in accel.threefry2x32(*flat, count)]
    # Flat arrays of at least one element: uint32 arithmetic on arrays wraps silently (NumPy
    # warns on overflowing scalars).
    flat = [np.broadcast_to(a, shape).reshape(-1) for a in operands]
    out = _threefry_rounds(
        np.add,
        np.bitwise_xor,
        lambda x, r: (x << np.uint32(r)) | (x >> np.uint32(32 - r)),
        np.uint32,
        *flat,
    )
    return [o.reshape(shape) for o in out]


@threefry2x32_p.def_abstract_eval
def _threefry2x32_abstract_eval(*avals):
    if any(aval.dtype != UINT32 for aval in avals):
        got = ", ".join(aval.str_short() for aval in avals)
        raise TypeError(f"threefry2x32 requires uint32 arguments, got {got}")
    try:
        shape = np.broadcast_shapes(*(aval.shape for aval in avals))
    except ValueError:
        got = ", ".join(str(aval.shape) for aval in avals)
        raise TypeError(f"threefry2x32: shapes {got} do not broadcast") from None
    return [ShapedArray(shape, UINT32)] * 2


ad.defjvp_zero(threefry2x32_p)


def _threefry2x32_lowering(ctx, *operands):
    out_type = hlo.tensor_type(ctx.avals_out[0].shape, UINT32)
    rank = len(ctx.avals_out[0].shape)
    block = ctx.block

    def broadcast(x, aval):
        if aval.shape == ctx.avals_out[0].shape:
            return x
        dims = list(range(rank - aval.ndim, rank))
        return block.op1(
            "stablehlo.broadcast_in_dim",
            [x],
            out_type,
            {"broadcast_dimensions": hlo.i64_array(dims)},
        )

    def op(name):
        return lambda x, y: block.op1(name, [x, y], out_type)

    def constant(value):
        return block.constant(np.full(ctx.avals_out[0].shape, value, UINT32))

    def rotate_left(x, r):
        left = op("stablehlo.shift_left")(x, constant(r))
        return op("stablehlo.or")(left, op("stablehlo.shift_right_logical")(x, constant(32 - r)))

    args = [broadcast(x, aval) for x, aval in zip(operands, ctx.avals_in, strict=True)]
    add, xor = op("stablehlo.add"), op("stablehlo.xor")
    return list(_threefry_rounds(add, xor, rotate_left, constant, *args))


lowering_rules[threefry2x32_p] = _threefry2x32_lowering


def _threefry2x32_batch(values, dims):
    # Batched operands get the batch dimension first and the full rank, so that broadcasting
    # lines the batch up with the others' (unbatched operands broadcast over it).
    rank = max(len(shape_of(v)) - (d is not None) for v, d in zip(values, dims, strict=True))
    operands = []
    for value, dim in zip(values, dims, strict=True):
        if dim is not None:
            value = move_batch_dim(value, dim, 0)
            shape = shape_of(value)
            value = shapes.reshape(value, (shape[0],) + (1,) * (rank + 1 - len(shape)) + shape[1:])
        operands.append(value)
    return threefry2x32_p.bind(*operands), [0, 0]


batch_rules[threefry2x32_p] = _threefry2x32_batch


# --- key words: the algorithms in lax operations ---------------------------------------------
# Each takes and returns uint32 key words (a trailing dimension of 2) and static parameters;
# `_staged` makes one jaxpr of each per operand type and parameters, which the key primitives'
# implementations evaluate and their lowerings emit.


def _word_pair(words):
    """The two uint32 words of keys of shape `K` (words `K + (2,)`), each of shape `K`."""
    shape = shape_of(words)[:-1]
    zeros, limits = (0,) * len(shape), tuple(shape)
    return tuple(
        shapes.reshape(slicing.slice(words, (*zeros, i), (*limits, i + 1)), shape) for i in (0, 1)
    )


def _join_words(word1, word2):
    shape = shape_of(word1)
    return shapes.concatenate(
        [shapes.reshape(word1, (*shape, 1)), shapes.reshape(word2, (*shape, 1))], len(shape)
    )


def _keys_against(words, rank: int):
    """The key words of keys `K`, reshaped to `K + (1,) * rank` to broadcast against counters
    of that rank."""
    return [shapes.reshape(w, (*shape_of(w), *(1,) * rank)) for w in _word_pair(words)]


def _counters(shape):
    """The counters of the elements of `shape`, row-major, as uint32 (JAX counts in two words;
    the high one is 0 below 2**32 elements)."""
    if math.prod(shape) >= 2**32:
        raise NotImplementedError("random values of more than 2**32 elements at once")
    return shapes.reshape(shapes.iota(UINT32, math.prod(shape)), shape)


def _encrypt_counters(words, count: int):
    """JAX's `threefry_2x32` of keys: the encryption of the counters `0 .. count-1`, split in
    two halves (padded with a zero to an even number), the halves' results concatenated."""
    half = -(-count // 2)
    counters = shapes.iota(UINT32, count)
    if count % 2:
        counters = shapes.concatenate([counters, np.zeros(1, UINT32)], 0)
    x1 = slicing.slice(counters, (0,), (half,))
    x2 = slicing.slice(counters, (half,), (2 * half,))
    key1, key2 = _keys_against(words, 1)
    out = shapes.concatenate(threefry2x32(key1, key2, x1, x2), len(shape_of(words)) - 1)
    prefix = shape_of(out)[:-1]
    return slicing.slice(out, (0,) * len(shape_of(out)), (*prefix, count))


def _seed_words(seeds, *, impl):
    """JAX's `threefry_seed`: the high and low 32 bits of each integer seed (`impl` is the
    one implementation, Threefry)."""
    low = conversions.convert_element_type(seeds, UINT32)
    dtype = get_aval(seeds).dtype
    if dtype.itemsize == 8:
        high = bitwise.shift_right_logical(seeds, np.array(32, dtype))
        high = conversions.convert_element_type(high, UINT32)
    else:
        high = binary.sub(low, low)
    return _join_words(high, low)


def _split_keys_words(words, *, shape):
    rank = len(shape)
    if config.threefry_partitionable:
        key1, key2 = _keys_against(words, rank)
        counters = _counters(shape)
        zeros = binary.sub(counters, counters)
        return _join_words(*threefry2x32(key1, key2, zeros, counters))
    bits = _encrypt_counters(words, 2 * math.prod(shape))
    return shapes.reshape(bits, (*shape_of(words)[:-1], *shape, 2))


def _fold_in_words(words, messages):
    key1, key2 = _word_pair(words)
    zeros = binary.sub(messages, messages)
    return _join_words(*threefry2x32(key1, key2, zeros, messages))


def _bits_words(words, *, bit_width, shape):
    keys_shape = shape_of(words)[:-1]
    dtype = UINT_DTYPES[bit_width]
    if config.threefry_partitionable:
        key1, key2 = _keys_against(words, len(shape))
        counters = _counters(shape)
        bits1, bits2 = threefry2x32(key1, key2, binary.sub(counters, counters), counters)
        if bit_width == 64:
            high = conversions.convert_element_type(bits1, dtype)
            low = conversions.convert_element_type(bits2, dtype)
            return bitwise.or_(bitwise.shift_left(high, np.uint64(32)), low)
        return conversions.convert_element_type(bitwise.xor(bits1, bits2), dtype)
    size = math.prod(shape)
    count = -(-bit_width * size // 32)
    if count >= 2**32 - 1:
        raise NotImplementedError("random bits of more than 2**32 - 2 words at once")
    bits = _encrypt_counters(words, count)
    if bit_width == 64:  # the first half gives the high words, the second the low ones
        half = count // 2
        starts = (0,) * len(keys_shape)
        high = slicing.slice(bits, (*starts, 0), (*keys_shape, half))
        low = slicing.slice(bits, (*starts, half), (*keys_shape, count))
        high, low = (conversions.convert_element_type(w, dtype) for w in (high, low))
        bits = bitwise.or_(bitwise.shift_left(high, np.uint64(32)), low)
    elif bit_width < 32:  # each word gives 32 // bit_width values, low bits first
        per_word = 32 // bit_width
        shifts = binary.mul(shapes.iota(UINT32, per_word), np.uint32(bit_width))
        expanded = shapes.reshape(bits, (*keys_shape, count, 1))
        parts = bitwise.shift_right_logical(
            shapes.broadcast_in_dim(
                expanded, (*keys_shape, count, per_word), tuple(range(len(keys_shape) + 2))
            ),
            shapes.broadcast_in_dim(shifts, (*keys_shape, count, per_word), (len(keys_shape) + 1,)),
        )
        parts = shapes.reshape(parts, (*keys_shape, count * per_word))
        parts = slicing.slice(parts, (0,) * (len(keys_shape) + 1), (*keys_shape, size))
        bits = conversions.convert_element_type(parts, dtype)
    return shapes.reshape(bits, (*keys_shape, *shape))


# --- key primitives: shared machinery -------------------------------------------------------


def words_of(keys: np.ndarray) -> np.ndarray:
    """The uint32 words of a NumPy key array: shape `K + (2,)`, a view."""
    return np.asarray(keys)["fry"]


def keys_of(words: np.ndarray) -> np.ndarray:
    """The NumPy key array whose words are `words` (shape `K + (2,)`)."""
    return np.ascontiguousarray(words, UINT32).view(dtypes.key_fry)[..., 0]


def _words_aval(aval: ShapedArray) -> ShapedArray:
    if aval.dtype == dtypes.key_fry:
        return ShapedArray((*aval.shape, *KEY_SHAPE), UINT32)
    return aval.strip_weak_type()


@functools.lru_cache(maxsize=256)
def _staged(words_fun, avals: tuple, params: tuple, partitionable: bool):
    """The jaxpr of `words_fun` on operands of `avals` (keys as their words); `partitionable`
    (the config option the algorithms read) is part of the cache key."""
    return trace_to_jaxpr(
        lambda *args: [words_fun(*args, **dict(params))],
        [_words_aval(aval) for aval in avals],
        DebugInfo(words_fun, "the PRNG"),
    )


def words_impl(words_fun, returns_keys: bool):
    """The eager implementation of a key primitive: `words_fun`'s jaxpr on NumPy."""

    def impl(*operands, **params):
        avals = tuple(ShapedArray(np.shape(x), x.dtype) for x in operands)
        closed = _staged(words_fun, avals, tuple(params.items()), config.threefry_partitionable)
        words = [words_of(x) if x.dtype == dtypes.key_fry else x for x in operands]
        (out,) = eval_jaxpr_numpy(closed.jaxpr, closed.consts, words)
        return keys_of(out) if returns_keys else out

    return impl


def words_lowering(words_fun):
    """The lowering of a key primitive: `words_fun`'s jaxpr, emitted in place (a key tensor is
    its words: `tensor<...x2xui32>`)."""

    def rule(ctx, *operands, **params):
        partitionable = config.threefry_partitionable
        closed = _staged(words_fun, tuple(ctx.avals_in), tuple(params.items()), partitionable)
        (out,) = ctx.lower_sub_jaxpr(ctx.block, closed, list(operands))
        return out

    return rule


def _lower_on_key_words(ctx, primitive, operands, params):
    """Lowers `primitive` (one that knows only NumPy dtypes: slice, gather, select_n, ...) on
    typed keys: as the same operation vmapped over the trailing dimension of their words.
    Comparing keys (`eq`, `ne`) compares all their words."""
    is_key = [aval.dtype == dtypes.key_fry for aval in ctx.avals_in]
    in_dims = [len(aval.shape) if k else None for aval, k in zip(ctx.avals_in, is_key, strict=True)]

    def on_words(*words):
        def bind(*xs):
            out = primitive.bind(*xs, **params)
            return out if primitive.multiple_results else [out]

        outs, dims = vmap_flat(bind, list(words), in_dims, KEY_SHAPE[0])
        results = []
        for out, dim, aval in zip(outs, dims, ctx.avals_out, strict=True):
            word_axis = len(aval.shape)
            out = move_batch_dim(batch_at_front(out, dim, KEY_SHAPE[0]), 0, word_axis)
            if aval.dtype == dtypes.key_fry:
                results.append(out)
            elif primitive.name in ("eq", "ne"):
                combine = reductions.reduce_and if primitive.name == "eq" else reductions.reduce_or
                results.append(combine(out, (word_axis,)))
            else:
                raise TypeError(f"{primitive.name} does not accept typed PRNG keys")
        return results

    avals = [_words_aval(a) if k else a for a, k in zip(ctx.avals_in, is_key, strict=True)]
    closed = trace_to_jaxpr(on_words, avals, DebugInfo(on_words, "typed keys"))
    outs = ctx.lower_sub_jaxpr(ctx.block, closed, list(operands))
    return outs if primitive.multiple_results else outs[0]


key_words_rule.append(_lower_on_key_words)


def _check_keys(name: str, aval: ShapedArray) -> None:
    if aval.dtype != dtypes.key_fry:
        raise TypeError(f"{name} accepts a typed key array, got {aval.str_short()}")


def keys_at_front(keys, dim: int):
    """Batched keys with their batch dimension first, moved as words (a key has no layout of
    its own in lowering but its words')."""
    if dim == 0:
        return keys
    return random_wrap(move_batch_dim(random_unwrap(keys), dim, 0), impl="fry")


# --- random_seed ----------------------------------------------------------------------------
random_seed_p = Primitive("random_seed")


def random_seed(seeds, impl):
    """Keys made from integer seeds (elementwise): a seed's high and low 32 bits are the key's
    words."""
    return random_seed_p.bind(seeds, impl=impl)


random_seed_p.def_impl(words_impl(_seed_words, returns_keys=True))


@random_seed_p.def_abstract_eval
def _random_seed_abstract_eval(seeds, *, impl):
    if not dtypes.is_int(seeds.dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short()}")
    return ShapedArray(seeds.shape, dtypes.key_fry)


ad.defjvp_zero(random_seed_p)
lowering_rules[random_seed_p] = words_lowering(_seed_words)
takes_key_words(random_seed_p)
batch_rules[random_seed_p] = lambda values, dims, **params: (
    random_seed_p.bind(*values, **params),
    dims[0],
)

# --- random_wrap ----------------------------------------------------------------------------
random_wrap_p = Primitive("random_wrap")


def random_wrap(base, impl):
    """The typed keys whose uint32 words are `base` (a trailing dimension of 2)."""
    return random_wrap_p.bind(base, impl=impl)


random_wrap_p.def_impl(lambda base, *, impl: keys_of(base))


@random_wrap_p.def_abstract_eval
def _random_wrap_abstract_eval(base, *, impl):
    if base.shape[-1:] != KEY_SHAPE:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); "
            f"got shape={base.shape} for impl={impl}"
        )
    if base.dtype != UINT32:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
            f"got dtype={base.dtype.name}"
        )
    return ShapedArray(base.shape[:-1], dtypes.key_fry)


ad.defjvp_zero(random_wrap_p)
lowering_rules[random_wrap_p] = lambda ctx, base, *, impl: base  # a key tensor is its words
takes_key_words(random_wrap_p)


def _random_wrap_batch(values, dims, *, impl):
    (base,), (dim,) = values, dims
    return random_wrap_p.bind(move_batch_dim(base, dim, 0), impl=impl), 0


batch_rules[random_wrap_p] = _random_wrap_batch

# --- random_unwrap --------------------------------------------------------------------------
random_unwrap_p = Primitive("random_unwrap")


def random_unwrap(keys):
    """The uint32 words of typed keys (a trailing dimension of 2)."""
    return random_unwrap_p.bind(keys)


random_unwrap_p.def_impl(lambda keys: np.array(words_of(keys)))


@random_unwrap_p.def_abstract_eval
def _random_unwrap_abstract_eval(keys):
    _check_keys("random_unwrap", keys)
    return ShapedArray((*keys.shape, *KEY_SHAPE), UINT32)


ad.defjvp_zero(random_unwrap_p)
lowering_rules[random_unwrap_p] = lambda ctx, keys: keys
takes_key_words(random_unwrap_p)
batch_rules[random_unwrap_p] = lambda values, dims: (random_unwrap_p.bind(*values), dims[0])

# --- random_bits ----------------------------------------------------------------------------
random_bits_p = Primitive("random_bits")


def random_bits(keys, bit_width: int, shape: tuple):
    """Uniformly random unsigned integers of `bit_width` bits, of shape `keys.shape + shape`."""
    return random_bits_p.bind(keys, bit_width=bit_width, shape=shape)


random_bits_p.def_impl(words_impl(_bits_words, returns_keys=False))


@random_bits_p.def_abstract_eval
def _random_bits_abstract_eval(keys, *, bit_width, shape):
    _check_keys("random_bits", keys)
    if bit_width not in UINT_DTYPES:
        raise TypeError(f"random_bits: bit_width must be one of 8, 16, 32, 64; got {bit_width}")
    return ShapedArray((*keys.shape, *shape), UINT_DTYPES[bit_width])


ad.defjvp_zero(random_bits_p)
lowering_rules[random_bits_p] = words_lowering(_bits_words)
takes_key_words(random_bits_p)


def _random_bits_batch(values, dims, **params):
    return random_bits_p.bind(keys_at_front(values[0], dims[0]), **params), 0


batch_rules[random_bits_p] = _random_bits_batch

# --- random_split ---------------------------------------------------------------------------
random_split_p = Primitive("random_split")


def random_split(keys, shape: tuple):
    """New keys, `shape` of them for each key: `keys.shape + shape`."""
    return random_split_p.bind(keys, shape=shape)


random_split_p.def_impl(words_impl(_split_keys_words, returns_keys=True))


@random_split_p.def_abstract_eval
def _random_split_abstract_eval(keys, *, shape):
    _check_keys("random_split", keys)
    return ShapedArray((*keys.shape, *shape), dtypes.key_fry)


ad.defjvp_zero(random_split_p)
lowering_rules[random_split_p] = words_lowering(_split_keys_words)
takes_key_words(random_split_p)


def _random_split_batch(values, dims, *, shape):
    return random_split_p.bind(keys_at_front(values[0], dims[0]), shape=shape), 0


batch_rules[random_split_p] = _random_split_batch

# --- random_fold_in -------------------------------------------------------------------------
random_fold_in_p = Primitive("random_fold_in")


def random_fold_in(keys, msgs):
    """Keys derived from `keys` and the uint32 messages `msgs` (broadcast together)."""
    return random_fold_in_p.bind(keys, msgs)


random_fold_in_p.def_impl(words_impl(_fold_in_words, returns_keys=True))


@random_fold_in_p.def_abstract_eval
def _random_fold_in_abstract_eval(keys, msgs):
    _check_keys("random_fold_in", keys)
    if msgs.dtype != UINT32:
        raise TypeError(f"random_fold_in requires uint32 messages, got {msgs.str_short()}")
    try:
        shape = np.broadcast_shapes(keys.shape, msgs.shape)
    except ValueError:
        raise TypeError(
            f"random_fold_in: keys of shape {keys.shape} and messages of shape {msgs.shape} "
            "do not broadcast"
        ) from None
    return ShapedArray(shape, dtypes.key_fry)


ad.defjvp_zero(random_fold_in_p)
lowering_rules[random_fold_in_p] = words_lowering(_fold_in_words)
takes_key_words(random_fold_in_p)


def _random_fold_in_batch(values, dims):
    # Both operands batched first and at the result's rank, so that they broadcast (a key is
    # reshaped, which keeps its words in place; never transposed).
    rank = max(len(shape_of(v)) - (d is not None) for v, d in zip(values, dims, strict=True))
    operands = []
    for value, dim in zip(values, dims, strict=True):
        if dim is not None:
            if get_aval(value).dtype == dtypes.key_fry:
                value = keys_at_front(value, dim)
            else:
                value = move_batch_dim(value, dim, 0)
            shape = shape_of(value)
            value = shapes.reshape(value, (shape[0],) + (1,) * (rank + 1 - len(shape)) + shape[1:])
        operands.append(value)
    return random_fold_in_p.bind(*operands), 0


batch_rules[random_fold_in_p] = _random_fold_in_batch


# --- floats from bits: the samplers the distributions build on -------------------------------
# (here, below the distributions of `_src/random.py`, because `random_gamma`'s rejection loop
# draws them too)


def uniform(typed, shape, dtype, minval, maxval):
    """Floats of `shape` from the typed key `typed`, in [minval, maxval): random mantissa bits under the exponent of 1.0 give
    [1, 2), shifted and scaled."""
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = nbits if nmant >= 8 else 8  # enough bits for the mantissa
    uint = UINT_DTYPES[nbits]
    minval = conversions.convert_element_type(minval, dtype)
    maxval = conversions.convert_element_type(maxval, dtype)
    minval = shapes.broadcast_to_rank(minval, len(shape))
    maxval = shapes.broadcast_to_rank(maxval, len(shape))
    random = random_bits(typed, rng_bits, shape)
    if rng_bits != nbits:
        random = conversions.convert_element_type(random, uint)
    float_bits = bitwise.or_(
        bitwise.shift_right_logical(random, np.array(rng_bits - nmant, uint)),
        np.array(1.0, dtype).view(uint),
    )
    floats = binary.sub(conversions.bitcast_convert_type(float_bits, dtype), np.array(1.0, dtype))
    scaled = binary.add(binary.mul(floats, binary.sub(maxval, minval)), minval)
    return binary.max(minval, shapes.reshape(scaled, shape))


def normal_real(typed, shape, dtype, uniform=uniform):
    """Standard normal floats of a real `dtype`: sqrt(2) erfinv(u), u uniform in (-1, 1).
    `uniform` draws u: `tracejit.random` passes its jitted sampler, to print as JAX does."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform(typed, shape, dtype, lo, np.array(1.0, dtype))
    return binary.mul(np.array(np.sqrt(2), dtype), special.erf_inv(u))


# --- random_clone -----------------------------------------------------------------------------
random_clone_p = Primitive("random_clone")


def random_clone(keys):
    """The same keys, as a new value: what JAX's key-reuse checker counts as a fresh key."""
    return random_clone_p.bind(keys)


random_clone_p.def_impl(lambda keys: keys)
random_clone_p.def_abstract_eval(lambda keys: keys.strip_weak_type())
ad.defjvp_zero(random_clone_p)
lowering_rules[random_clone_p] = lambda ctx, keys: keys
takes_key_words(random_clone_p)
batch_rules[random_clone_p] = lambda values, dims: (random_clone_p.bind(*values), dims[0])
