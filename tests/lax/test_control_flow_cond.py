"""`lax.cond` and `lax.switch`: eager and jit against NumPy references (dtypes, pytrees,
closures over arrays and over tracers of enclosing transformations), derivatives to second
order in both modes, vmap against per-example loops (unbatched and batched predicate/index),
and JAX's error messages. Golden jaxprs are in test_control_flow_jaxprs.py."""

import re

import numpy as np
import pytest
from helpers import assert_tree_equal, check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax
from tracejit.test_util import check_grads

_rng = np.random.default_rng(0)
f32, f16, i32, c64 = np.float32, np.float16, np.int32, np.complex64


def r(*shape, dtype=f32):
    return _rng.standard_normal(shape).astype(dtype)


# --- eager, jit and NumPy -------------------------------------------------------------------

_X3, _W3 = r(3), r(3)
_XI = np.array([3, -1, 4], i32)
_XC = (r(2) + 1j * r(2)).astype(c64)
_TREE = {"a": r(2, 3), "b": (r(3), np.int32(7))}


def _np_tree_true(t):
    return {"sum": np.float32(t["a"].sum()), "pair": [t["b"][0] * 2, t["b"][1] + 1]}


def _np_tree_false(t):
    return {"sum": np.float32(t["a"].max()), "pair": [t["b"][0] - 1, t["b"][1] * 3]}


def _tree_true(t):
    return {"sum": t["a"].sum(), "pair": [t["b"][0] * 2, t["b"][1] + 1]}


def _tree_false(t):
    return {"sum": t["a"].max(), "pair": [t["b"][0] - 1, t["b"][1] * 3]}


# (id, function of (pred, *args), args, NumPy reference of (pred, *args))
COND_CASES = [
    (
        "f32",
        lambda p, x: lax.cond(p, lambda a: jnp.sin(a) * 2, lambda a: a - 1, x),
        (_X3,),
        lambda p, x: (np.sin(x) * 2 if p else x - 1).astype(f32),
    ),
    (
        "i32",
        lambda p, x: lax.cond(p, lambda a: a * a, lambda a: -a, x),
        (_XI,),
        lambda p, x: (x * x if p else -x).astype(i32),
    ),
    (
        "f16",
        lambda p, x: lax.cond(p, lambda a: a + a, lambda a: a * a, x),
        (r(4, dtype=f16),),
        lambda p, x: (x + x if p else x * x).astype(f16),
    ),
    (
        "c64",
        lambda p, x: lax.cond(p, lambda a: a * 1j, jnp.conj, x),
        (_XC,),
        lambda p, x: (x * 1j if p else np.conj(x)).astype(c64),
    ),
    (
        "bool_out",
        lambda p, x: lax.cond(p, lambda a: a > 0, lambda a: a < 0, x),
        (_X3,),
        lambda p, x: x > 0 if p else x < 0,
    ),
    (
        "several_operands",
        lambda p, x, y: lax.cond(p, lambda a, b: a * b, lambda a, b: a - b, x, y),
        (_X3, _W3),
        lambda p, x, y: x * y if p else x - y,
    ),
    (
        "pytree_in_out",
        lambda p, t: lax.cond(p, _tree_true, _tree_false, t),
        (_TREE,),
        lambda p, t: _np_tree_true(t) if p else _np_tree_false(t),
    ),
    (
        "no_operands",
        lambda p: lax.cond(p, lambda: np.float32(1), lambda: np.float32(2)),
        (),
        lambda p: np.float32(1 if p else 2),
    ),
    (
        "closure_array",
        lambda p, x: lax.cond(p, lambda a: a @ _W3, lambda a: a.sum(), x),
        (_X3,),
        lambda p, x: np.float32(x @ _W3 if p else x.sum()),
    ),
    (
        "closure_over_outer_arg",  # under jit, `w` is a tracer of the enclosing jit
        lambda p, x, w: lax.cond(p, lambda a: a * w, lambda a: a + w, x),
        (_X3, np.float32(3)),
        lambda p, x, w: x * w if p else x + w,
    ),
    (
        "closure_only",  # branches read outer values and take no operands
        lambda p, x: lax.cond(p, lambda: x * 2, lambda: x * 3),
        (_X3,),
        lambda p, x: x * (2 if p else 3),
    ),
    (
        "integer_pred",  # nonzero means true
        lambda p, x: lax.cond(p.astype(jnp.int32) * 7, lambda a: a + 1, lambda a: a - 1, x),
        (_X3,),
        lambda p, x: x + 1 if p else x - 1,
    ),
]


