"""The line search of BFGS: a step length along `pk` satisfying the strong Wolfe conditions
(Nocedal and Wright, Algorithms 3.5 and 3.6), as in JAX and SciPy's `line_search_wolfe2`.

Steps are tried from `start_value`, doubling, until one satisfies both conditions or brackets
one; the bracket is then narrowed by `_zoom` (cubic, else quadratic interpolation, else
bisection). Both are `while_loop`s with every branch computed and chosen by `where`, so that
the search stays traceable; each records how many function and gradient evaluations it made.
"""

from typing import NamedTuple

from tracejit._src import dtypes
from tracejit._src.api import value_and_grad
from tracejit._src.array import Array
from tracejit._src.lax.control_flow.loops import while_loop
from tracejit._src.numpy.creation import array, asarray
from tracejit._src.numpy.products import dot
from tracejit._src.numpy.promotion import convert_element_type, promote_dtypes_inexact, to_operands
from tracejit._src.numpy.ufuncs import abs, maximum, minimum, real, sign, sqrt, where


def _dot(a, b):
    return dot(a, b, precision="highest")


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    cubic = (dc**2 * rb - db**2 * rc) / denom
    quadratic = (-(dc**3) * rb + db**3 * rc) / denom
    radical = quadratic * quadratic - 3.0 * cubic * fpa
    return a + (-quadratic + sqrt(radical)) / (3.0 * cubic)


