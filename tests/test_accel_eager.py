"""The C accelerator's eager kernels (`csrc/accel/eager.c`) give exactly what the Python path
they short-cut gives: the same values bit for bit, the same dtype and weak type. They decline
(answer None) wherever they cannot be sure of that, and `jnp`'s fast paths then bind.

An element-wise kernel is compared with `primitive.bind` (the eval trace calling the impl) on
edge values of every real dtype; a reduction kernel with the `jnp` reduction's slow path (its
kernel set to None). Skipped where the accelerator is not built.
"""

import warnings

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit._src import core
from tracejit._src.accel import accel
from tracejit._src.array import make_array
from tracejit._src.interpreters import eval as eval_interpreter
from tracejit._src.lax import binary as lax_binary
from tracejit._src.lax import elementwise as lax_elementwise
from tracejit._src.lax import standard as lax_standard
from tracejit._src.numpy import arithmetic, reductions, ufuncs

from .helpers import b, bf16, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64

needs_accel = pytest.mark.skipif(
    eval_interpreter.eager_context is None, reason="the C accelerator is not built here"
)

KERNEL_PRIMITIVES = sorted(
    (p for p in core.primitives.values() if ufuncs.eager_kernel(p) is not None),
    key=lambda p: p.name,
)


def edge_values(dtype) -> np.ndarray:
    """Zeros of both signs, infinities, NaN, extremes, subnormals and ordinary values."""
    if dtype == b:
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = [0, 1, 2, 3, 7, info.max, info.max - 1] + ([-1, -8, info.min] if info.min else [])
        return np.array(values, dtype)
    info = np.finfo(dtype)
    values = [0.0, -0.0, 0.5, 1.0, -1.0, 2.0, -2.5, 3.75, 100.0, np.inf, -np.inf, np.nan]
    return np.array(values + [info.tiny, info.tiny / 4, info.max, -info.max], dtype)


def ones(shape):
    """An Array of ones with a contiguous value (`jnp.ones` makes a broadcast view, which
    kernels decline)."""
    return jnp.asarray(np.ones(shape, np.float32))


def same_bits(got, want) -> None:
    got, want = np.asarray(got._value), np.asarray(want._value)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    if got.dtype.kind == "f":
        got, want = (v.view(f"u{v.dtype.itemsize}") for v in (got, want))
    np.testing.assert_array_equal(got, want)


def check_kernel_equals_bind(primitive, *operands) -> None:
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            want = primitive.bind(*operands)
        except (TypeError, ValueError):
            return  # a dtype the primitive refuses: jnp never hands it to the kernel
    got = ufuncs.eager_kernel(primitive)(*operands)
    if warned:  # an impl that lets NumPy warn: the kernel declines, and NumPy warns
        assert got is None
        return
    assert got is not None, f"{primitive} declined {[o.aval for o in operands]}"
    same_bits(got, want)
    assert got.weak_type == want.weak_type


def operand_pairs(dtype):
    """Every pair of edge values as two arrays, and each array with a rank-0 operand."""
    values = edge_values(dtype)
    x, y = np.repeat(values, len(values)), np.tile(values, len(values))
    scalar = np.array(values[-1])
    return [(x, y), (x, scalar), (scalar, y), (scalar, np.array(values[1]))]


def check_primitive(primitive, dtype):
    ufunc, _ = lax_standard.eager_ufunc(primitive)
    for x, y in operand_pairs(dtype):
        for weak in (False, True):
            ax, ay = make_array(x, weak), make_array(y, weak)
            if ufunc.nin == 1:
                check_kernel_equals_bind(primitive, ax)
            else:
                check_kernel_equals_bind(primitive, ax, ay)
                check_kernel_equals_bind(primitive, ax, make_array(y, not weak))


@needs_accel
@pytest.mark.parametrize("primitive", KERNEL_PRIMITIVES, ids=str)
@pytest.mark.parametrize("dtype", [b, i8, u8, i16, u16, i32, u32, f16, f32], ids=str)
def test_elementwise_kernel_equals_bind(primitive, dtype):
    check_primitive(primitive, dtype)


@needs_accel
@pytest.mark.parametrize("primitive", KERNEL_PRIMITIVES, ids=str)
@pytest.mark.parametrize("dtype", [i64, u64, f64], ids=str)
def test_elementwise_kernel_equals_bind_64_bit(enable_x64, primitive, dtype):
    check_primitive(primitive, dtype)


@needs_accel
def test_the_common_functions_have_kernels():
    names = {p.name for p in KERNEL_PRIMITIVES}
    assert {"add", "sub", "mul", "max", "min", "lt", "eq", "neg", "exp", "log", "sin"} <= names


@needs_accel
def test_jnp_computes_learned_operands_without_binding(monkeypatch):
    x = jnp.asarray(np.linspace(-1, 1, 10, dtype=np.float32))
    jnp.add(x, x), jnp.sin(x), x * 2.0, jnp.sum(x), jnp.max(x), jnp.any(x > 0)  # learn
    bound = []
    trace = eval_interpreter.eval_trace
    original = trace.process_primitive
    monkeypatch.setattr(
        trace,
        "process_primitive",
        lambda p, args, params: bound.append(p) or original(p, args, params),
    )
    results = [jnp.add(x, x), jnp.sin(x), x * 2.0, 2.0 * x, jnp.sum(x), jnp.max(x), jnp.any(x > 0)]
    assert bound == []
    np.testing.assert_array_equal(results[0], np.add(x, x))
    assert results[2].weak_type is False and results[4].weak_type is False


