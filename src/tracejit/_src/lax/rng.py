"""XLA's own random number generators: `rng_bit_generator` (a counter-based generator whose state
is an array of uint32) and `rng_uniform` (XLA's stateful uniform sampler, not reproducible).

Their bits are XLA's (Philox or ThreeFry on XLA's u64[2] state, which a u32[4] key is bitcast
to), which NumPy does not reproduce: eagerly, each runs as a one-equation program compiled by XLA (`run_with_xla`), so
that eager and jit agree. Without a PJRT plugin they are not available. Neither is
differentiable in any useful sense: rng_bit_generator gives integers (zero tangents, as in
JAX), rng_uniform has no derivative in JAX. Under vmap, rng_bit_generator follows JAX's rule
(the first key draws for every member); rng_uniform draws once per member.
"""

from __future__ import annotations

import enum
import functools

import numpy as np

from tracejit._src import dtypes, runtime
from tracejit._src.core import Primitive, ShapedArray, shape_of
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.batching import batch_at_front, batch_rules, move_batch_dim
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.lax import slicing, stacking
from tracejit._src.lax.standard import check_no_sharding, static_ints
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import lower_jaxpr_to_module, lowering_rules


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of `rng_bit_generator`: XLA's default for the platform (Philox on the
    CPU), ThreeFry or Philox."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


def run_with_xla(primitive: Primitive, operands, params) -> list:
    """One equation of `primitive` compiled by XLA and run on NumPy `operands`: the eager
    implementation of what only XLA computes."""
    if not runtime.platform_available():
        raise NotImplementedError(
            f"lax.{primitive.name} runs XLA's generator, and no PJRT plugin is available"
        )
    avals = tuple(ShapedArray(np.shape(x), np.asarray(x).dtype) for x in operands)
    executable = _compiled(primitive, avals, tuple(sorted(params.items())))
    client = runtime.get_client()
    outs = executable.execute_one([client.buffer_from_numpy(np.asarray(x)) for x in operands])
    return [out.to_numpy() for out in outs]


@functools.lru_cache(maxsize=64)
def _compiled(primitive: Primitive, avals, params):
    def one_equation(*xs):
        out = primitive.bind(*xs, **dict(params))
        return list(out) if primitive.multiple_results else [out]

    closed = trace_to_jaxpr(one_equation, list(avals), DebugInfo(primitive, primitive.name))
    text = lower_jaxpr_to_module(closed, f"jit_{primitive.name}")
    return runtime.get_client().compile(text)


def _one_per_member(primitive: Primitive, values, dims, params):
    """A batch rule that binds `primitive` once per batch member and stacks the results (its
    operands are scalars of one member)."""
    size = next(shape_of(v)[d] for v, d in zip(values, dims, strict=True) if d is not None)
    members = [
        stacking.unstack(batch_at_front(v, d, size)) if d is not None else [v] * size
        for v, d in zip(values, dims, strict=True)
    ]
    outs = [primitive.bind(*args, **params) for args in zip(*members, strict=True)]
    if not primitive.multiple_results:
        return stacking.stack(outs), 0
    stacked = [stacking.stack(column) for column in zip(*outs, strict=True)]
    return stacked, [0] * len(stacked)


# --- rng_bit_generator ----------------------------------------------------------------------
rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True)
_BIT_DTYPES = tuple(np.dtype(d) for d in (np.uint8, np.uint16, np.uint32, np.uint64))


def rng_bit_generator(
    key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None
):
    """(new_key, bits): `shape` random bits of the unsigned `dtype` from XLA's generator with
    the uint32 state `key`, and the state to use next."""
    check_no_sharding("rng_bit_generator", out_sharding)
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    if dtype not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name}")
    return tuple(
        rng_bit_generator_p.bind(
            key,
            shape=static_ints("rng_bit_generator", "shape", shape),
            dtype=dtype,
            algorithm=RandomAlgorithm(algorithm),
        )
    )


@rng_bit_generator_p.def_abstract_eval
def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm):
    if (key.dtype, key.shape) not in ((np.uint32, (4,)), (np.uint64, (2,))):
        raise TypeError(
            f"rng_bit_generator: key must be uint32[4] (or uint64[2]), got {key.str_short()}"
        )
    return [ShapedArray(key.shape, key.dtype), ShapedArray(shape, dtype)]