def _quadmin(a, fa, fpa, b, fb):
    """The minimizer of the parabola through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / db**2
    return a - fpa / (2.0 * curvature)


def _replace_where(state, replace_bit, **new):
    """`state` with the fields in `new` replaced where `replace_bit` holds."""
    return state._replace(
        **{key: where(replace_bit, value, getattr(state, key)) for key, value in new.items()}
    )


class _ZoomState(NamedTuple):
    done: Array
    failed: Array
    j: Array
    a_lo: Array
    phi_lo: Array
    dphi_lo: Array
    a_hi: Array
    phi_hi: Array
    dphi_hi: Array
    a_rec: Array
    phi_rec: Array
    a_star: Array
    phi_star: Array
    dphi_star: Array
    g_star: Array
    nfev: Array
    ngev: Array


def _zoom_trial(state):
    """The next trial step inside the bracket, and whether the bracket is too small."""
    dalpha = state.a_hi - state.a_lo
    a = minimum(state.a_hi, state.a_lo)
    b = maximum(state.a_hi, state.a_lo)
    cchk, qchk = 0.2 * dalpha, 0.1 * dalpha
    threshold = 1e-5 if dtypes.finfo(dalpha.dtype).bits < 64 else 1e-10
    too_small = dalpha <= threshold
    a_j_cubic = _cubicmin(
        state.a_lo,
        state.phi_lo,
        state.dphi_lo,
        state.a_hi,
        state.phi_hi,
        state.a_rec,
        state.phi_rec,
    )
    use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
    a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
    use_quad = ~use_cubic & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
    use_bisection = ~use_cubic & ~use_quad
    a_j = where(use_cubic, a_j_cubic, state.a_rec)
    a_j = where(use_quad, a_j_quad, a_j)
    a_j = where(use_bisection, (state.a_lo + state.a_hi) / 2.0, a_j)
    return a_j, too_small


def _zoom(
    restricted_func_and_grad,
    wolfe_one,
    wolfe_two,
    a_lo,
    phi_lo,
    dphi_lo,
    a_hi,
    phi_hi,
    dphi_hi,
    g_0,
    pass_through,
):
    """Narrows the bracket [a_lo, a_hi] to a step satisfying the strong Wolfe conditions
    (at most 30 trials); does nothing where `pass_through`."""
    state = _ZoomState(
        done=False,
        failed=False,
        j=0,
        a_lo=a_lo,
        phi_lo=phi_lo,
        dphi_lo=dphi_lo,
        a_hi=a_hi,
        phi_hi=phi_hi,
        dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=1.0,
        phi_star=phi_lo,
        dphi_star=dphi_lo,
        g_star=g_0,
        nfev=0,
        ngev=0,
    )

    def body(state):
        a_j, too_small = _zoom_trial(state)
        state = state._replace(failed=state.failed | too_small)
        phi_j, dphi_j, g_j = restricted_func_and_grad(a_j)
        phi_j = convert_element_type(phi_j, state.phi_lo.dtype)
        dphi_j = convert_element_type(dphi_j, state.dphi_lo.dtype)
        g_j = convert_element_type(g_j, state.g_star.dtype)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & ~hi_to_j
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & ~hi_to_j & ~star_to_j
        lo_to_j = ~hi_to_j & ~star_to_j
        state = _replace_where(
            state,
            hi_to_j,
            a_hi=a_j,
            phi_hi=phi_j,
            dphi_hi=dphi_j,
            a_rec=state.a_hi,
            phi_rec=state.phi_hi,
        )
        state = _replace_where(
            state._replace(done=star_to_j | state.done),
            star_to_j,
            a_star=a_j,
            phi_star=phi_j,
            dphi_star=dphi_j,
            g_star=g_j,
        )
        state = _replace_where(
            state,
            hi_to_lo,
            a_hi=state.a_lo,
            phi_hi=state.phi_lo,
            dphi_hi=state.dphi_lo,
            a_rec=state.a_hi,
            phi_rec=state.phi_hi,
        )
        state = _replace_where(state, lo_to_j & ~hi_to_lo, a_rec=state.a_lo, phi_rec=state.phi_lo)
        state = _replace_where(state, lo_to_j, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        state = state._replace(j=state.j + 1)
        return state._replace(failed=state.failed | (state.j >= 30))

    return while_loop(lambda state: ~state.done & ~pass_through & ~state.failed, body, state)


class _LineSearchState(NamedTuple):
    done: Array
    failed: Array
    i: Array
    a_i1: Array
    phi_i1: Array
    dphi_i1: Array
    nfev: Array
    ngev: Array
    a_star: Array
    phi_star: Array
    dphi_star: Array
    g_star: Array


class LineSearchResults(NamedTuple):
    """`failed`: no step found; `a_k`, `f_k`, `g_k`: the step and the function and gradient
    there; `status`: 0 found, 1 the zoom failed, 3 too many iterations."""

    failed: Array
    nit: Array
    nfev: Array
    ngev: Array
    k: Array
    a_k: Array
    f_k: Array
    g_k: Array
    status: Array


def _accept(state, bit, failed, a_star, phi_star, dphi_star, g_star):
    """Where `bit`: the search is done (failed if `failed`), with step a_star."""
    state = state._replace(done=bit | state.done, failed=(bit & failed) | state.failed)
    return _replace_where(
        state, bit, a_star=a_star, phi_star=phi_star, dphi_star=dphi_star, g_star=g_star
    )


def _line_search_step(state, restricted_func_and_grad, wolfe_one, wolfe_two, start_value, gfk):
    """One trial step: accept it, or zoom into the bracket it closes, or double it."""
    a_i = where(state.i == 1, start_value, state.a_i1 * 2.0)
    phi_i, dphi_i, g_i = restricted_func_and_grad(a_i)
    state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
    star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
    star_to_i = wolfe_two(dphi_i) & ~star_to_zoom1
    star_to_zoom2 = (dphi_i >= 0.0) & ~star_to_zoom1 & ~star_to_i
    zoom1 = _zoom(
        restricted_func_and_grad,
        wolfe_one,
        wolfe_two,
        state.a_i1,
        state.phi_i1,
        state.dphi_i1,
        a_i,
        phi_i,
        dphi_i,
        gfk,
        ~star_to_zoom1,
    )
    state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
    zoom2 = _zoom(
        restricted_func_and_grad,
        wolfe_one,
        wolfe_two,
        a_i,
        phi_i,
        dphi_i,
        state.a_i1,
        state.phi_i1,
        state.dphi_i1,
        gfk,
        ~star_to_zoom2,
    )
    state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)
    # The three outcomes exclude each other.
    state = _accept(
        state,
        star_to_zoom1,
        zoom1.failed,
        zoom1.a_star,
        zoom1.phi_star,
        zoom1.dphi_star,
        zoom1.g_star,
    )
    state = _accept(state, star_to_i, False, a_i, phi_i, dphi_i, g_i)
    state = _accept(
        state,
        star_to_zoom2,
        zoom2.failed,
        zoom2.a_star,
        zoom2.phi_star,
        zoom2.dphi_star,
        zoom2.g_star,
    )
    return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """A step along `pk` from `xk` satisfying the strong Wolfe conditions with constants c1
    and c2, starting (as SciPy does) from the step predicted by the last decrease
    `old_old_fval - old_fval` when given."""
    xk, pk = promote_dtypes_inexact(*to_operands("line_search", (xk, pk)))

    def restricted_func_and_grad(t):
        t = array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, real(_dot(g, pk)), g

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = restricted_func_and_grad(0)
    else:
        phi_0, dphi_0 = old_fval, real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate_start_value = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value = where(candidate_start_value > 1, 1.0, candidate_start_value)
    else:
        start_value = 1

    def wolfe_one(a_i, phi_i):  # sufficient decrease
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):  # curvature
        return abs(dphi_i) <= -c2 * dphi_0

    evaluated = 1 if old_fval is None or gfk is None else 0
    state = _LineSearchState(
        done=array(False),
        failed=array(False),
        i=1,
        a_i1=0.0,
        phi_i1=phi_0,
        dphi_i1=dphi_0,
        nfev=evaluated,
        ngev=evaluated,
        a_star=0.0,
        phi_star=phi_0,
        dphi_star=dphi_0,
        g_star=gfk,
    )
    state = while_loop(
        lambda state: ~state.done & (state.i <= maxiter) & ~state.failed,
        lambda state: _line_search_step(
            state, restricted_func_and_grad, wolfe_one, wolfe_two, start_value, gfk
        ),
        state,
    )
    status = where(state.failed, array(1), where(state.i > maxiter, array(3), array(0)))
    alpha_k = asarray(state.a_star)
    if dtypes.finfo(alpha_k.dtype).bits != 64:  # a step below 1e-8 is too small for float32
        alpha_k = where(abs(alpha_k) < 1e-8, sign(alpha_k) * 1e-8, alpha_k)
    return LineSearchResults(
        failed=state.failed | ~state.done,
        nit=state.i - 1,
        nfev=state.nfev,
        ngev=state.ngev,
        k=state.i,
        a_k=alpha_k,
        f_k=state.phi_star,
        g_k=state.g_star,
        status=status,
    )
