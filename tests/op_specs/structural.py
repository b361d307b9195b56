"""Primitives that move, select or reinterpret elements: shapes, slicing, conversions and
selection. Their parameters are fixed by each row's function; the operands have fixed shapes."""

import numpy as np
from helpers import ALL, FLOATS, INEXACT, REAL, OpSpec, f32, i8, i32, shaped, u32

from tracejit import lax


def _pad(x, value, config):
    """lax.pad for non-negative low/high padding: elements at low + i * (interior + 1)."""
    dims = list(zip(x.shape, config, strict=True))
    out = np.full([lo + hi + n + max(n - 1, 0) * inner for n, (lo, hi, inner) in dims], value)
    step = [slice(lo, lo + (n - 1) * (inner + 1) + 1, inner + 1) for n, (lo, _, inner) in dims]
    out[tuple(step)] = x
    return out


PAD_CONFIG = ((1, 2, 1), (0, 1, 0))


def _select_operands(rng, shapes, dtype):
    which = rng.random(shapes[0]) < 0.5
    return (which, *shaped()(rng, shapes[1:], dtype))


def _clamp_operands(rng, shapes, dtype):
    (x,) = shaped(-3, 3, int_range=(-3, 3))(rng, shapes, dtype)
    return np.asarray(-1, dtype), x, np.asarray(1, dtype)


def _index_operands(rng, shapes, dtype):
    """The operand and (for dynamic_update_slice) the update, then one int32 start index per
    dimension, some too large (XLA clamps them)."""
    arrays = shaped()(rng, shapes, dtype)
    starts = [np.int32(rng.integers(0, n + 1)) for n in shapes[0]]
    return (*arrays, *starts)


def _clamped(starts, shape, sizes):
    return tuple(
        slice(s, s + k)
        for s, k in zip(np.clip(starts, 0, np.subtract(shape, sizes)), sizes, strict=True)
    )


def _dynamic_slice(x, i, j):
    return x[_clamped((i, j), x.shape, (1, 2))]


def _dynamic_update_slice(x, u, i, j):
    out = x.copy()
    out[_clamped((i, j), x.shape, u.shape)] = u
    return out


STRUCTURAL = [
    OpSpec(
        "broadcast_in_dim",
        lambda x: lax.broadcast_in_dim(x, (2, 4, 3), (0, 2)),
        lambda x: np.broadcast_to(x[:, None, :], (2, 4, 3)),
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "reshape",
        lambda x: lax.reshape(x, (3, 2)),
        lambda x: x.reshape(3, 2),
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "transpose",
        lambda x: lax.transpose(x, (1, 0)),
        np.transpose,
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "squeeze",
        lambda x: lax.squeeze(x, (1,)),
        lambda x: np.squeeze(x, 1),
        ALL,
        shapes=((2, 1, 3),),
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "rev",
        lambda x: lax.rev(x, (1,)),
        lambda x: x[:, ::-1],
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "pad",
        lambda x, value: lax.pad(x, value, PAD_CONFIG),
        lambda x, value: _pad(x, value, PAD_CONFIG),
        ALL,
        shaped(),
        (((2, 3), ()),),
        grad_argnums=(0, 1),
        linear=True,
    ),
    OpSpec(
        "concatenate",
        lambda x, y: lax.concatenate([x, y], 1),
        lambda x, y: np.concatenate([x, y], 1),
        ALL,
        shaped(),
        (((2, 3), (2, 2)),),
        grad_argnums=(0, 1),
        linear=True,
    ),
    OpSpec(
        "copy",
        lax.copy_p.bind,  # no public wrapper, as in JAX
        np.copy,
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec("stop_gradient", lax.stop_gradient, lambda x: x, INEXACT),  # binds for inexact only
    OpSpec(
        "convert_element_type",
        lambda x: lax.convert_element_type(x, np.float32),
        lambda x: x,
        REAL,
        out=lambda d: f32,
        grad_argnums=(0,),
        grad_tol=5e-3,  # finite differences of a float32 result
        linear=True,
    ),
    OpSpec(
        "bitcast_convert_type",
        lambda x: lax.bitcast_convert_type(x, np.int32),
        lambda x: x.view(np.int32),
        [f32, i32, u32],
        out=lambda d: i32,
        exact=True,
    ),
    OpSpec(
        "select_n",
        lax.select_n,
        lambda which, x, y: np.where(which, y, x),
        ALL,
        _select_operands,
        (((2, 3), (2, 3), (2, 3)),),
        grad_argnums=(1, 2),
        linear=True,
    ),
    OpSpec(
        "clamp",
        lax.clamp,
        np.clip,
        [*FLOATS, i32, i8],
        _clamp_operands,
        (((2, 3),),),
        grad_argnums=(1,),
    ),
    OpSpec(
        "slice",
        lambda x: lax.slice(x, (0, 1), (2, 3), (1, 2)),
        lambda x: x[0:2, 1:3:2],
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "dynamic_slice",
        lambda x, i, j: lax.dynamic_slice(x, (i, j), (1, 2)),
        _dynamic_slice,
        ALL,
        _index_operands,
        (((2, 3),),),
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "dynamic_update_slice",
        lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
        _dynamic_update_slice,
        ALL,
        _index_operands,
        (((2, 3), (1, 2)),),
        grad_argnums=(0, 1),
        linear=True,
    ),
    OpSpec(
        "split",
        lambda x: lax.split(x, (1, 2), axis=1),
        lambda x: tuple(np.split(x, [1], axis=1)),
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "stack",
        lambda x, y: lax.stack([x, y], axis=1),
        lambda x, y: np.stack([x, y], axis=1),
        ALL,
        shaped(),
        (((2, 3), (2, 3)),),
        grad_argnums=(0, 1),
        linear=True,
    ),
    OpSpec(
        "unstack",
        lambda x: lax.unstack(x, axis=1),
        lambda x: tuple(x[:, i] for i in range(x.shape[1])),
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "tile",
        lambda x: lax.tile(x, (2, 3)),
        lambda x: np.tile(x, (2, 3)),
        ALL,
        grad_argnums=(0,),
        linear=True,
    ),
    OpSpec(
        "optimization_barrier",
        lambda x, y: lax.optimization_barrier((x, y)),
        lambda x, y: (x, y),
        ALL,
        shaped(),
        (((2, 3), (3,)),),
        grad_argnums=(0, 1),
        linear=True,
    ),
]
