"""Solves with implicitly defined derivatives: `custom_linear_solve` and `custom_root`.

Both run the user's solver forwards and differentiate the equation it solves, not the solver
(which may be a while loop, or not differentiable at all):

- `custom_linear_solve(matvec, b, solve)`: x = A^{-1} b. Its JVP solves again,
  `x' = A^{-1} (b' - A' x)`, and its transpose solves the transposed system with
  `transpose_solve` and `vecmat` (matvec's transpose, found by transposing matvec's jaxpr). The
  `linear_solve` primitive holds four jaxprs (matvec, vecmat, solve, transpose_solve), each
  taking its closure constants first, as JAX's does:

      x = linear_solve[const_lengths=(1, 1, 1, 1) jaxprs=(...)] A A A A b

- `custom_root(f, x0, solve, tangent_solve)`: x* with f(x*) = 0, a `custom_jvp` function of
  f's, solve's and the tangent solve's constants and the guess: by the implicit function
  theorem, `x*' = -(∂f/∂x)^{-1} (∂f/∂θ θ')`, the inverse applied by `tangent_solve(g, y)` with
  g the linear map t -> ∂f/∂x t at x*.
"""

from __future__ import annotations

from functools import partial

from tracejit._src.core import Primitive, ShapedArray, get_aval
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.ad import Zero, instantiate_zeros, transpose_rules
from tracejit._src.interpreters.batching import batch_at_front, batch_jaxpr, batch_rules
from tracejit._src.interpreters.eval import eval_jaxpr_numpy
from tracejit._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from tracejit._src.interpreters.transpose import backward_pass, is_undefined_primal
from tracejit._src.jaxpr import eval_jaxpr
from tracejit._src.lax import elementwise
from tracejit._src.lax.control_flow.common import stage_function
from tracejit._src.lowering.lower import lowering_rules
from tracejit._src.tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten

_MATVEC, _VECMAT, _SOLVE, _TRANSPOSE_SOLVE = range(4)


def _split(args, const_lengths) -> tuple:
    """(the constants of each function, by `const_lengths`; the remaining operands)."""
    groups, start = [], 0
    for length in const_lengths:
        groups.append(list(args[start : start + length]))
        start += length
    return groups, list(args[start:])


def _transposed(const_lengths, jaxprs):
    """The parameters of the transposed system: matvec and vecmat, solve and transpose_solve
    swapped."""
    order = (_VECMAT, _MATVEC, _TRANSPOSE_SOLVE, _SOLVE)
    return tuple(const_lengths[i] for i in order), tuple(jaxprs[i] for i in order)


def _check_tree(name: str, got, want, has_aux: bool) -> None:
    if has_aux:
        if len(got.children()) != 2 or got.children()[0] != want:
            raise TypeError(
                f"{name}() output must be a pair of the solution (structured as b, {want}) and "
                f"auxiliary data, got {got}"
            )
    elif got != want:
        raise TypeError(f"{name}() output pytree structure must match b, got {got} and {want}.")


def _shape_checked(fun, name: str, b_leaves, has_aux: bool):
    def checked(x):
        out = fun(x)
        solution = out[0] if has_aux else out
        got = [get_aval(leaf).shape for leaf in tree_leaves(solution)]
        want = [get_aval(leaf).shape for leaf in b_leaves]
        if got != want:
            raise ValueError(f"{name}() output shapes must match b, got {got} and {want}")
        return out

    return checked