rng_bit_generator_p.def_impl(lambda key, **params: run_with_xla(rng_bit_generator_p, [key], params))
rng_bit_generator_p.def_weak_type_rule(lambda weak_types, params: False)
ad.defjvp_zero(rng_bit_generator_p)


def _rng_bit_generator_lowering(ctx, key, *, shape, dtype, algorithm):
    """XLA's state is u64[2]: a u32[4] key is bitcast to it and back, as JAX lowers it."""
    key_aval = ctx.avals_in[0]
    block = ctx.block
    if key_aval.dtype == np.uint32:
        pairs = block.op1("stablehlo.reshape", [key], hlo.tensor_type((2, 2), np.uint32))
        key = block.op1("stablehlo.bitcast_convert", [pairs], hlo.tensor_type((2,), np.uint64))
    name = {0: "DEFAULT", 1: "THREE_FRY", 2: "PHILOX"}[int(algorithm)]
    new_key, bits = block.op(
        "stablehlo.rng_bit_generator",
        [key],
        [hlo.tensor_type((2,), np.uint64), hlo.tensor_type(shape, dtype)],
        {"rng_algorithm": f"#stablehlo<rng_algorithm {name}>"},
    )
    if key_aval.dtype == np.uint32:
        pairs = block.op1(
            "stablehlo.bitcast_convert", [new_key], hlo.tensor_type((2, 2), np.uint32)
        )
        new_key = block.op1("stablehlo.reshape", [pairs], hlo.tensor_type((4,), np.uint32))
    return [new_key, bits]


lowering_rules[rng_bit_generator_p] = _rng_bit_generator_lowering


def _rng_bit_generator_batch(values, dims, *, shape, **params):
    """JAX's rule, which is not a loop over the keys: the first key draws the bits of every
    member at once, and only its slot of the keys advances."""
    (keys,), (bd,) = values, dims
    keys = move_batch_dim(keys, bd, 0)
    size = shape_of(keys)[0]
    new_key, bits = rng_bit_generator_p.bind(
        slicing.index_in_dim(keys, 0, 0, keepdims=False), shape=(size, *shape), **params
    )
    return [slicing.dynamic_update_index_in_dim(keys, new_key, 0, 0), bits], [0, 0]


batch_rules[rng_bit_generator_p] = _rng_bit_generator_batch

# --- rng_uniform ----------------------------------------------------------------------------
rng_uniform_p = Primitive("rng_uniform")


def rng_uniform(a, b, shape):
    """`shape` samples uniform in [a, b) from XLA's stateful generator: different on every
    call, not reproducible (use `tracejit.random` for reproducible numbers)."""
    return rng_uniform_p.bind(a, b, shape=static_ints("rng_uniform", "shape", shape))


@rng_uniform_p.def_abstract_eval
def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.dtype != b.dtype or a.shape or b.shape:
        raise TypeError(
            f"rng_uniform: bounds must be scalars of one dtype, got {a.str_short()} and "
            f"{b.str_short()}"
        )
    if a.dtype == np.bool_ or dtypes.is_complex(a.dtype):
        raise TypeError(f"rng_uniform: unsupported dtype {a.dtype.name}")
    return ShapedArray(shape, a.dtype)


rng_uniform_p.def_impl(lambda a, b, **params: run_with_xla(rng_uniform_p, [a, b], params)[0])
rng_uniform_p.def_weak_type_rule(lambda weak_types, params: False)
ad.not_differentiable(rng_uniform_p, "JAX defines none: the samples are not functions of a, b")


def _rng_uniform_lowering(ctx, a, b, *, shape):
    dims = ctx.constant(np.array(shape, np.int64), np.int64)
    return ctx.op(
        "stablehlo.rng", [a, b, dims], {"rng_distribution": "#stablehlo<rng_distribution UNIFORM>"}
    )


lowering_rules[rng_uniform_p] = _rng_uniform_lowering
batch_rules[rng_uniform_p] = lambda values, dims, **params: _one_per_member(
    rng_uniform_p, values, dims, params
)