@pytest.mark.parametrize("pred", [True, False])
@pytest.mark.parametrize("name,fun,args,ref", COND_CASES, ids=[c[0] for c in COND_CASES])
def test_cond_matches_numpy(name, fun, args, ref, pred):
    pred = np.bool_(pred)
    tol = 1e-2 if name == "f16" else 1e-6
    check_eager_jit_numpy(fun, (pred, *args), ref(pred, *args), tol)


def test_cond_predicate_computed_inside_jit():
    fun = jax.jit(lambda x: lax.cond(x.sum() > 0, lambda a: a * 2, lambda a: -a, x))
    for x in (_X3, -np.abs(_X3), np.abs(_X3)):
        want = x * 2 if x.sum() > 0 else -x
        assert_tree_equal(fun(x), want, 1e-6)


def test_cond_weak_type_of_python_scalar_outputs():
    """Branches returning Python floats give a weakly typed f32 (as in JAX); one strong
    output makes the result strong."""
    out = lax.cond(True, lambda: 1.0, lambda: 2.0)
    assert out.dtype == np.float32 and out.weak_type and float(out) == 1.0
    out = lax.cond(True, lambda: 1.0, lambda: np.float32(2.0))
    assert out.dtype == np.float32 and not out.weak_type


_BRANCHES = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: jnp.sin(a) - b,
    lambda a, b: jnp.maximum(a, b),
]
_NP_BRANCHES = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: np.sin(a) - b,
    lambda a, b: np.maximum(a, b),
]


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 3, 7])
def test_switch_matches_numpy_and_clamps(index):
    want = _NP_BRANCHES[min(max(index, 0), 3)](_X3, _W3)
    check_eager_jit_numpy(
        lambda i, a, b: lax.switch(i, _BRANCHES, a, b), (np.int32(index), _X3, _W3), want
    )


@pytest.mark.parametrize("index_dtype", [np.int8, np.uint8, np.int32])
def test_switch_index_dtypes(index_dtype):
    fun = jax.jit(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x))
    for i, ref in enumerate((np.sin, np.cos, np.tanh)):
        assert_tree_equal(fun(index_dtype(i), _X3), ref(_X3), 1e-6)


def test_switch_pytree_and_closures():
    w = r(3)

    def fun(i, t, scale):
        return lax.switch(
            i,
            [
                lambda t: (t["x"] * w, t["n"] + 1),
                lambda t: (t["x"] * scale, t["n"] * 2),
                lambda t: (t["x"] + scale * w, t["n"] - 1),
            ],
            t,
        )

    t = {"x": _X3, "n": np.int32(5)}
    wants = [(_X3 * w, 6), (_X3 * 2.5, 10), (_X3 + 2.5 * w, 4)]
    for i, (x, n) in enumerate(wants):
        check_eager_jit_numpy(fun, (np.int32(i), t, np.float32(2.5)), (x, np.int32(n)))


def test_switch_single_branch_is_applied_directly():
    assert_tree_equal(lax.switch(np.int32(5), [lambda a: a * 3], _X3), _X3 * 3, 1e-6)


def test_cond_only_runs_the_taken_branch_eagerly_and_in_jit():
    """The untaken branch's out-of-range value never shows: the result is exactly the
    taken branch's."""
    fun = lambda p, x: lax.cond(p, lambda a: jnp.log(a), lambda a: a, x)
    x = np.array([-1.0, 0.0], f32)
    assert_tree_equal(jax.jit(fun)(False, x), x, 0)
    assert_tree_equal(fun(False, x), x, 0)


# --- derivatives ----------------------------------------------------------------------------


def _cond_sin_sq(x, w):
    return lax.cond(x.sum() > 0, lambda a: jnp.sin(a) * w, lambda a: a * a * w, x)


GRAD_CASES = [
    ("cond_true", _cond_sin_sq, (np.abs(r(3)) + 0.1, np.float32(1.5))),
    ("cond_false", _cond_sin_sq, (-np.abs(r(3)) - 0.1, np.float32(1.5))),
    (
        "cond_pytree",
        lambda t: lax.cond(True, lambda t: {"y": t[0] * jnp.exp(t[1])}, lambda t: {"y": t[0]}, t)[
            "y"
        ],
        ((r(2), r(2)),),
    ),
    (
        "cond_closure_const",
        lambda x: lax.cond(False, lambda a: a, lambda a: jnp.tanh(a * _W3), x),
        (r(3),),
    ),
    (
        "cond_closure_traced",  # the branch closes over a differentiated argument
        lambda x, w: lax.cond(True, lambda: jnp.sin(x * w), lambda: x),
        (r(3), r(3)),
    ),
    (
        "cond_multiple_outputs",
        lambda x: lax.cond(True, lambda a: (a * a, jnp.cos(a)), lambda a: (a, a), x)[1],
        (r(2),),
    ),
] + [
    (
        f"switch_{i}",
        lambda x, y, i=i: lax.switch(i, [lambda a, b: a * b, jnp.arctan2, lambda a, b: a**3], x, y),
        (r(3), r(3)),
    )
    for i in range(3)
]