# --- linear_solve ---------------------------------------------------------------------------
linear_solve_p = Primitive("linear_solve", multiple_results=True)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """`solve(matvec, b)`, the x with `matvec(x) == b` for the linear function `matvec`, with
    derivatives defined by that equation rather than by differentiating `solve`. Reverse mode
    needs `transpose_solve(vecmat, b)` (or `symmetric=True`: then `solve` serves). With
    `has_aux`, the solvers return `(x, aux)` and so does this."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_flatten(b)
    avals = [get_aval(leaf).strip_weak_type() for leaf in b_leaves]
    args_tree = tree_structure((b,))

    def stage(fun, name, aux):
        closed, consts, out_tree = stage_function(
            _shape_checked(fun, name, b_leaves, aux), args_tree, avals, "custom_linear_solve"
        )
        _check_tree(name, out_tree, tree, aux)
        return closed, consts, out_tree

    matvec_jaxpr, matvec_consts, _ = stage(matvec, "matvec", False)
    solve_jaxpr, solve_consts, out_tree = stage(partial(solve, matvec), "solve", has_aux)
    vecmat_jaxpr = tr_solve_jaxpr = None
    vecmat_consts = tr_solve_consts = []
    if transpose_solve is not None:
        vecmat = matvec if symmetric else _transpose_linear(matvec, tree, avals)
        vecmat_jaxpr, vecmat_consts, _ = stage(vecmat, "vecmat", False)
        tr_solve_jaxpr, tr_solve_consts, _ = stage(
            partial(transpose_solve, vecmat), "transpose_solve", has_aux
        )
    all_consts = [matvec_consts, vecmat_consts, solve_consts, tr_solve_consts]
    outs = linear_solve_p.bind(
        *(c for consts in all_consts for c in consts),
        *b_leaves,
        const_lengths=tuple(map(len, all_consts)),
        jaxprs=(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr),
    )
    return tree_unflatten(out_tree, outs)


def _transpose_linear(matvec, tree, avals):
    """vecmat: the transpose of the linear function `matvec`, by transposing its jaxpr."""

    def flat_matvec(*xs):
        return tree_leaves(matvec(tree_unflatten(tree, xs)))

    closed = trace_to_jaxpr(flat_matvec, avals, DebugInfo(matvec, "custom_linear_solve"))

    def vecmat(ct):
        cts = backward_pass(closed.jaxpr, closed.consts, tree_leaves(ct))
        return tree_unflatten(
            tree,
            [
                ad.zeros_like_aval(aval) if type(c) is Zero else c
                for c, aval in zip(cts, avals, strict=True)
            ],
        )

    return vecmat


@linear_solve_p.def_abstract_eval
def _linear_solve_abstract_eval(*args, const_lengths, jaxprs):
    _, b = _split(args, const_lengths)
    aux = jaxprs[_SOLVE].out_avals[len(b) :]
    return [ShapedArray(x.shape, x.dtype) for x in b] + list(aux)


@linear_solve_p.def_impl
def _linear_solve_impl(*args, const_lengths, jaxprs):
    consts, b = _split(args, const_lengths)
    return eval_jaxpr_numpy(jaxprs[_SOLVE].jaxpr, [], [*consts[_SOLVE], *b])


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    """A x = b gives A x' = b' - A' x: the same solve of another right-hand side."""
    params = {"const_lengths": const_lengths, "jaxprs": jaxprs}
    outs = linear_solve_p.bind(*primals, **params)
    consts, b = _split(primals, const_lengths)
    consts_dot, b_dot = _split(tangents, const_lengths)
    x = outs[: len(b)]
    rhs = [instantiate_zeros(t) for t in b_dot]
    if any(type(t) is not Zero for t in consts_dot[_MATVEC]):
        matvec = jaxprs[_MATVEC]
        _, matvec_dot = ad.jvp_flat(
            lambda *args: eval_jaxpr(matvec.jaxpr, [], *args),
            [*consts[_MATVEC], *x],
            [*consts_dot[_MATVEC], *(Zero.from_primal_value(v) for v in x)],
        )
        rhs = [r if type(m) is Zero else _sub(r, m) for r, m in zip(rhs, matvec_dot, strict=True)]
    flat_consts = [c for group in consts for c in group]
    x_dot = linear_solve_p.bind(*flat_consts, *rhs, **params)
    aux_dot = [Zero.from_primal_value(aux) for aux in outs[len(b) :]]
    return outs, x_dot[: len(b)] + aux_dot


def _sub(x, y):
    return ad.add_tangents(x, elementwise.neg(y))


def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs[_TRANSPOSE_SOLVE] is None:
        raise TypeError(
            "transpose_solve required for backwards mode automatic differentiation of "
            "custom_linear_solve"
        )
    consts, b = _split(args, const_lengths)
    if any(is_undefined_primal(c) for group in consts for c in group):
        raise NotImplementedError(
            "custom_linear_solve is linear in b only: transposing it in the constants of its "
            "functions"
        )
    if any(type(ct) is not Zero for ct in cts[len(b) :]):
        raise NotImplementedError("custom_linear_solve: cotangents of auxiliary outputs")
    lengths_t, jaxprs_t = _transposed(const_lengths, jaxprs)
    order = (_VECMAT, _MATVEC, _TRANSPOSE_SOLVE, _SOLVE)
    cts_b = linear_solve_p.bind(
        *(c for i in order for c in consts[i]),
        *(instantiate_zeros(ct) for ct in cts[: len(b)]),
        const_lengths=lengths_t,
        jaxprs=jaxprs_t,
    )
    return [None] * sum(const_lengths) + list(cts_b[: len(b)])


ad.jvp_rules[linear_solve_p] = _linear_solve_jvp
ad.mark_linear(linear_solve_p)  # in b, with the functions' constants fixed
transpose_rules[linear_solve_p] = _linear_solve_transpose


