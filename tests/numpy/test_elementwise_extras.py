"""fabs, frexp, ldexp, modf, nextafter, spacing, bitwise_count, pow, gcd, lcm, angle,
iscomplex/isreal (and their -obj forms), isscalar, iterable, sort_complex, unwrap, packbits,
unpackbits, matvec, vecmat and cumulative_sum/prod: against NumPy on several dtypes, eagerly,
staged and under jit; derivatives against finite differences where JAX differentiates; vmap
against a loop. Weak types and JAX's errors: `test_jax_reference_ufuncs.py`."""

import numpy as np
import pytest
from helpers import (
    assert_close,
    bf16,
    c64,
    check_eager_jit_numpy,
    check_traced_matches_eager,
    check_vmap,
    f16,
    f32,
    i8,
    i32,
    u8,
)

import tracejit
import tracejit.numpy as jnp
from tracejit.test_util import check_grads

RNG = np.random.default_rng(0)
# Normal floats only: XLA's CPU flushes subnormals to zero, NumPy (eager evaluation) does not.
F32 = np.array([0.0, -0.0, 1.5, -3.0, 7e37, np.inf, -np.inf, np.nan, 0.3, -1e-30], f32)
F16 = np.array([0.25, -1.0, 65504.0, 3.0, 0.0, -np.inf, 1e-3], f16)
I8 = np.array([[1, -2, 3], [4, 5, -7]], i8)
U8 = np.array([[3, 255], [128, 7]], u8)
Z = np.array([1 + 1j, -1 - 2j, 3, -2j, 0], c64)


def smooth(shape, low=0.5, high=3.0):
    """float64 values away from 0 and from the powers of two where frexp's derivative jumps."""
    return RNG.uniform(low, high, shape) * RNG.choice([-1, 1], shape)


# --- floating-point parts ---------------------------------------------------------------------


@pytest.mark.parametrize("x", [F32, F16, I8], ids=["f32", "f16", "i8"])
def test_fabs_is_the_float_absolute_value(x):
    want = np.fabs(x).astype(f32 if x.dtype == i8 else x.dtype)
    check_eager_jit_numpy(jnp.fabs, (x,), want, tol=0)


@pytest.mark.parametrize("x", [F32, F16], ids=["f32", "f16"])
def test_nextafter_and_spacing_match_numpy(x):
    toward = np.array(1.0, x.dtype)
    check_eager_jit_numpy(jnp.nextafter, (x, toward), np.nextafter(x, toward), tol=0)
    # (JAX's spacing of -0.0 is the negative smallest subnormal, NumPy's the positive one)
    finite = x[np.isfinite(x) & ~((x == 0) & np.signbit(x))]
    with np.errstate(over="ignore"):  # float16's largest value is 32 from infinity
        want = np.spacing(finite)
    check_eager_jit_numpy(jnp.spacing, (finite,), want, tol=0)


@pytest.mark.parametrize("x", [F32, F16], ids=["f32", "f16"])
def test_frexp_splits_mantissa_and_exponent(x):
    mantissa, exponent = np.frexp(x)
    check_eager_jit_numpy(jnp.frexp, (x,), (mantissa, exponent.astype(i32)), tol=0)


def test_frexp_of_bfloat16_rebuilds_its_operand():
    x = np.array([0.75, -3.0, 1e20, 0.0, 2.0**-100], bf16)
    mantissa, exponent = jnp.frexp(x)
    assert mantissa.dtype == bf16 and exponent.dtype == i32
    rebuilt = np.asarray(mantissa, np.float64) * 2.0 ** np.asarray(exponent, np.float64)
    assert_close(rebuilt, x.astype(np.float64))
    assert np.all((np.abs(np.asarray(mantissa, f32)) >= 0.5) | (x == 0))


def test_ldexp_scales_by_powers_of_two_without_overflowing_midway():
    exponents = np.array([1, 2, 3, -4, 100, 1, 1, 1, 3, 200], i32)
    with np.errstate(over="ignore"):
        want = np.ldexp(F32, exponents)
    check_eager_jit_numpy(jnp.ldexp, (F32, exponents), want, tol=0)
    check_eager_jit_numpy(jnp.ldexp, (np.float32(1e-30), 200), np.ldexp(np.float32(1e-30), 200))


def test_modf_splits_fraction_and_whole_part():
    # (JAX's fraction of an infinity is inf - inf = NaN, NumPy's is 0)
    finite = F32[np.isfinite(F32)]
    check_eager_jit_numpy(jnp.modf, (finite,), np.modf(finite), tol=0)
    with pytest.raises(NotImplementedError):
        jnp.modf(F32, out=F32)