@pytest.mark.parametrize("name,fun,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grads(name, fun, args):
    check_grads(fun, args, order=2, modes=["fwd", "rev"])


def test_grad_values_of_each_branch():
    f = jax.grad(lambda x: lax.cond(x > 0, jnp.sin, lambda a: a**3, x))
    np.testing.assert_allclose(f(np.float32(0.5)), np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(f(np.float32(-0.5)), 3 * 0.25, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f)(np.float32(-0.5)), 3 * 0.25, rtol=1e-6)


def test_grad_with_an_integer_operand_beside_a_float_one():
    """A cond with an integer operand alongside a float one differentiates the float one."""

    def loss(x, n):
        return lax.cond(n > 2, lambda a, k: a * k, lambda a, k: a - k, x, n)

    np.testing.assert_allclose(jax.grad(loss)(np.float32(2.0), np.int32(5)), 5.0)
    np.testing.assert_allclose(jax.grad(loss)(np.float32(2.0), np.int32(1)), 1.0)


# --- vmap -----------------------------------------------------------------------------------


def _cond_fun(p, x, w):
    return lax.cond(p, lambda a: (jnp.sin(a) * w, a.sum()), lambda a: (a - w, a.max()), x)


_P4 = np.array([True, False, False, True])

VMAP_CASES = [
    ("pred_batched", (_P4, r(4, 3), r(3)), (0, 0, None)),
    ("pred_only_batched", (_P4, r(3), r(3)), (0, None, None)),
    ("pred_unbatched", (np.bool_(True), r(4, 3), r(4, 3)), (None, 0, 0)),
    ("pred_unbatched_false", (np.bool_(False), r(3, 4), r(3)), (None, 1, None)),
    ("closure_batched", (np.bool_(True), r(3), r(3, 4)), (None, None, 1)),
    ("all_batched_last_axis", (_P4, r(3, 4), r(3, 4)), (0, -1, -1)),
]


@pytest.mark.parametrize("name,args,in_axes", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_cond(name, args, in_axes):
    check_vmap(_cond_fun, args, in_axes, jit=True)


def test_vmap_cond_predicate_computed_from_batched_operand():
    x = r(6, 3)
    check_vmap(lambda a: lax.cond(a.sum() > 0, lambda b: b * 2, jnp.cos, a), (x,), (0,), jit=True)


def test_vmap_batched_predicate_runs_both_branches_and_selects():
    """No cond is left: both branches run on the whole batch and select_n picks."""
    text = jaxpr_text(jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)), _P4, r(4))
    assert "cond[" not in text and "sin" in text and "cos" in text and "select_n" in text
    text = jaxpr_text(jax.vmap(lambda x: lax.cond(True, jnp.sin, jnp.cos, x)), r(4))
    assert "cond[" in text


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (0, 1)])
def test_vmap_switch(in_axes):
    idx = np.array([-1, 0, 1, 2, 5], i32)  # out-of-range indices clamp per member
    x = r(5, 5)
    args = (idx if in_axes[0] is not None else np.int32(1), x)
    fun = lambda i, a: lax.switch(i, [jnp.sin, lambda b: b * b, lambda b: b + _W3[0]], a)
    check_vmap(fun, args, in_axes, jit=True)


def test_vmap_switch_pytree_outputs_with_unbatched_parts():
    fun = lambda i, x: lax.switch(i, [lambda a: (a, 1.0), lambda a: (2 * a, 2.0)], x)
    check_vmap(fun, (np.array([0, 1, 1], i32), r(3, 2)), (0, 0), jit=True)
    check_vmap(fun, (np.int32(1), r(3, 2)), (None, 0), jit=True)


def test_vmap_of_grad_and_jit_of_vmap_of_grad():
    f = lambda p, x: lax.cond(p, jnp.sin, lambda a: a**3, x)
    g = jax.grad(f, argnums=1)
    x = r(4)
    want = np.where(_P4, np.cos(x), 3 * x**2).astype(f32)
    assert_tree_equal(jax.vmap(g)(_P4, x), want, 1e-6)
    assert_tree_equal(jax.jit(jax.vmap(g))(_P4, x), want, 1e-6)
    # grad of a vmapped cond with a batched predicate
    got = jax.grad(lambda x: jax.vmap(f)(_P4, x).sum())(x)
    assert_tree_equal(got, want, 1e-6)


