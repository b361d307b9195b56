"""Eager NumPy namesakes (`_src/numpy/namesakes.py`): a jnp function that eager mode computes
by one NumPy call gives, over the fuzz suite's dtypes (and float64), what `jit` of the same
call gives and what its composite gives evaluated primitive by primitive: the same values bit
for bit (any NaN for a NaN), dtypes, weak types and shapes.

XLA on CPU flushes subnormal numbers to zero, so the comparison with `jit` leaves them out;
the comparison with the eager composite keeps them.
"""

import functools

import ml_dtypes
import numpy as np
import pytest
from fuzz.strategies import ALL_DTYPES

import tracejit
import tracejit.numpy as jnp
from tracejit._src.array import make_array
from tracejit._src.interpreters import eval as eval_interpreter
from tracejit._src.numpy.namesakes import namesakes_off

DTYPES = [*ALL_DTYPES, np.dtype(np.float64)]

UNARY = ["trunc", "isinf", "signbit", "spacing"]
BINARY = [
    "copysign",
    "heaviside",
    "hypot",
    "floor_divide",
    "fmax",
    "fmin",
    "logaddexp",
    "logaddexp2",
]
# (function, keyword arguments) of the reductions
REDUCTIONS = (
    [
        (name, kwargs)
        for name in ["nanmin", "nanmax", "nansum", "nanmean", "var", "std"]
        for kwargs in [{}, {"axis": 0}, {"axis": -1}, {"axis": (0, 1)}]
    ]
    + [
        ("count_nonzero", kwargs)
        for kwargs in [{}, {"axis": 1}, {"axis": (0, 1)}, {"axis": 0, "keepdims": True}]
    ]
    + [
        ("diagonal", kwargs)
        for kwargs in [{}, {"offset": 3}, {"offset": -2}, {"offset": 1, "axis1": 1, "axis2": 0}]
    ]
    + [("trace", kwargs) for kwargs in [{}, {"offset": 2}, {"offset": -3}]]
)