@pytest.mark.parametrize("x", [I8, U8, np.array([0, -1, 2**31 - 1, -(2**31)], i32)])
def test_bitwise_count_counts_the_bits_of_the_magnitude(x):
    check_eager_jit_numpy(jnp.bitwise_count, (x,), np.bitwise_count(x), tol=0)


def test_pow_is_power():
    x = RNG.uniform(0.5, 2, (2, 3)).astype(f32)
    check_eager_jit_numpy(jnp.pow, (x, x[0]), np.power(x, x[0]), tol=1e-6)
    check_eager_jit_numpy(jnp.pow, (I8, 2), np.power(I8, 2), tol=0)


def test_float_parts_derivatives():
    x = smooth((5,))
    check_grads(jnp.fabs, (x,), 2)
    check_grads(lambda v: jnp.frexp(v)[0], (x,), 2)
    check_grads(lambda v: jnp.ldexp(v, np.array([3, -2, 0, 5, 1])), (x,), 2)
    check_grads(lambda v: jnp.modf(v)[0], (x,), 1)


def test_float_parts_under_vmap():
    x = RNG.uniform(-100, 100, (3, 4)).astype(f32)
    check_vmap(jnp.frexp, (x,), (0,), tol=0)
    check_vmap(jnp.spacing, (x,), (1,), tol=0)
    check_vmap(jnp.ldexp, (x, np.arange(12, dtype=i32).reshape(3, 4)), (1, 1), tol=0)


# --- integers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [i8, u8, i32])
def test_gcd_and_lcm_match_numpy(dtype):
    low = 0 if dtype == u8 else -12
    x1 = RNG.integers(low, 13, (4, 5)).astype(dtype)
    x2 = RNG.integers(low, 13, (5,)).astype(dtype)
    check_eager_jit_numpy(jnp.gcd, (x1, x2), np.gcd(x1, x2), tol=0)
    check_eager_jit_numpy(jnp.lcm, (x1, x2), np.lcm(x1, x2), tol=0)
    check_vmap(jnp.gcd, (x1, x2), (0, None), tol=0)


# --- complex numbers --------------------------------------------------------------------------


def test_angle_matches_numpy():
    check_eager_jit_numpy(jnp.angle, (Z,), np.angle(Z).astype(f32))
    check_eager_jit_numpy(lambda z: jnp.angle(z, deg=True), (Z,), np.angle(Z, deg=True), 1e-5)
    check_eager_jit_numpy(jnp.angle, (I8,), np.angle(I8.astype(f32)))
    z = smooth((4,)) + 1j * smooth((4,))
    check_grads(jnp.angle, (z,), 2)


def test_iscomplex_and_isreal_test_the_imaginary_part():
    for x in [Z, F32, I8]:
        check_eager_jit_numpy(jnp.iscomplex, (x,), np.iscomplex(x), tol=0)
        check_eager_jit_numpy(jnp.isreal, (x,), np.isreal(x), tol=0)


def test_object_predicates():
    assert jnp.iscomplexobj(Z) and jnp.iscomplexobj(1j) and jnp.iscomplexobj([1j, 2])
    assert not jnp.iscomplexobj(jnp.asarray(F32)) and not jnp.iscomplexobj(None)
    assert jnp.isrealobj(I8) and not jnp.isrealobj(jnp.asarray(Z))
    # Unlike NumPy's, JAX's isscalar counts 0-d arrays, tracers included.
    assert jnp.isscalar(1.0) and jnp.isscalar(np.float32(1)) and jnp.isscalar(jnp.asarray(2))
    assert jnp.isscalar(np.array(2)) and not jnp.isscalar(F32) and not jnp.isscalar([1])
    assert tracejit.jit(lambda x: jnp.asarray(jnp.isscalar(x)))(2.0)
    assert jnp.iterable(F32) and jnp.iterable([]) and not jnp.iterable(1)
    assert not jnp.iterable(jnp.asarray(1.0))


def test_sort_complex_sorts_lexicographically_as_complex():
    x = np.array([3 - 1j, 1 + 2j, 3 - 2j, -1j, 1 + 1j], c64)
    check_eager_jit_numpy(jnp.sort_complex, (x,), np.sort_complex(x), tol=0)
    ints = np.array([[3, 1, 2], [0, -5, 4]], i32)
    check_eager_jit_numpy(jnp.sort_complex, (ints,), np.sort_complex(ints).astype(c64), tol=0)


