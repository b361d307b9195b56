"""The test toolkit: dtype names, comparisons, the vmap-against-a-loop check, printed jaxprs, and
`OpSpec`, the row of a family's op table from which the per-primitive checks are generated.

Every primitive is checked eagerly, staged and replayed (`check_traced_matches_eager`), against
a NumPy/SciPy reference (`OpSpec.check_values`), under `vmap` against a Python loop
(`check_vmap`), differentiated against finite differences (`check_grads`) and compiled by XLA
(`tests/lowering/test_lower_op_specs.py`). The tables live in `tests/op_specs/`.
"""

from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

import tracejit
from tracejit._src.api import jvp, make_jaxpr
from tracejit._src.array import Array
from tracejit._src.jaxpr import check_jaxpr, eval_jaxpr
from tracejit._src.tree_util import tree_flatten, tree_leaves, tree_map
from tracejit._src.vmap import vmap
from tracejit.test_util import check_grads

# --- dtypes -----------------------------------------------------------------------------------

b = np.dtype(np.bool_)
i8, i16, i32, i64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
u8, u16, u32, u64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
f16, f32, f64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
bf16 = np.dtype(ml_dtypes.bfloat16)
c64, c128 = np.dtype(np.complex64), np.dtype(np.complex128)

FLOATS = [f32, f16, bf16]
INEXACT = [*FLOATS, c64]
INTS = [i32, i8, u8, u32]
SIGNED = [*FLOATS, i32, i8, c64]
NUMERIC = [*FLOATS, *INTS, c64]
REAL = [*FLOATS, *INTS, b]
ALL = [*REAL, c64]  # the 32-bit types and their smaller kin

# Relative and absolute tolerance of a rounded result against a float64/complex128 reference.
TOLERANCE = {f32: 3e-6, f16: 2e-3, bf16: 1.6e-2, c64: 1e-5}


def wide(dtype) -> np.dtype:
    """float64 or complex128: where references are computed and results compared."""
    return c128 if np.dtype(dtype).kind == "c" else f64


# --- comparisons ------------------------------------------------------------------------------


def assert_close(got, want, tol=0.0, *, atol=None, dtype=None, signed_zeros=False, err_msg=""):
    """`got` has `want`'s shape and values within `tol` (relative, and absolute unless `atol`
    says otherwise), compared in float64/complex128 with NaNs in the same places; booleans and
    integers compare exactly.
    With `dtype`, `got` must have it and `want` (often a wide reference) is first rounded to it.
    With `signed_zeros`, zeros must carry the same sign (XLA's conventions at the edges).
    `err_msg` names the value in a failure."""
    got = np.asarray(got)
    want = np.asarray(want) if dtype is None else np.asarray(want).astype(dtype)
    assert got.shape == want.shape, (err_msg, got.shape, want.shape)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (err_msg, got.dtype, dtype)
    if got.dtype.kind in "biu" and want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=err_msg)
    else:
        widened = c128 if "c" in (got.dtype.kind, want.dtype.kind) else f64
        got, want = got.astype(widened), want.astype(widened)
        np.testing.assert_allclose(
            got, want, rtol=tol, atol=tol if atol is None else atol, equal_nan=True, err_msg=err_msg
        )
    if signed_zeros:
        if got.dtype.kind == "c":
            got, want = np.stack([got.real, got.imag]), np.stack([want.real, want.imag])
        zeros = want == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg)


def assert_same(got, want):
    """Exactly equal in `got`'s dtype, NaNs in the same places, zeros with the same signs."""
    assert_close(got, want, dtype=np.asarray(got).dtype, signed_zeros=True)