def test_grad_of_vmap_batched_predicate_ignores_untaken_branch():
    """JAX feeds each branch stop_gradient'ed operands for the members that do not take it,
    so an untaken branch whose derivative is infinite contributes no NaN."""
    f = lambda p, x: lax.cond(p, jnp.sqrt, lambda a: a, x)
    p, x = np.array([False, True]), np.array([0.0, 4.0], f32)
    assert_tree_equal(jax.grad(lambda x: jax.vmap(f)(p, x).sum())(x), np.array([1.0, 0.25], f32), 0)
    g = lambda i, x: lax.switch(i, [lambda a: a, jnp.log, lambda a: 2 * a], x)
    got = jax.grad(lambda x: jax.vmap(g)(np.array([0, 1, 2]), x).sum())(np.array([0, 2, 0], f32))
    assert_tree_equal(got, np.array([1.0, 0.5, 2.0], f32), 0)


# --- errors ---------------------------------------------------------------------------------


def _header(fun_a, fun_b, name_a, name_b):
    def where(f):
        code = f.__code__
        return f"{f.__name__} at {code.co_filename}:{code.co_firstlineno}"

    return f"{name_a} is {where(fun_a)}\n{name_b} is {where(fun_b)}\n\n"


def _raises_exactly(exc, message, fun, *args):
    with pytest.raises(exc) as info:
        fun(*args)
    assert str(info.value) == message