@needs_accel
@pytest.mark.parametrize(
    "x, y",
    [
        (np.ones(3, np.float32), np.ones(2, np.float32)),  # shapes that do not broadcast
        (np.ones(3, np.float32), np.ones((1, 3), np.float32)),  # broadcast by rank promotion
        (np.ones(3, np.float32), np.ones(3, np.float64)),  # two dtypes
        (np.ones(3, np.complex64), np.ones(3, np.complex64)),  # complex: XLA's arithmetic
        (np.ones(3, bf16), np.ones(3, bf16)),  # no NumPy loop of its own
        (np.arange(6.0, dtype=np.float32)[::2], np.ones(3, np.float32)),  # not contiguous
        (np.broadcast_to(np.float32(1), (3,)), np.ones(3, np.float32)),  # jnp.ones' views
        (np.ones(3, np.float32).astype(">f4"), np.ones(3, ">f4")),  # not in native order
    ],
)
def test_elementwise_kernel_declines(x, y):
    kernel = ufuncs.eager_kernel(core.primitives["add"])
    assert kernel(make_array(x, False), make_array(y, False)) is None
    assert kernel(make_array(x, False), 1.0) is None  # not an Array


@needs_accel
def test_kernels_decline_while_tracing():
    x = ones(3)
    add = ufuncs.eager_kernel(core.primitives["add"])
    seen = []

    def f(y):
        seen.append((add(x, x), reductions._sum_kernel(x, None)))
        return y

    tracejit.make_jaxpr(f)(1.0)
    assert seen == [(None, None)]
    printed = str(tracejit.make_jaxpr(lambda y: jnp.add(x, x) + jnp.sum(x) + y)(1.0))
    assert "add" in printed and "reduce_sum" in printed


@needs_accel
@pytest.mark.parametrize("option", ["jax_debug_nans", "jax_debug_infs"])
def test_kernels_decline_under_value_checks(option):
    x = ones(3)
    add = ufuncs.eager_kernel(core.primitives["add"])
    previous = tracejit.config.read(option)
    tracejit.config.update(option, True)
    try:
        assert add(x, x) is None and reductions._sum_kernel(x, None) is None
        with pytest.raises(FloatingPointError, match="log"):
            jnp.log(jnp.asarray(np.array([-1.0, 0.0], np.float32)))
    finally:
        tracejit.config.update(option, previous)
    assert add(x, x) is not None


@needs_accel
def test_kernels_decline_results_over_the_memory_limit():
    x = ones(1000)
    add = ufuncs.eager_kernel(core.primitives["add"])
    previous = tracejit.config.read("tracejit_max_array_bytes")
    tracejit.config.update("tracejit_max_array_bytes", 100)
    try:
        assert add(x, x) is None
        with pytest.raises(tracejit.errors.JaxRuntimeError, match="add"):
            jnp.add(x, x)
    finally:
        tracejit.config.update("tracejit_max_array_bytes", previous)


@needs_accel
def test_quiet_kernels_ignore_floating_point_flags_and_loud_ones_decline():
    zero = make_array(np.zeros(3, np.float32), False)
    context = eval_interpreter.eager_context
    loud = accel.ElementwiseKernel(context, np.log, False, True)
    quiet = accel.ElementwiseKernel(context, np.log, True, True)
    assert loud(zero) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(quiet(zero), np.full(3, -np.inf, np.float32))
        for _ in range(2):  # the slow path learns, the fast path computes: silently both times
            jnp.log(zero), jnp.divide(zero, zero)


@needs_accel
def test_kernel_constructors_check_their_arguments():
    context = eval_interpreter.eager_context
    with pytest.raises(TypeError, match="not a NumPy ufunc"):
        accel.ElementwiseKernel(context, np.sum, True, True)
    with pytest.raises(ValueError, match="divmod is not a unary or binary ufunc"):
        accel.ElementwiseKernel(context, np.divmod, True, True)
    with pytest.raises(TypeError, match="2 positional arguments"):
        ufuncs.eager_kernel(core.primitives["add"])(ones(2))

    class NoSlots:
        _value = weak_type = None

    with pytest.raises(TypeError, match="NoSlots._value is not a slot"):
        accel.EagerContext(NoSlots, object(), "trace", None)


# --- reductions -------------------------------------------------------------------------------

REDUCTIONS = [
    ("sum", "_sum_kernel", None),
    ("prod", "_prod_kernel", None),
    ("max", "_extremum_kernels", "max"),
    ("min", "_extremum_kernels", "min"),
]


def slow_path(monkeypatch, attribute, key):
    if key is None:
        monkeypatch.setattr(reductions, attribute, None)
    else:
        monkeypatch.setitem(getattr(reductions, attribute), key, None)