@pytest.mark.parametrize(
    "kwargs", [{}, {"period": 5.0}, {"discont": 4.0}, {"axis": 0}], ids=lambda k: str(k)
)
def test_unwrap_matches_numpy(kwargs):
    p = np.cumsum(RNG.uniform(-4, 4, (4, 6)), axis=1).astype(f32)
    want = np.unwrap(p.astype(np.float64), **kwargs).astype(f32)
    check_eager_jit_numpy(lambda v: jnp.unwrap(v, **kwargs), (p,), want, tol=1e-5)
    check_grads(lambda v: jnp.unwrap(v, **kwargs), (p.astype(np.float64),), 1)
    check_vmap(lambda v: jnp.unwrap(v, **kwargs), (p,), (1,), tol=1e-5)


def test_unwrap_of_integers_uses_integer_halves():
    p = np.array([0, 5, 10, 3, 1, 30], i32)
    check_eager_jit_numpy(lambda v: jnp.unwrap(v, period=8), (p,), np.unwrap(p, period=8), tol=0)


# --- bits -------------------------------------------------------------------------------------

BITS = np.array([[1, 0, 3, 0, 0, 1, 1, 0, 1, 1], [0] * 9 + [2]], i32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_and_unpackbits_match_numpy(axis, bitorder):
    check_eager_jit_numpy(
        lambda a: jnp.packbits(a, axis, bitorder), (BITS,), np.packbits(BITS, axis, bitorder), 0
    )
    for count in [None, 3, 13, -2]:
        want = np.unpackbits(U8, axis, count, bitorder)
        got = lambda a, c=count: jnp.unpackbits(a, axis, c, bitorder)
        check_eager_jit_numpy(got, (U8,), want, tol=0)


def test_packbits_under_vmap():
    check_vmap(lambda a: jnp.packbits(a, axis=-1), (BITS,), (0,), tol=0)
    check_vmap(lambda a: jnp.unpackbits(a, count=5), (U8,), (1,), tol=0)


# --- products ---------------------------------------------------------------------------------


def test_matvec_and_vecmat_match_numpy():
    m = RNG.normal(size=(2, 3, 4)).astype(f32)
    v = RNG.normal(size=(4,)).astype(f32)
    w = (RNG.normal(size=(3,)) + 1j * RNG.normal(size=(3,))).astype(c64)
    check_eager_jit_numpy(jnp.matvec, (m, v), np.matvec(m, v), tol=1e-5)
    check_eager_jit_numpy(jnp.vecmat, (w, m), np.vecmat(w, m), tol=1e-5)
    check_grads(jnp.matvec, (m.astype(np.float64), v.astype(np.float64)), 1)
    check_grads(jnp.vecmat, (w.astype(np.complex128), m.astype(np.float64)), 1)
    check_vmap(jnp.matvec, (m, v), (0, None), tol=1e-5)


# --- cumulative sums and products -------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("dtype", [i8, u8, f16, f32])
def test_cumulative_sum_and_prod_match_numpy(dtype, include_initial, axis):
    x = RNG.integers(0, 4, (3, 4)).astype(dtype)
    kw = {"axis": axis, "include_initial": include_initial}
    # JAX's sums widen small integers as `sum` does; its products keep the dtype.
    sum_dtype = {i8: i32, u8: np.dtype(np.uint32)}.get(dtype, dtype)
    want_sum = np.cumulative_sum(x, **kw).astype(sum_dtype)
    want_prod = np.cumulative_prod(x, **kw).astype(dtype)
    check_eager_jit_numpy(lambda v: jnp.cumulative_sum(v, **kw), (x,), want_sum, 1e-3)
    check_eager_jit_numpy(lambda v: jnp.cumulative_prod(v, **kw), (x,), want_prod, 1e-3)


def test_cumulative_derivatives_and_vmap():
    x = smooth((3, 4))
    for fun in [jnp.cumulative_sum, jnp.cumulative_prod]:
        check_grads(lambda v, f=fun: f(v, axis=1, include_initial=True), (x,), 2)
        check_vmap(lambda v, f=fun: f(v, axis=0), (x.astype(f32),), (1,), tol=1e-5)


def test_cumulative_sum_of_a_1d_operand_needs_no_axis():
    x = np.array([True, True, False, True])
    check_traced_matches_eager(jnp.cumulative_sum, x)
    assert_close(jnp.cumulative_sum(x), np.array([1, 2, 2, 3], i32), dtype=i32)
    with pytest.raises(ValueError, match="axis was not set"):
        jnp.cumulative_sum(I8)