def test_error_predicate_not_scalar():
    with pytest.raises(TypeError, match=re.escape("Pred must be a scalar, got [ True False] of")):
        lax.cond(np.array([True, False]), lambda a: a, lambda a: a, 1.0)
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        jax.jit(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(np.zeros(3, bool))


def test_error_predicate_complex():
    with pytest.raises(
        TypeError, match="Pred type must be either boolean or number, got complex64."
    ):
        lax.cond(np.complex64(1.0), lambda a: a + 1, lambda a: a, np.float32(1.5))


def test_float_predicate_is_accepted_as_nonzero():
    assert float(lax.cond(np.float32(0.5), lambda a: a + 1, lambda a: a, 1.5)) == 2.5
    fun = jax.jit(lambda p: lax.cond(p, lambda a: a + 1, lambda a: a, 1.5))
    assert float(fun(np.float32(0.5))) == 2.5 and float(fun(np.float32(0.0))) == 1.5


def test_error_branches_not_callable():
    _raises_exactly(
        TypeError,
        "lax.cond: true_fun and false_fun arguments should be callable.",
        lambda: lax.cond(True, 1, lambda a: a, 1.0),
    )


def test_error_switch_index():
    _raises_exactly(ValueError, "Empty branch sequence", lambda: lax.switch(0, [], 1.0))
    with pytest.raises(TypeError, match=re.escape("Branch index must be scalar, got [1 0] of")):
        lax.switch(np.array([1, 0]), [lambda a: a, lambda a: a], 1.0)
    with pytest.raises(
        TypeError, match=re.escape("Index type must be an integer, got 1.0 as float32")
    ):
        lax.switch(1.0, [lambda a: a, lambda a: a], 1.0)


def _mismatch_detail(fun, *args):
    with pytest.raises(TypeError) as info:
        fun(*args)
    return str(info.value).split("\n\n")[2]


def test_error_branch_output_types_name_the_leaf_path_and_both_types():
    x = jnp.zeros(2)
    assert _mismatch_detail(
        lax.cond, True, lambda a: {"k": a}, lambda a: {"k": a.astype(jnp.int32)}, x
    ) == (
        "The output of true_fun at path ['k'] has type float32[2] but the corresponding output "
        "of false_fun has type int32[2], so the dtypes do not match."
    )
    assert _mismatch_detail(
        lax.cond, True, lambda a: [a, {"z": a}], lambda a: [a, {"z": a.astype(jnp.float16)}], x
    ) == (
        "The output of true_fun at path [1]['z'] has type float32[2] but the corresponding "
        "output of false_fun has type float16[2], so the dtypes do not match."
    )
    branches = [lambda a: (a, a), lambda a: (a, a), lambda a: (a, a[:1])]
    assert _mismatch_detail(lax.switch, 0, branches, x) == (
        "The output of branch 0 at path [1] has type float32[2] but the corresponding output "
        "of branch2 has type float32[1], so the shapes do not match."
    )


def _t(a):
    return a


def _f_int(a):
    return a.astype(jnp.int32)


def _f_short(a):
    return a[:1]


def _t_pair(a):
    return (a, a)


def _f_list(a):
    return [a, a]


def test_error_cond_output_messages_exactly_as_jax():
    x = jnp.zeros(2)
    _raises_exactly(
        TypeError,
        "cond branches must have equal output types but they differ.\n\n"
        + _header(_t, _f_int, "true_fun", "false_fun")
        + "The output of true_fun has type float32[2] but the corresponding output of false_fun "
        "has type int32[2], so the dtypes do not match.\n\n"
        "Revise true_fun and/or false_fun so that all output types match.",
        lambda: lax.cond(True, _t, _f_int, x),
    )
    _raises_exactly(
        TypeError,
        "cond branches must have equal output types but they differ.\n\n"
        + _header(_t, _f_short, "true_fun", "false_fun")
        + "The output of true_fun has type float32[2] but the corresponding output of false_fun "
        "has type float32[1], so the shapes do not match.\n\n"
        "Revise true_fun and/or false_fun so that all output types match.",
        lambda: lax.cond(True, _t, _f_short, x),
    )
    _raises_exactly(
        TypeError,
        "cond branch outputs must have the same pytree structure, but they differ:\n\n"
        + _header(_t_pair, _f_list, "true_fun", "false_fun")
        + "true_fun output is a <class 'tuple'> but false_fun output is a <class 'list'>, so "
        "their Python types differ.\n\n"
        "Revise true_fun and/or false_fun so that they have the same pytree structure.",
        lambda: lax.cond(True, _t_pair, _f_list, x),
    )
    _raises_exactly(
        TypeError,
        "switch branches must have equal output types but they differ.\n\n"
        + _header(_t, _f_int, "branch 0", "branch1")
        + "The output of branch 0 has type float32[2] but the corresponding output of branch1 "
        "has type int32[2], so the dtypes do not match.\n\n"
        "Revise branch 0 and/or branch1 so that all output types match.",
        lambda: lax.switch(1, [_t, _f_int], x),
    )


def test_error_cond_structure_details_as_jax():
    x = np.float32(1.0)
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda a: {"p": (a, a)}, lambda a: {"p": (a,)}, x)
    assert (
        "true_fun output at path ['p'] is a tuple of length 2 but false_fun output at path "
        "['p'] is a tuple of length 1, so the lengths do not match." in str(info.value)
    )
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda a: {"p": a}, lambda a: {"q": a}, x)
    assert (
        "true_fun output is a <class 'dict'> with pytree metadata ('p',) but false_fun output "
        "is a <class 'dict'> with pytree metadata ('q',), so the pytree node metadata does not "
        "match." in str(info.value)
    )
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda a: (a, None), lambda a: (a, a), x)
    assert (
        "true_fun output at path [1] is a <class 'NoneType'> but false_fun output at path [1] "
        "is a pytree leaf, so their Python types differ." in str(info.value)
    )


def test_error_python_if_on_tracer_recommends_cond():
    def fun(x):
        if x > 0:
            return x + 1
        return x

    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        jax.jit(fun)(np.float32(1.0))
    message = str(info.value)
    assert message.startswith("Attempted boolean conversion of traced array with shape bool[].")
    assert "lax.cond" in message
    assert "if x > 0" in message  # the user's source line
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.vmap(fun)(np.ones(2, f32))
    # under grad alone the value is concrete, so Python `if` works (as in JAX)
    assert float(jax.grad(fun)(np.float32(1.0))) == 1.0


def test_cond_operand_keyword():
    out = lax.cond(True, lambda a: a * 2, lambda a: a, operand=1.5)
    assert float(out) == 3.0 and out.weak_type


def test_jit_traces_the_branches_once():
    traces = []

    def fun(p, x):
        def branch(a):
            traces.append(1)
            return a + 1

        return lax.cond(p, branch, lambda a: a, x)

    jitted = jax.jit(fun)
    outs = [float(jitted(p, np.float32(x))) for p, x in ((True, 1), (False, 2), (True, 3))]
    assert outs == [2.0, 2.0, 4.0] and len(traces) == 1


def test_switch_takes_the_older_operand_keyword():
    branches = [lambda x: x, lambda x: x + 1.0]
    assert lax.switch(1, branches, operand=1.0) == 2.0
    with pytest.raises(TypeError, match="no positional operands"):
        lax.switch(1, branches, 1.0, operand=1.0)
