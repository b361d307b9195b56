"""`tracejit.ops`: segment reductions, `out[s] = reduce(data[i] for i with segment_ids[i] == s)`.

Each is one scatter into an array filled with the reduction's identity (0 for sums, 1 for
products, the dtype's lowest/highest value for max/min), so segments that no index names keep
the identity. Segment ids are not wrapped like NumPy indices: by default (`mode=None`, JAX's
FILL_OR_DROP) an id outside [0, num_segments), negative ones included, contributes nothing;
`mode="clip"` clamps ids into that range. `bucket_size` reduces each bucket of that many
consecutive entries separately, then the buckets, which keeps long float sums more accurate.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.core import Tracer
from tracejit._src.errors import ConcretizationTypeError
from tracejit._src.numpy import reductions
from tracejit._src.numpy.creation import arange, asarray, full
from tracejit._src.numpy.ufuncs import where


def _identity(kind: str, dtype):
    if kind == "add":
        return 0
    if kind == "multiply":
        return 1
    if dtype == np.bool_:
        return kind == "min"
    if dtypes.is_int(dtype) or dtypes.is_unsigned(dtype):
        info = dtypes.iinfo(dtype)
        return info.max if kind == "min" else info.min
    return float("inf") if kind == "min" else -float("inf")


def _num_segments(segment_ids, num_segments, name: str) -> int:
    if num_segments is None:
        ids = segment_ids.to_concrete_value() if isinstance(segment_ids, Tracer) else segment_ids
        if ids is None:  # traced: the output's size would depend on the ids' values
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: traced "
                f"array with shape {segment_ids.aval.str_short()}\n{name}() `num_segments` "
                "argument: without it, the number of segments (the output's size) is read off "
                "the segment ids, which a traced function cannot do. Pass num_segments as a "
                "static (Python int) argument."
            )
        num_segments = int(np.max(np.asarray(ids))) + 1
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


def _segment_reduce(name, kind, reducer, data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode):  # fmt: skip
    data, segment_ids = asarray(data), asarray(segment_ids)
    num_segments = _num_segments(segment_ids, num_segments, name)
    if mode in (None, "fill", "drop") or str(mode).endswith("FILL_OR_DROP"):
        segment_ids = where(segment_ids < 0, num_segments, segment_ids)  # dropped, not wrapped
        mode = "drop"
    elif mode == "clip" or str(mode).endswith("CLIP"):
        segment_ids = where(segment_ids < 0, 0, segment_ids)
        mode = "clip"
    shape = (num_segments, *data.shape[1:])
    identity = _identity(kind, data.dtype)
    options = {
        "indices_are_sorted": indices_are_sorted,
        "unique_indices": unique_indices,
        "mode": mode,
    }
    if bucket_size is None:
        out = full(shape, identity, dtype=data.dtype)
        return getattr(out.at[segment_ids], kind)(data, **options)
    num_buckets = -(-segment_ids.size // bucket_size)
    out = full((num_buckets, *shape), identity, dtype=data.dtype)
    buckets = arange(segment_ids.shape[0]) // bucket_size
    out = getattr(out.at[buckets, segment_ids], kind)(data, **options)
    return reducer(out, axis=0).astype(data.dtype)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):  # fmt: skip
    """Sums of the rows of `data` by segment: shape `(num_segments, *data.shape[1:])`.
    `num_segments` defaults to `max(segment_ids) + 1`, which needs concrete ids (under `jit`,
    pass it as a static argument)."""
    _no_sharding(out_sharding)
    return _segment_reduce("segment_sum", "add", reductions.sum, data, segment_ids,
                           num_segments, indices_are_sorted, unique_indices, bucket_size,
                           mode)  # fmt: skip


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None, out_sharding=None):  # fmt: skip
    """Products of the rows of `data` by segment (1 for empty segments)."""
    _no_sharding(out_sharding)
    return _segment_reduce("segment_prod", "multiply", reductions.prod, data, segment_ids,
                           num_segments, indices_are_sorted, unique_indices, bucket_size,
                           mode)  # fmt: skip


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):  # fmt: skip
    """Maxima of the rows of `data` by segment (the dtype's lowest value, -inf for floats,
    for empty segments)."""
    _no_sharding(out_sharding)
    return _segment_reduce("segment_max", "max", reductions.max, data, segment_ids,
                           num_segments, indices_are_sorted, unique_indices, bucket_size,
                           mode)  # fmt: skip


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None, out_sharding=None):  # fmt: skip
    """Minima of the rows of `data` by segment (the dtype's highest value, +inf for floats,
    for empty segments)."""
    _no_sharding(out_sharding)
    return _segment_reduce("segment_min", "min", reductions.min, data, segment_ids,
                           num_segments, indices_are_sorted, unique_indices, bucket_size,
                           mode)  # fmt: skip


def _no_sharding(out_sharding) -> None:
    if out_sharding is not None:
        raise NotImplementedError("out_sharding needs shardings (jax.sharding), not built yet")