def assert_tree_equal(got, want, tol, atol=None):
    """Same pytree structure, dtypes and shapes; values as `assert_close` compares them."""
    got_leaves, got_tree = tree_flatten(got)
    want_leaves, want_tree = tree_flatten(want)
    assert got_tree == want_tree, (got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert_close(g, w, tol, atol=atol, dtype=np.asarray(w).dtype)


# --- staging, jit, vmap -----------------------------------------------------------------------


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


def checked_value(fun, *args):
    """`fun(*args)` as a NumPy value, once eager and staged results agree (within the
    tolerance of the operands' dtype: NumPy's scalar and array loops may differ)."""
    tol = TOLERANCE.get(np.result_type(*args), 0)
    return np.asarray(check_traced_matches_eager(fun, *args, rtol=tol, atol=tol))


def check_exact(fun, args, expected):
    """`fun(*args)` agrees eagerly and staged, and equals `expected` in shape, dtype, value."""
    out = np.asarray(check_traced_matches_eager(fun, *args))
    expected = np.asarray(expected)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    np.testing.assert_array_equal(out, expected)


def small_integers(shape, dtype, seed=0):
    """Values exact in every dtype (bool: random; complex: integer parts)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    values = rng.integers(-5 if dtype.kind != "u" else 0, 10, shape)
    if dtype.kind == "c":
        return (values + 1j * rng.integers(-5, 10, shape)).astype(dtype)
    return values.astype(dtype)


def eager(fun, *args):
    return fun(*args)


def staged(fun, *args, **options):
    """The type-checked jaxpr of `fun` (`options`: make_jaxpr's, e.g. static_argnums): with
    `eager`, the two ways an error can surface."""
    closed = make_jaxpr(fun, **options)(*args)
    check_jaxpr(closed.jaxpr)
    return closed


def check_eager_jit_numpy(fun, args, want, tol=1e-6, replay=True):
    """`fun` eagerly, under jit and (with `replay`) staged, type-checked and replayed, all
    equal `want` (a NumPy reference)."""
    assert_tree_equal(fun(*args), want, tol)
    assert_tree_equal(tracejit.jit(fun)(*args), want, tol)
    if replay:
        check_traced_matches_eager(fun, *args, rtol=tol, atol=tol)


def jaxpr_text(fun, *args) -> str:
    """The printed jaxpr of `fun`, after type-checking it."""
    closed = make_jaxpr(fun)(*args)
    check_jaxpr(closed.jaxpr)
    return str(closed)


def batch_member(arg, axis, i):
    """Member `i` of the (pytree) argument `arg` batched at `axis` (None: not batched)."""
    if axis is None:
        return arg
    return tree_map(lambda x: np.take(np.asarray(x), i, axis=axis), arg)


def vmap_reference(fun, args, in_axes, out_axes=0):
    """`fun` applied to each batch member in a Python loop, results stacked at `out_axes`:
    what `vmap(fun, in_axes, out_axes)(*args)` must equal."""
    size = next(
        np.shape(tree_leaves(a)[0])[ax]
        for a, ax in zip(args, in_axes, strict=True)
        if ax is not None
    )
    outs = [
        fun(*[batch_member(a, ax, i) for a, ax in zip(args, in_axes, strict=True)])
        for i in range(size)
    ]
    return tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs], axis=out_axes), *outs)


def check_vmap(fun, args, in_axes, out_axes=0, tol=1e-6, atol=None, jit=False):
    """`vmap(fun)` (and with `jit`, `jit(vmap(fun))`) equals a Python loop over the batch
    members: same pytree, dtypes and shapes; values as `assert_close` compares them."""
    want = vmap_reference(fun, args, in_axes, out_axes)
    batched = vmap(fun, in_axes, out_axes)
    assert_tree_equal(batched(*args), want, tol, atol)
    if jit:
        assert_tree_equal(tracejit.jit(batched)(*args), want, tol, atol)


# --- op specifications ------------------------------------------------------------------------

Sampler = Callable[[np.random.Generator, tuple, np.dtype], tuple]


def uniform(low=-3.0, high=3.0, int_range=None):
    """A sampler of one operand: reals in [low, high) (complex: imaginary parts half as wide),
    integers in `int_range` (default: their whole range), booleans at random."""

    def sample(rng, shape, dtype):
        return (_uniform(rng, shape, dtype, low, high, int_range),)

    return sample


def shaped(low=-3.0, high=3.0, int_range=None):
    """A sampler of one operand per shape of its `shapes` entry, as `uniform` draws them."""

    def sample(rng, shapes, dtype):
        return tuple(_uniform(rng, shape, dtype, low, high, int_range) for shape in shapes)

    return sample


def _uniform(rng, shape, dtype, low, high, int_range):
    if dtype == b:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        int_low, int_high = int_range or (info.min, info.max)
        values = rng.integers(max(int_low, info.min), min(int_high, info.max), shape, endpoint=True)
        return values.astype(dtype)
    values = rng.uniform(low, high, shape)
    if dtype.kind == "c":
        values = values + 0.5j * rng.uniform(low, high, shape)
    return values.astype(dtype)


UNIFORM = uniform()


@dataclass(frozen=True)
class OpSpec:
    """One row of a family's op table: a public function of array operands, the primitive it
    binds, and what it must compute. The checks below are generated from it, one test per row
    and dtype (and shape, for values)."""

    name: str  # the test id
    fun: Callable  # the public function, of the operands only (params bound by a lambda)
    ref: Callable  # NumPy/SciPy on the widened operands (`reference`)
    dtypes: list  # operand dtypes it accepts; the first is the one vmap and XLA are checked on
    sample: Sampler = UNIFORM  # operands of one shape and dtype
    shapes: tuple = ((2, 3),)  # what `sample` receives
    primitive: str | None = None  # the primitive it binds, where `name` is not its name
    out: Callable | None = None  # the result dtype from the operands'; default: the same
    tol: float = 1.0  # multiplies TOLERANCE
    exact: bool = False  # the reference runs in the operands' dtype and matches exactly
    grad_argnums: tuple = ()  # the operands it is differentiable in (check_grads on float64)
    grad_tol: float = 1e-5
    linear: bool = False  # its JVP applies it to the tangent (add, transpose, slice, ...)

    def __str__(self):
        return self.name

    @property
    def primitive_name(self) -> str:
        return self.primitive or self.name

    def out_dtype(self, dtype) -> np.dtype:
        return np.dtype(self.out(dtype)) if self.out else np.dtype(dtype)

    def dtypes_per_kind(self) -> list:
        """The first dtype of each kind (float, complex, integer, boolean) the row accepts:
        where checks that do not depend on precision run."""
        kinds = {}
        for dtype in self.dtypes:
            kinds.setdefault("iu" if dtype.kind in "iu" else dtype.kind, dtype)
        return list(kinds.values())

    def operands(self, dtype, shape=None, seed=0) -> tuple:
        rng = np.random.default_rng(seed)
        return self.sample(rng, self.shapes[0] if shape is None else shape, np.dtype(dtype))

    def reference(self, *operands):
        """`ref` on float64/complex128 copies of inexact operands (integer and boolean
        operands, and all of them when `exact`, as they are)."""
        if not self.exact:
            operands = [
                x.astype(wide(x.dtype)) if x.dtype.kind in "fcV" else x
                for x in map(np.asarray, operands)
            ]
        with np.errstate(all="ignore"):
            return self.ref(*operands)

    def check_values(self, dtype, shape):
        """Eager, staged and replayed results agree and match the reference."""
        operands = self.operands(dtype, shape)
        tol = TOLERANCE.get(np.dtype(dtype), 0)  # NumPy's scalar and array loops may differ
        out = check_traced_matches_eager(self.fun, *operands, rtol=tol, atol=tol)
        out_dtype = self.out_dtype(dtype)
        tol = TOLERANCE.get(out_dtype, TOLERANCE.get(np.dtype(dtype), 0)) * self.tol
        for got, want in zip(tree_leaves(out), tree_leaves(self.reference(*operands)), strict=True):
            assert not got.weak_type
            assert_close(got, want, 0 if self.exact else tol, dtype=out_dtype)
        return out

    def check_vmap(self, dtype=None, size=3):
        """Batched at axis 0 in every operand, then in the first only (at its last axis)."""
        dtype = self.dtypes[0] if dtype is None else dtype
        members = [self.operands(dtype, seed=seed) for seed in range(size)]
        batched = [np.stack(column) for column in zip(*members, strict=True)]
        tol = TOLERANCE.get(np.dtype(dtype), 0) * self.tol
        check_vmap(self.fun, batched, (0,) * len(batched), tol=tol)
        first = np.moveaxis(batched[0], 0, -1)
        in_axes = (batched[0].ndim - 1,) + (None,) * (len(batched) - 1)
        check_vmap(self.fun, [first, *members[0][1:]], in_axes, tol=tol)

    def check_grads(self):
        """Forward and reverse derivatives in `grad_argnums` against finite differences (the
        other operands held fixed), in float64/complex128, and for linear ops, JVP(t) = fun(t)."""
        operands = self.operands(wide(next(d for d in self.dtypes if d.kind in "fc")))

        def of_differentiable(*xs):
            full = list(operands)
            for i, x in zip(self.grad_argnums, xs, strict=True):
                full[i] = x
            return self.fun(*full)

        args = [operands[i] for i in self.grad_argnums]
        check_grads(of_differentiable, args, 1, atol=self.grad_tol, rtol=self.grad_tol)
        if self.linear:
            tangents = self.operands(np.asarray(args[0]).dtype, seed=1)
            tangents = [tangents[i] for i in self.grad_argnums]
            _, tangent_out = jvp(of_differentiable, args, tangents)
            assert_tree_equal(tangent_out, of_differentiable(*tangents), 1e-6)
