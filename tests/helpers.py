"""Checks shared by the test modules: every primitive is checked eagerly, staged, and replayed."""

import numpy as np

from tracejit._src.api import make_jaxpr
from tracejit._src.array import Array
from tracejit._src.jaxpr import check_jaxpr, eval_jaxpr
from tracejit._src.tree_util import tree_flatten


def check_traced_matches_eager(fun, *args, rtol=1e-6, atol=1e-6):
    """Runs `fun` eagerly and as a staged jaxpr (type-checked, then evaluated) and asserts
    both give the same values, shapes, dtypes and weak types. Returns the eager result."""
    eager = fun(*args)
    closed = make_jaxpr(fun)(*args)
    check_jaxpr(closed.jaxpr)
    eager_leaves, _ = tree_flatten(eager)
    arg_leaves, _ = tree_flatten(list(args))
    replayed = eval_jaxpr(closed.jaxpr, closed.consts, *arg_leaves)
    assert len(replayed) == len(eager_leaves)
    for out, aval, again in zip(eager_leaves, closed.out_avals, replayed, strict=True):
        assert isinstance(out, Array), type(out)
        assert out.shape == aval.shape, (out.shape, aval.shape)
        assert out.dtype == aval.dtype, (out.dtype, aval.dtype)
        assert out.weak_type == aval.weak_type, (out.weak_type, aval.weak_type)
        np.testing.assert_allclose(
            np.asarray(again, dtype=np.float64)
            if out.dtype.kind not in "cbV"
            else np.asarray(again),
            np.asarray(out, dtype=np.float64) if out.dtype.kind not in "cbV" else np.asarray(out),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
        )
    return eager


def assert_tree_equal(got, want, tol):
    """Same pytree structure, dtypes and shapes; values within `tol`."""
    got_leaves, got_tree = tree_flatten(got)
    want_leaves, want_tree = tree_flatten(want)
    assert got_tree == want_tree, (got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def check_eager_jit_numpy(fun, args, want, tol=1e-6, replay=True):
    """`fun` eagerly, under jit and (with `replay`) staged, type-checked and replayed, all
    equal `want` (a NumPy reference)."""
    from tracejit._src.jit import jit

    assert_tree_equal(fun(*args), want, tol)
    assert_tree_equal(jit(fun)(*args), want, tol)
    if replay:
        check_traced_matches_eager(fun, *args, rtol=tol, atol=tol)


def jaxpr_text(fun, *args) -> str:
    """The printed jaxpr of `fun`, after type-checking it."""
    closed = make_jaxpr(fun)(*args)
    check_jaxpr(closed.jaxpr)
    return str(closed)
