"""nn.dot_product_attention against a float64 NumPy reference written from its definition:
softmax over keys of (q·k)·scale + bias, masked positions replaced by JAX's large negative
number, grouped-query heads (query head n reads key head n // G); eager, jitted, staged and
vmapped; derivatives by finite differences; dtypes, shape promotion and JAX's errors."""

import numpy as np
import pytest
from helpers import assert_close, check_eager_jit_numpy, check_traced_matches_eager, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit import nn
from tracejit.test_util import check_grads

B, T, S, N, K, H = 2, 5, 6, 4, 2, 8
RNG = np.random.default_rng(0)
Q = RNG.normal(size=(B, T, N, H)).astype(np.float32)
KEY = RNG.normal(size=(B, S, K, H)).astype(np.float32)
VALUE = RNG.normal(size=(B, S, K, H)).astype(np.float32)
BIAS = RNG.normal(size=(B, 1, T, S)).astype(np.float32)
MASK = RNG.random(size=(B, N, T, S)) > 0.3
Q_LENS = np.array([3, 5], np.int32)
KV_LENS = np.array([6, 2], np.int32)
LARGE_NEGATIVE = -0.7 * float(np.finfo(np.float32).max)


def reference(q, k, v, bias=None, mask=None, *, scale=None, is_causal=False, q_lens=None,
              kv_lens=None, window=None):  # fmt: skip
    """(output BTNH, logsumexp BTN) in float64, loop-free NumPy."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    t, s, n, h = q.shape[1], k.shape[1], q.shape[2], q.shape[3]
    group = n // k.shape[2]
    k, v = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)  # head n reads n // G
    scale = 1 / np.sqrt(h) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    rows, cols = np.arange(t)[:, None], np.arange(s)[None, :]
    if is_causal:
        keep &= cols <= rows
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        keep &= (rows >= cols - right) & (rows <= cols + left)
    if q_lens is not None:
        keep &= (np.arange(t) < q_lens[:, None])[:, None, :, None]
    if kv_lens is not None:
        keep &= (np.arange(s) < kv_lens[:, None])[:, None, None, :]
    logits = np.where(keep, logits, LARGE_NEGATIVE)
    top = logits.max(-1, keepdims=True)
    weights = np.exp(logits - top)
    lse = (np.log(weights.sum(-1, keepdims=True)) + top)[..., 0]
    out = np.einsum("bnts,bsnh->btnh", weights / weights.sum(-1, keepdims=True), v)
    if q_lens is not None:
        out = out * (np.arange(t) < q_lens[:, None])[:, :, None, None]
    return out, lse.transpose(0, 2, 1)


CASES = {
    "plain": ((), {}),
    "bias and mask": ((BIAS, MASK), {}),
    "causal, scaled": ((), {"is_causal": True, "scale": 0.3}),
    "sequence lengths": ((), {"query_seq_lengths": Q_LENS, "key_value_seq_lengths": KV_LENS}),
    "local window": ((), {"local_window_size": (1, 2)}),
    "symmetric window, causal": ((), {"local_window_size": 1, "is_causal": True}),
    "implementation xla": ((BIAS,), {"implementation": "xla"}),
}
_REFERENCE_NAMES = {
    "query_seq_lengths": "q_lens",
    "key_value_seq_lengths": "kv_lens",
    "local_window_size": "window",
}


def _reference_kwargs(kwargs):
    return {_REFERENCE_NAMES.get(k, k): v for k, v in kwargs.items() if k != "implementation"}


@pytest.mark.parametrize("case", CASES)
def test_values_eager_jit_and_staged(case):
    extra, kwargs = CASES[case]
    want, _ = reference(Q, KEY, VALUE, *extra, **_reference_kwargs(kwargs))

    def attend(q, k, v):
        return nn.dot_product_attention(q, k, v, *extra, **kwargs)

    check_eager_jit_numpy(attend, (Q, KEY, VALUE), want.astype(np.float32), tol=2e-6)


def test_residual_is_the_logsumexp_of_the_masked_logits_without_derivative():
    out, lse = nn.dot_product_attention(Q, KEY, VALUE, mask=MASK, return_residual=True)
    want_out, want_lse = reference(Q, KEY, VALUE, mask=MASK)
    assert lse.shape == (B, T, N) and lse.dtype == np.float32
    assert_close(out, want_out, 2e-6)
    assert_close(lse, want_lse, 2e-6)
    grad = tracejit.grad(
        lambda q: nn.dot_product_attention(q, KEY, VALUE, return_residual=True)[1].sum()
    )(Q)
    np.testing.assert_array_equal(grad, np.zeros_like(Q))


def test_a_fully_masked_row_attends_uniformly_and_stays_finite():
    """Masked logits become a large finite negative number, not -inf: a row with every key
    masked gets the mean of the values, not NaN (as in JAX)."""
    none = np.zeros((B, N, T, S), bool)
    out, lse = nn.dot_product_attention(Q, KEY, VALUE, mask=none, return_residual=True)
    group_values = np.repeat(VALUE, N // K, axis=2).mean(axis=1)  # (B, N, H)
    assert_close(out, np.broadcast_to(group_values[:, None], (B, T, N, H)), 2e-6)
    assert_close(lse, np.full((B, T, N), LARGE_NEGATIVE + np.log(S)), 1e-6)


def test_grouped_query_heads_read_key_head_n_over_g():
    """With one key/value head per group, attention equals attention with the key and value
    heads repeated G times."""
    out = nn.dot_product_attention(Q, KEY, VALUE)
    repeated = nn.dot_product_attention(Q, *(np.repeat(a, N // K, axis=2) for a in (KEY, VALUE)))
    assert_close(out, repeated, 1e-6)


def test_inputs_of_lower_rank_gain_leading_axes():
    out = nn.dot_product_attention(Q[0], KEY[0], VALUE[0])
    assert out.shape == (T, N, H)
    assert_close(out, reference(Q[:1], KEY[:1], VALUE[:1])[0][0], 2e-6)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, np.float16])
def test_low_precision_inputs_keep_their_dtype(dtype):
    q, k, v = (np.asarray(a).astype(dtype) for a in (Q, KEY, VALUE))
    out = nn.dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == dtype and not out.weak_type
    want, _ = reference(q, k, v, is_causal=True)
    assert_close(np.asarray(out, np.float32), want, 3e-2, atol=3e-2)


def test_float64_under_x64():
    with tracejit.enable_x64(True):
        q, k, v = (np.asarray(a, np.float64) for a in (Q, KEY, VALUE))
        out = nn.dot_product_attention(q, k, v, BIAS.astype(np.float64), MASK)
        assert out.dtype == np.float64
        # the softmax is taken in float32 even for float64 inputs, as in JAX
        assert_close(out, reference(q, k, v, BIAS, MASK)[0], 1e-6)


def test_derivatives_against_finite_differences():
    def attend(q, k, v, bias):
        return nn.dot_product_attention(q, k, v, bias, MASK[:, :, :3, :4], is_causal=True)

    args = (Q[:, :3, :, :4], KEY[:, :4, :, :4], VALUE[:, :4, :, :4], BIAS[:, :, :3, :4])
    check_grads(attend, args, order=1, modes=("fwd", "rev"), atol=2e-3, rtol=2e-3)


def test_vmap_over_an_extra_leading_axis_matches_a_loop():
    def attend(q, k, v, lens):
        return nn.dot_product_attention(q, k, v, key_value_seq_lengths=lens, is_causal=True)

    lens = np.array([[6, 2], [1, 4], [3, 3]], np.int32)
    qs = np.stack([Q, Q * 0.5, -Q])
    check_vmap(attend, (qs, KEY, VALUE, lens), (0, None, None, 0), tol=2e-6, jit=True)


def test_staged_types_match_eager():
    check_traced_matches_eager(
        lambda q, k, v: nn.dot_product_attention(q, k, v, BIAS, MASK, is_causal=True),
        Q,
        KEY,
        VALUE,
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"implementation": "cudnn"}, RuntimeError, "cuDNN is not detected"),
        ({"implementation": "flash"}, ValueError, "Unsupported implementation option: flash"),
        ({"mask": MASK.astype(np.int32)}, ValueError, "mask dtype should be bool"),
        ({"bias": BIAS[None]}, ValueError, "bias ndim should be 4, but got 5"),
        ({"query_seq_lengths": Q_LENS.astype(np.float32)}, ValueError, "dtype should be int32"),
        ({"key_value_seq_lengths": KV_LENS[:1]}, ValueError, r"shape should be \[2\]"),
    ],
)
def test_bad_input_raises_as_in_jax(kwargs, error, match):
    with pytest.raises(error, match=match):
        nn.dot_product_attention(Q, KEY, VALUE, **kwargs)


def test_mismatched_heads_and_dtypes_raise_as_in_jax():
    with pytest.raises(ValueError, match="multiple of key/value heads, but got 3 vs 2"):
        nn.dot_product_attention(Q[:, :, :3], KEY, VALUE)
    with pytest.raises(ValueError, match="query dtype should be float32"):
        nn.dot_product_attention(Q.astype(np.float16), KEY, VALUE)
    with pytest.raises(ValueError, match="value shape should be"):
        nn.dot_product_attention(Q, KEY, VALUE[:, :3])
