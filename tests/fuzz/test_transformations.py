"""Property (b) for the transformations: `vmap(f)` equals a loop of `f` over the batch for
representative functions of each signature kind, and `grad` of the smooth float functions is
finite and agrees with a central finite difference."""

import numpy as np
import pytest
from fuzz import strategies as fst
from fuzz.checks import assert_close
from fuzz.table import UNARY
from hypothesis import given
from hypothesis import strategies as st

import tracejit
import tracejit.numpy as jnp
from tracejit import lax

F32 = np.dtype(np.float32)

# (name, function of one array, dtype kinds it is drawn with, minimum rank of one example)
VMAPPED = [
    ("sin", jnp.sin, "f", 0),
    ("add_self", lambda v: jnp.add(v, v[..., :1] if v.ndim else v), "iuf", 0),
    ("sum_last", lambda v: jnp.sum(v, axis=-1), "biuf", 1),
    ("max_keepdims", lambda v: jnp.max(v, axis=0, keepdims=True), "iuf", 1),
    ("cumsum", lambda v: jnp.cumsum(v, axis=-1), "iuf", 1),
    ("sort", lambda v: jnp.sort(v, axis=0), "biuf", 1),
    ("take", lambda v: jnp.take(v, np.array([0, -1, 0], np.int32), axis=0), "biuf", 1),
    ("getitem", lambda v: v[::-1, None], "biuf", 1),
    ("transpose", lambda v: jnp.transpose(v), "biufc", 0),
    ("matmul", lambda v: jnp.matmul(v, jnp.swapaxes(v, -1, -2)), "if", 2),
    ("where", lambda v: jnp.where(v > 0, v, 0), "iuf", 0),
    ("cond", lambda v: lax.cond(jnp.sum(v) > 0, jnp.negative, jnp.abs, v), "if", 0),
]


@pytest.mark.parametrize("name,fun,kinds,min_rank", VMAPPED, ids=[v[0] for v in VMAPPED])
@given(data=st.data(), batch=st.integers(0, 3))
def test_vmap_equals_a_loop(name, fun, kinds, min_rank, data, batch):
    dtype = data.draw(fst.dtypes([d for d in fst.ALL_DTYPES if d.kind in kinds]))
    shape = data.draw(fst.shapes(min_rank=min_rank, min_side=1 if min_rank else 0))
    xs = data.draw(fst.arrays(dtype=dtype, shape=(batch, *shape)), label="xs")
    got = tracejit.vmap(fun)(xs)
    call = f"vmap({name})({dtype}{list(xs.shape)})"
    if batch == 0:
        assert np.asarray(got).shape[0] == 0, call
        return
    want = np.stack([np.asarray(fun(x)) for x in xs])
    assert_close(got, want, dtype, call, want.dtype)
    assert_close(tracejit.jit(tracejit.vmap(fun))(xs), want, dtype, f"jit({call})", want.dtype)


SMOOTH = [op for op in UNARY if op.smooth]


@pytest.mark.parametrize("op", SMOOTH, ids=repr)
@given(x=fst.arrays(dtype=F32, shape=(3,)))
def test_grad_is_finite_and_matches_finite_differences(op, x):
    x = np.clip(x, -1.5, 1.5).astype(np.float64)  # away from tan's poles and exp's overflow

    def total(v):
        return jnp.sum(op.fn(v))

    with _x64():
        g = np.asarray(tracejit.grad(total)(x))
        g_jit = np.asarray(tracejit.jit(tracejit.grad(total))(x))
        eps = 1e-6
        fd = np.array(
            [(float(total(x + eps * e)) - float(total(x - eps * e))) / (2 * eps) for e in np.eye(3)]
        )
    assert np.isfinite(g).all(), f"grad({op.name})({x}) = {g}"
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5, err_msg=f"grad({op.name})({x})")
    np.testing.assert_allclose(g_jit, g, rtol=1e-12, atol=1e-12, err_msg=f"jit grad {op.name}")


class _x64:
    """64-bit types on for the finite differences, restored afterwards."""

    def __enter__(self):
        self.previous = tracejit.config.read("jax_enable_x64")
        tracejit.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        tracejit.config.update("jax_enable_x64", self.previous)