def edge_values(dtype, subnormals: bool) -> np.ndarray:
    """Zeros of both signs, halves, infinities, NaNs of both signs, the extremes and, if asked,
    subnormals of `dtype`."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([0, 1, 2, 5, 100, info.max, info.min, info.min + 1], dtype)
    info = ml_dtypes.finfo(dtype)
    values = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.5, -2.5, 7.0, -7.0, 1e-3, 123.456]
    values += [float(info.tiny), -float(info.tiny), float(info.max), -float(info.max)]
    values += [np.inf, -np.inf, np.nan, -np.nan]
    if subnormals:
        values += [float(info.smallest_subnormal), -float(info.smallest_subnormal)]
    real = np.array(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype.kind == "c":
            return (real + 1j * real[::-1]).astype(dtype)
        return real.astype(dtype)


def binary_operands(dtype, subnormals: bool):
    """Every pair of edge values, flat; each repeated so that NumPy's vectorized loops run."""
    values = edge_values(dtype, subnormals)
    x, y = np.meshgrid(values, values)
    reps = -(-4096 // x.size)
    return np.tile(x.ravel(), reps), np.tile(y.ravel(), reps)


def reduction_operand(dtype, subnormals: bool) -> np.ndarray:
    """Rows of edge values in several orders, a row of NaNs and rows of signed zeros."""
    values = edge_values(dtype, subnormals)
    rng = np.random.default_rng(0)
    rows = [rng.permutation(values) for _ in range(6)]
    if values.dtype.kind == "f" or values.dtype == ml_dtypes.bfloat16:
        rows.append(np.full(len(values), np.nan, values.dtype))
        rows.append(np.where(np.arange(len(values)) % 2 == 0, values.dtype.type(-0.0), 0))
        rows.append(np.full(len(values), -0.0, values.dtype))
    return np.stack(rows).astype(values.dtype)


def bits_equal(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind in "biu":
        return bool(np.array_equal(got, want))
    if got.dtype.kind == "c":
        return bits_equal(got.real, want.real) and bits_equal(got.imag, want.imag)
    unsigned = np.dtype(f"u{got.dtype.itemsize}")
    nan = np.isnan(got.astype(np.float64))
    same_nan = nan == np.isnan(want.astype(np.float64))
    return bool(same_nan.all() and (got.view(unsigned) == want.view(unsigned))[~nan].all())


def outcome(fun, *args):
    """(result, None) or (None, exception class)."""
    try:
        return fun(*args), None
    except (TypeError, ValueError) as e:  # the class is compared
        return None, type(e)


def check_namesake(fun, args, weak: bool):
    arrays = [make_array(np.asarray(a), weak) for a in args]
    got, error = outcome(fun, *arrays)
    with namesakes_off():
        composite, composite_error = outcome(fun, *arrays)
    assert error is composite_error
    if error is not None:
        return
    assert bits_equal(got, composite)
    assert got.weak_type == composite.weak_type


def check_against_jit(fun, args, weak: bool, reduces_floats: bool = False, rounds=False):
    arrays = [make_array(np.asarray(a), weak) for a in args]
    got, error = outcome(fun, *arrays)
    traced, traced_error = outcome(tracejit.jit(fun), *arrays)
    assert error is traced_error
    if error is not None:
        return
    assert got.dtype == traced.dtype and got.shape == traced.shape
    assert got.weak_type == traced.weak_type
    if reduces_floats:  # XLA sums in another order
        wide = np.complex128 if got.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(np.asarray(got, wide), np.asarray(traced, wide), rtol=1e-2)
    elif rounds:  # XLA's exp and log1p, and its float64 division, differ in the last place
        eps = float(ml_dtypes.finfo(got.dtype).eps)  # (absolute: results that cancel to ~0)
        np.testing.assert_allclose(got, traced, rtol=4 * eps, atol=4 * eps)
    else:
        assert bits_equal(got, traced)


@pytest.fixture(params=DTYPES, ids=str)
def dtype(request):
    if request.param == np.float64:
        previous = tracejit.config.read("jax_enable_x64")
        tracejit.config.update("jax_enable_x64", True)
        yield request.param
        tracejit.config.update("jax_enable_x64", previous)
    else:
        yield request.param


@pytest.mark.parametrize("weak", [False, True])
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_elementwise_namesakes(name, dtype, weak):
    fun = getattr(jnp, name)
    for subnormals in (True, False):
        if name in UNARY:
            args = (np.tile(edge_values(dtype, subnormals), 200),)
        else:
            args = binary_operands(dtype, subnormals)
        check_namesake(fun, args, weak)
        logaddexp = name in ("logaddexp", "logaddexp2")
        # (complex logaddexp, which has no namesake, puts NaNs elsewhere than XLA at infinities)
        if not subnormals and not (logaddexp and np.dtype(dtype).kind == "c"):
            rounds = logaddexp or (name == "hypot" and dtype == np.float64)
            check_against_jit(fun, args, weak, rounds=rounds)


@pytest.mark.parametrize("weak", [False, True])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16], ids=str)
def test_isnan_namesake(dtype, weak):
    # (floats only: a weakly typed bool, which no Python scalar makes, is weak eagerly and not
    # under jit, namesake or none)
    args = (np.tile(edge_values(dtype, True), 200),)
    check_namesake(jnp.isnan, args, weak)
    check_against_jit(jnp.isnan, args, weak)


@pytest.mark.parametrize("name", BINARY)
def test_broadcasting_and_rank_zero(name):
    fun = getattr(jnp, name)
    values = edge_values(np.float32, False)
    for x, y in [
        (values[:, None], values[None, :]),
        (values[3], values),
        (values, values[5]),
        (values[2], values[7]),
    ]:
        check_namesake(fun, (x, y), weak=False)
        check_against_jit(fun, (x, y), weak=False, rounds=name in ("logaddexp", "logaddexp2"))