def _linear_solve_lowering(ctx, *args, const_lengths, jaxprs):
    """The solve's jaxpr inlined: the other three only serve derivatives."""
    consts, b = _split(args, const_lengths)
    return ctx.lower_sub_jaxpr(ctx.block, jaxprs[_SOLVE], [*consts[_SOLVE], *b])


def _linear_solve_batch(values, dims, *, const_lengths, jaxprs):
    """Every operand batched in front (unbatched ones broadcast), every jaxpr batched alike:
    simple, at the cost of batching constants that did not need it."""
    size = next(v.shape[d] for v, d in zip(values, dims, strict=True) if d is not None)
    operands = [batch_at_front(v, d, size) for v, d in zip(values, dims, strict=True)]
    batched = tuple(
        None
        if closed is None
        else batch_jaxpr(closed, size, [0] * len(closed.in_avals), [True] * len(closed.out_avals))[
            0
        ]
        for closed in jaxprs
    )
    outs = linear_solve_p.bind(*operands, const_lengths=const_lengths, jaxprs=batched)
    return outs, [0] * len(outs)


lowering_rules[linear_solve_p] = _linear_solve_lowering
batch_rules[linear_solve_p] = _linear_solve_batch


# --- custom_root ----------------------------------------------------------------------------


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """`solve(f, initial_guess)`, a root x* of `f` (f(x*) = 0), differentiated implicitly:
    `tangent_solve(g, y)` must solve the linear system g(t) = y for t, where g is f's
    derivative in x at the root. With `has_aux`, `solve` returns `(x, aux)` and so does this."""
    guess_leaves, tree = tree_flatten(initial_guess)
    avals = [get_aval(leaf).strip_weak_type() for leaf in guess_leaves]
    args_tree = tree_structure((initial_guess,))
    f_jaxpr, f_consts, f_tree = stage_function(f, args_tree, avals, "custom_root")
    _check_tree("f", f_tree, tree, False)
    solve_jaxpr, solve_consts, out_tree = stage_function(
        partial(solve, f), args_tree, avals, "custom_root"
    )
    _check_tree("solve", out_tree, tree, has_aux)

    def linearize_and_solve(x, b):
        def f_jvp(t):
            x_leaves, t_leaves = tree_leaves(x), tree_leaves(t)
            _, out = ad.jvp_flat(
                lambda *xs: tree_leaves(f(tree_unflatten(tree, xs))), x_leaves, t_leaves
            )
            return tree_unflatten(tree, [instantiate_zeros(o) for o in out])

        return tangent_solve(f_jvp, b)

    pair = tree_structure((initial_guess, initial_guess))
    solve_t_jaxpr, solve_t_consts, solve_t_tree = stage_function(
        linearize_and_solve, pair, avals + avals, "custom_root"
    )
    _check_tree("tangent_solve", solve_t_tree, tree, False)
    lengths = (len(f_consts), len(solve_consts), len(solve_t_consts))
    jaxprs = (f_jaxpr, solve_jaxpr, solve_t_jaxpr)
    outs = _custom_root(lengths, jaxprs, *f_consts, *solve_consts, *solve_t_consts, *guess_leaves)
    return tree_unflatten(out_tree, outs)


@partial(custom_jvp, nondiff_argnums=(0, 1))
def _custom_root(lengths, jaxprs, *args):
    (_, solve_consts, _), guess = _split(args, lengths)
    return eval_jaxpr(jaxprs[1].jaxpr, [], *solve_consts, *guess)


@_custom_root.defjvp
def _custom_root_jvp(lengths, jaxprs, primals, tangents):
    """F(θ, x*(θ)) = 0 gives ∂_θF θ' + ∂_xF x*' = 0: x*' = -(∂_xF)^{-1} ∂_θF θ'."""
    (f_consts, _, solve_t_consts), _ = _split(primals, lengths)
    (f_consts_dot, _, _), _ = _split(tangents, lengths)
    outs = _custom_root(lengths, jaxprs, *primals)
    n = len(jaxprs[0].out_avals)
    solution, aux = outs[:n], outs[n:]
    f_jaxpr, _, solve_t_jaxpr = jaxprs
    _, rhs = ad.jvp_flat(
        lambda *consts: eval_jaxpr(f_jaxpr.jaxpr, [], *consts, *solution),
        f_consts,
        f_consts_dot,
    )
    rhs = [instantiate_zeros(r) for r in rhs]
    solved = eval_jaxpr(solve_t_jaxpr.jaxpr, [], *solve_t_consts, *solution, *rhs)
    aux_dot = [ad.zeros_like_aval(ad.tangent_aval(get_aval(a))) for a in aux]
    return outs, [elementwise.neg(s) for s in solved] + aux_dot