@needs_accel
@pytest.mark.parametrize("name, attribute, key", REDUCTIONS)
@pytest.mark.parametrize("dtype", [f32, f16, i32, u8, b], ids=str)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("weak", [False, True])
def test_reduction_kernel_equals_slow_path(monkeypatch, name, attribute, key, dtype, axis, weak):
    values = edge_values(dtype)
    x = make_array(np.resize(values, (3, len(values))), weak)
    reduce = getattr(jnp, name)
    reduce(x, axis=axis)  # learns whether the dtype is reduced as it is
    fast = reduce(x, axis=axis)
    slow_path(monkeypatch, attribute, key)
    slow = reduce(x, axis=axis)
    same_bits(fast, slow)
    assert fast.weak_type is slow.weak_type is False


@needs_accel
@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("axis", [None, 1, (0, 1)])
def test_logical_reduction_kernel_equals_slow_path(monkeypatch, name, axis):
    x = jnp.asarray(np.array([[True, False, True], [True, True, True]]))
    reduce = getattr(jnp, name)
    reduce(x, axis=axis)
    fast = reduce(x, axis=axis)
    monkeypatch.setitem(reductions._logical_kernels, name, None)
    same_bits(fast, reduce(x, axis=axis))


@needs_accel
def test_signed_zeros_of_max_and_min_are_xla_s():
    x = jnp.asarray(np.array([0.0, -0.0, -0.0], np.float32))
    for _ in range(2):
        assert not np.signbit(jnp.max(x)) and np.signbit(jnp.min(x))


def test_reductions_refuse_bad_input_on_every_path():
    x = jnp.ones((2, 3))
    for _ in range(2):
        with pytest.raises(ValueError, match="axis 2 is out of bounds"):
            jnp.sum(x, axis=2)
        with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
            jnp.max(jnp.ones((0, 3)))


# --- one-pass loops of composites ---------------------------------------------------------------


def float_operands(dtype):
    """Every pair of edge values, in arrays long enough for the vectorized loops' bodies."""
    values = edge_values(dtype)
    x, y = np.repeat(values, len(values)), np.tile(values, len(values))
    return np.tile(x, 8), np.tile(y, 8)


@needs_accel
@pytest.mark.parametrize("dtype", [f32, f64], ids=str)
def test_float_sign_equals_its_python_twin(dtype):
    x, _ = float_operands(dtype)
    for operand in (x, x[:5], x[:1].reshape(()), x.reshape(8, -1)):
        fast = accel.float_sign(operand)
        assert fast.dtype == dtype
        same_bits(make_array(fast, False), make_array(lax_elementwise._float_sign(operand), False))


@needs_accel
@pytest.mark.parametrize("name", ["fmax", "fmin"])
@pytest.mark.parametrize("dtype", [f32, f64], ids=str)
def test_fmax_fmin_equal_their_python_twins(monkeypatch, name, dtype):
    x, y = float_operands(dtype)
    numpy_fn = getattr(np, name)
    fast = arithmetic._ignoring_nans_ties_to_second(numpy_fn)
    monkeypatch.setattr(arithmetic, "accel", None)
    slow = arithmetic._ignoring_nans_ties_to_second(numpy_fn)
    for x1, x2 in ((x, y), (x.reshape(8, -1), y.reshape(8, -1)), (x[:3], y[:3])):
        assert getattr(accel, name)(x1, x2) is not None
        same_bits(make_array(fast(x1, x2), False), make_array(slow(x1, x2), False))
    # broadcasting, other dtypes: NumPy's path
    half = np.ones(3, f16)
    assert accel.fmax(x, y[:1]) is None and accel.fmax(half, half) is None
    assert accel.float_sign(half) is None and accel.float_sign(x[::2]) is None


@needs_accel
@pytest.mark.parametrize("dtype", [f32, f64], ids=str)
def test_pow_equals_its_python_twin(monkeypatch, dtype):
    x, y = float_operands(dtype)
    rng = np.random.default_rng(0)
    cases = [(x, y), (np.abs(x), y), (x.reshape(8, -1), y.reshape(8, -1))]
    for size in (1, 5, 4097, 10_000):  # around and across the C loop's blocks
        base = rng.uniform(0.0, 3.0, size).astype(dtype)
        cases.append((base, rng.uniform(-4.0, 4.0, size).astype(dtype)))
    fast = [lax_binary._pow_impl(a, e) for a, e in cases]
    monkeypatch.setattr(lax_binary, "accel", None)
    for (a, e), got in zip(cases, fast, strict=True):
        same_bits(make_array(got, False), make_array(lax_binary._pow_impl(a, e), False))
    assert accel.power_scanning_bases(np.power, x, y[:1]) is None


@needs_accel
def test_a_dtype_kept_with_some_arguments_is_not_kept_for_others():
    x = jnp.asarray(np.array([1, 2, 3], np.int8))
    assert jnp.sum(x, promote_integers=False).dtype == np.int8
    assert jnp.sum(x, dtype=np.int8).dtype == np.int8
    for _ in range(2):
        assert jnp.sum(x).dtype == np.int32 and jnp.prod(x).dtype == np.int32