@pytest.mark.parametrize(("name", "kwargs"), REDUCTIONS, ids=str)
def test_reduction_namesakes(name, kwargs, dtype):
    fun = functools.partial(getattr(jnp, name), **kwargs)
    floats = np.dtype(dtype).kind in "fcV"
    for subnormals in (True, False):
        args = (reduction_operand(dtype, subnormals),)
        check_namesake(fun, args, weak=False)
        if not subnormals:
            sums = name in ("var", "std", "nanmean", "trace") or (name == "nansum" and floats)
            check_against_jit(fun, args, weak=False, reduces_floats=sums)


REDUCTION_NAMES = ["nanmin", "nanmax", "nansum", "nanmean", "count_nonzero", "var", "std"]


@pytest.mark.parametrize("name", REDUCTION_NAMES)
def test_empty_and_rank_zero_reductions(name):
    fun = getattr(jnp, name)
    for value in [np.zeros((0,), np.float32), np.zeros((3, 0), np.float32), np.float32(-0.0)]:
        check_namesake(fun, (value,), weak=False)
        if not (name in ("nansum", "nanmean") and value.ndim == 0):  # XLA keeps -0., NumPy adds +0.
            check_against_jit(fun, (value,), weak=False)


def count_binds(monkeypatch, fun, *args, **kwargs) -> int:
    calls = []
    process = eval_interpreter.eval_trace.process_primitive

    def counting(primitive, operands, params):
        calls.append(primitive)
        return process(primitive, operands, params)

    monkeypatch.setattr(eval_interpreter.eval_trace, "process_primitive", counting)
    fun(*args, **kwargs)
    monkeypatch.undo()
    return len(calls)


@pytest.mark.parametrize("name", UNARY + BINARY + REDUCTION_NAMES)
def test_eager_call_binds_no_primitive(monkeypatch, name):
    fun = getattr(jnp, name)
    x = jnp.asarray(np.linspace(-2, 2, 11, dtype=np.float32))
    args = (x,) if name not in BINARY else (x, x[::-1])
    fun(*args)  # the first call of a signature traces the composite for its result type
    assert count_binds(monkeypatch, fun, *args) == 0
    with namesakes_off():
        assert count_binds(monkeypatch, fun, *args) > 0


def test_outputs_of_jit_take_the_namesake(monkeypatch):
    x = tracejit.jit(lambda v: v * 2)(jnp.asarray(np.array([1.5, -2.5, np.nan], np.float32)))
    jnp.trunc(x)
    assert count_binds(monkeypatch, jnp.trunc, x) == 0
    np.testing.assert_array_equal(jnp.trunc(x), [3.0, -5.0, np.nan])


def test_traced_calls_stage_the_composite():
    x = jnp.asarray(np.array([1.5, -2.5], np.float32))
    jaxpr = tracejit.make_jaxpr(lambda: jnp.trunc(x))()
    (call,) = jaxpr.jaxpr.eqns  # (a jit of the composite, as JAX stages it)
    body = call.params["jaxpr"].jaxpr
    assert [e.primitive.name for e in body.eqns] == ["lt", "ceil", "floor", "jit"]


def test_unlisted_keywords_and_operands_take_the_composite(monkeypatch):
    x = jnp.asarray(np.array([[1.0, np.nan], [np.nan, np.nan]], np.float32))
    assert count_binds(monkeypatch, jnp.nanmin, x, keepdims=True) > 0
    assert count_binds(monkeypatch, jnp.nanmin, x, 0) > 0  # axis given by position
    assert count_binds(monkeypatch, jnp.trunc, np.array([1.5], np.float32)) > 0
    np.testing.assert_array_equal(jnp.nanmin(x, keepdims=True), [[1.0]])


def test_debug_nans_still_names_the_primitive():
    x = jnp.asarray(np.array([np.nan], np.float32))
    tracejit.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="invalid value"):
            jnp.trunc(x)
    finally:
        tracejit.config.update("jax_debug_nans", False)


def test_bad_input_raises_jax_errors():
    x = jnp.asarray(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError):
        jnp.nanmin(x, axis=2)
    with pytest.raises(ValueError):
        jnp.copysign(x, jnp.asarray(np.ones((4,), np.float32)))
