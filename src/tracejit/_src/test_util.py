"""`check_grads`: derivatives checked numerically, to any order (`jax.test_util.check_grads`).

Forward mode is compared with central finite differences computed in float64 (x64 is switched
on for the check and inputs are promoted to 64 bits), along a random direction:

    (f(x + εv) - f(x - εv)) / 2ε  ≈  jvp(f, x, v)

Reverse mode is compared with forward mode through the adjoint identity, for a random output
cotangent `c` and tangent `v`:  <vjp(f, x)(c), v> = <c, jvp(f, x, v)>.

Order n checks the derivatives of the derivative functions, recursively.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.api import jvp, vjp
from tracejit._src.config import config
from tracejit._src.tree_util import tree_flatten, tree_map

_DEFAULT_EPS = 1e-4


def _as_float64(x):
    value = np.asarray(x)
    if dtypes.is_complex(value.dtype):
        return value.astype(np.complex128)
    if dtypes.is_inexact(value.dtype):
        return value.astype(np.float64)
    return value


def _random_like(rng, x):
    value = np.asarray(x)
    if not dtypes.is_inexact(value.dtype):
        return np.zeros(value.shape, dtypes.float0)
    out = rng.standard_normal(value.shape)
    if dtypes.is_complex(value.dtype):
        out = out + 1j * rng.standard_normal(value.shape)
    return out.astype(value.dtype)


def _inner(xs, ys) -> float:
    """The real part of the bilinear pairing sum(x * y): the identity JAX's (unconjugated)
    transposes satisfy for complex-linear and merely real-linear maps (complex <-> real)."""
    total = 0.0
    for x, y in zip(tree_flatten(xs)[0], tree_flatten(ys)[0], strict=True):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
            continue
        total += np.real(np.sum(x.astype(np.complex128) * y.astype(np.complex128)))
    return total


def _assert_close(name: str, expected, actual, atol: float, rtol: float):
    worst = None
    for e, a in zip(tree_flatten(expected)[0], tree_flatten(actual)[0], strict=True):
        e, a = np.asarray(e), np.asarray(a)
        if e.dtype == dtypes.float0 or a.dtype == dtypes.float0:
            continue
        e, a = e.astype(np.complex128), a.astype(np.complex128)
        err = np.abs(a - e) - (atol + rtol * np.abs(e))
        if err.size and (worst is None or np.max(err) > worst[0]):
            i = np.unravel_index(np.argmax(err), err.shape)
            worst = (np.max(err), e[i], a[i], i)
    if worst is not None and worst[0] > 0:
        _, e, a, i = worst
        raise AssertionError(
            f"{name}: largest discrepancy at index {i}: expected {e}, got {a} "
            f"(|difference| = {abs(a - e):.3g}, allowed atol={atol} + rtol={rtol}*|expected|)"
        )


def check_jvp(f, args, *, atol, rtol, eps, rng):
    tangents = tree_map(lambda x: _random_like(rng, x), args)
    _, out_tangent = jvp(f, args, tangents)

    def shifted(sign):
        moved = tree_map(
            lambda x, t: x if t.dtype == dtypes.float0 else x + sign * eps * t, args, tangents
        )
        return f(*moved)

    finite_difference = tree_map(
        lambda a, b: (np.asarray(a) - np.asarray(b)) / (2 * eps), shifted(1), shifted(-1)
    )
    _assert_close("jvp vs finite differences", finite_difference, out_tangent, atol, rtol)


def check_vjp(f, args, *, atol, rtol, rng):
    out, f_vjp = vjp(f, *args)
    cotangent = tree_map(lambda x: _random_like(rng, x), out)
    tangents = tree_map(lambda x: _random_like(rng, x), args)
    arg_cotangents = f_vjp(cotangent)
    _, out_tangent = jvp(f, args, tangents)
    lhs = _inner(arg_cotangents, tangents)
    rhs = _inner(cotangent, out_tangent)
    _assert_close("<vjp(c), v> vs <c, jvp(v)>", rhs, lhs, atol, rtol)


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks the derivatives of `f` at `args` up to `order`, in float64; raises an
    AssertionError naming the largest discrepancy."""
    atol = 1e-5 if atol is None else atol
    rtol = 1e-5 if rtol is None else rtol
    eps = _DEFAULT_EPS if eps is None else eps
    previous = config.enable_x64
    config.update("jax_enable_x64", True)
    try:
        args64 = tuple(tree_map(_as_float64, tuple(args)))
        _check_grads(f, args64, order, tuple(modes), atol, rtol, eps, np.random.default_rng(0))
    finally:
        config.update("jax_enable_x64", previous)


def _check_grads(f, args, order, modes, atol, rtol, eps, rng):
    if order == 0:
        return
    if "fwd" in modes:
        check_jvp(f, args, atol=atol, rtol=rtol, eps=eps, rng=rng)
        if order > 1:
            tangents = tree_map(lambda x: _random_like(rng, x), args)

            def f_jvp(*primals):
                return jvp(f, primals, tangents)[1]

            _check_grads(f_jvp, args, order - 1, ("fwd",), atol, rtol, eps, rng)
    if "rev" in modes:
        check_vjp(f, args, atol=atol, rtol=rtol, rng=rng)
        if order > 1:
            cotangent = tree_map(lambda x: _random_like(rng, x), f(*args))

            def f_vjp(*primals):
                return vjp(f, *primals)[1](cotangent)

            _check_grads(f_vjp, args, order - 1, ("rev",), atol, rtol, eps, rng)
