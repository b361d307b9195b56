"""`nn.dot_product_attention`: softmax(q kᵀ · scale + bias, masked) v, as JAX's XLA path
computes it, so that results agree with JAX's to rounding.

Arrays are laid out BTNH (batch, sequence, heads, head size); key and value may have fewer
heads than the query (grouped-query attention): K key/value heads serve N = K·G query heads,
query head n reading key head n // G. The query is viewed as (B, T, K, G, H), and the logits
are (B, K, G, T, S), so that the grouping costs no copy of the keys:

    logits[b, k, g, t, s] = Σ_h q[b, t, k, g, h] · key[b, s, k, h]

Masks (a boolean `mask`, `is_causal`, `local_window_size`, per-example sequence lengths) are
combined into one and applied by replacing masked logits with a large negative number, which
keeps fully-masked rows finite (a uniform softmax) where -inf would give NaN. The logits are
accumulated in at least float32, and the softmax is always taken in float32, as in JAX.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax.shapes import stop_gradient
from tracejit._src.nn.functions import logsumexp, softmax
from tracejit._src.numpy import ufuncs
from tracejit._src.numpy.creation import arange, asarray, ones
from tracejit._src.numpy.einsum import einsum
from tracejit._src.numpy.lib import tril
from tracejit._src.numpy.manipulation import expand_dims, reshape, transpose


def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    *,
    scale=None,
    is_causal=False,
    query_seq_lengths=None,
    key_value_seq_lengths=None,
    local_window_size=None,
    implementation=None,
    return_residual=False,
):
    """Scaled dot-product attention of `query` (BTNH) over `key` and `value` (BSKH), with an
    optional additive `bias` and boolean `mask` (both broadcast as BNTS, N or 1 heads). 1-, 2-
    and 3-dimensional inputs gain leading axes of size 1. `scale` defaults to 1/sqrt(H).
    `return_residual=True` also returns the logsumexp of each row of logits (BTN), without
    derivative. `implementation` may be None or "xla" (the same computation here); "cudnn"
    needs cuDNN, which tracejit does not use."""
    output_shape = asarray(query).shape
    query, key, value = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    q_seqlen = None if query_seq_lengths is None else asarray(query_seq_lengths)
    kv_seqlen = None if key_value_seq_lengths is None else asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)

    B, S, K, H = key.shape
    _check("value", value, [B, S, K, H], key.dtype)
    _check("query", query, [B, -1, -1, H], key.dtype)
    _check("mask", mask, [-1] * 4, np.dtype(bool))
    _check("bias", bias, [-1] * 4, None)
    _check("query_seq_lengths", q_seqlen, [B], np.dtype("int32"))
    _check("key_value_seq_lengths", kv_seqlen, [B], np.dtype("int32"))
    if query.shape[-2] % K != 0:
        raise ValueError(
            "The number of query heads must be a multiple of key/value heads, but got "
            f"{query.shape[-2]} vs {K}"
        )
    if implementation == "cudnn":
        raise RuntimeError("cuDNN is not detected.")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")

    scale = (1.0 / np.sqrt(H)) if scale is None else scale
    masks = (mask, is_causal, q_seqlen, kv_seqlen, local_window_size)
    encoded, lse = _attention(query, key, value, bias, masks, scale)
    out = reshape(encoded, output_shape)
    if not return_residual:
        return out
    return out, reshape(lse, output_shape[:-1])


def _ensure_4d(t):
    t = asarray(t)
    missing = 4 - t.ndim
    return expand_dims(t, tuple(range(missing))) if missing > 0 else t


def _check(name: str, t, shape, dtype) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")


def _grouped(t, K: int, G: int):
    """A BNTS bias or mask as (B, K, G, T, S) to match the grouped logits (N = 1 broadcasts)."""
    if t is None:
        return None
    tB, tN, tT, tS = t.shape
    return expand_dims(t, 2) if tN == 1 else reshape(t, (tB, K, G, tT, tS))


def _attention(query, key, value, bias, masks, scale):
    """(encoded BTNH, logsumexp of the masked logits BTN)."""
    B, T, N, H = query.shape
    K = key.shape[2]
    G = N // K
    query = reshape(query, (B, T, K, G, H))
    logits_dtype = dtypes.promote_types(query.dtype, np.float32)
    logits = einsum("BTKGH,BSKH->BKGTS", query, key, preferred_element_type=logits_dtype)
    logits = logits * asarray(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, K, G)).astype(logits.dtype)
    mask, is_causal, q_seqlen, kv_seqlen, local_window_size = masks
    logits = _apply_masks(logits, _grouped(mask, K, G), is_causal, q_seqlen, kv_seqlen,
                          local_window_size)  # fmt: skip
    logits = logits.astype(np.float32)  # the softmax is taken in float32 whatever the dtype
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = einsum("BKGTS,BSKH->BTKGH", probs, value)
    if q_seqlen is not None:  # padding queries attend to nothing
        valid = arange(T)[None, :] < q_seqlen[:, None]
        encoded = encoded * valid[:, :, None, None, None].astype(encoded.dtype)
    lse = logsumexp(logits, axis=-1).astype(key.dtype)  # (B, K, G, T)
    lse = stop_gradient(transpose(lse, (0, 3, 1, 2)))
    return reshape(encoded, (B, T, N, H)), reshape(lse, (B, T, N))


def _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
    """`logits` (B, K, G, T, S) with the masked positions set to a large negative number."""
    if (
        mask is None
        and not is_causal
        and q_seqlen is None
        and kv_seqlen is None
        and local_window_size is None
    ):
        return logits
    T, S = logits.shape[-2:]
    keep = ones(logits.shape, dtype=bool)
    if mask is not None:
        keep = ufuncs.logical_and(keep, mask)
    if is_causal:
        keep = ufuncs.logical_and(keep, tril(ones((T, S), dtype=bool)))
    if local_window_size is not None:
        left, right = local_window_size
        query_pos, key_pos = arange(T)[:, None], arange(S)[None, :]
        in_window = ufuncs.logical_and(query_pos >= key_pos - right, query_pos <= key_pos + left)
        keep = ufuncs.logical_and(keep, in_window)
    if q_seqlen is not None:
        keep = ufuncs.logical_and(keep, (arange(T) < q_seqlen[:, None])[:, None, None, :, None])
    if kv_seqlen is not None:
        keep = ufuncs.logical_and(keep, (arange(S) < kv_seqlen[:, None])[:, None, None, None, :])
    return ufuncs.where(keep, logits, _large_negative(logits.dtype))


def _large_negative(dtype):
    """-0.7 × the largest finite value (capped at float32's, so that it stays finite once the
    logits are cast to float32 for the softmax)."""
    # (computed on NumPy scalars of `dtype`, as JAX computes it, to give the same rounding)
    largest = min(dtypes.finfo(dtype).max, dtypes.finfo(np.float32).max)
    return asarray(-0.7 * largest, dtype=dtype)
