"""Records JAX's last bits of the arithmetic XLA computes differently from NumPy: a division
whose divisor is broadcast (XLA multiplies by the divisor's reciprocal: `x / s`, means over
some axes) and complex products, quotients, moduli and integer powers (XLA's fused
multiply-adds, Smith's algorithm, JAX's order of products). The tests
(`tests/lax/test_xla_arithmetic_reference.py`) never import JAX; they compare with
`tests/lax/data/xla_arithmetic.npz`. To regenerate it, in a virtualenv with `jax==0.10.2`
(CPU), from the repository's root:

    python tools/jax_reference.py tests/lax/make_jax_reference_xla_arithmetic.py

`CASES` is also the tests' table: `name -> (fun(jnp, lax, *args), args, x64)`, called with
`jax.numpy`/`jax.lax` here and tracejit's there, eagerly (JAX's eager arithmetic is jitted
too); each result is stored as `<name>`.
"""

from __future__ import annotations

import pathlib

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "xla_arithmetic.npz"


def _reals(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(0.5, 10.0, shape) * rng.choice([-1, 1], shape)).astype(dtype)


def _complexes(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    extremes = np.array([0.0, -0.0, 1e-30, 1e30, 1.0])
    parts = rng.standard_normal((2, shape))
    parts[:, :25] = rng.choice(extremes, (2, 25))  # underflow and overflow inside the formulas
    return (parts[0] + 1j * parts[1]).astype(dtype)


def _special_complexes(dtype):
    """Every pair of parts from zeros, ones, infinities, NaN and the extremes."""
    parts = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e30, 1e-30])
    real, imag = np.meshgrid(parts, parts)
    out = np.empty(real.size, dtype)
    out.real, out.imag = real.ravel(), imag.ravel()
    return out


F16, F32, F64 = np.float16, np.float32, np.float64
C64, C128 = np.complex64, np.complex128

CASES = {
    "div_by_scalar_f32": (lambda jnp, lax, x, s: x / s, (_reals(F32, 500, 0), F32(3.7)), False),
    "div_by_python_scalar_f32": (lambda jnp, lax, x: x / 15.0, (_reals(F32, 500, 1),), False),
    "div_by_scalar_f16": (lambda jnp, lax, x, s: x / s, (_reals(F16, 500, 2), F16(3.7)), False),
    "div_by_scalar_f64": (lambda jnp, lax, x, s: x / s, (_reals(F64, 500, 3), F64(3.7)), True),
    "div_by_column_f32": (
        lambda jnp, lax, x, y: x / y,
        (_reals(F32, (50, 8), 4), _reals(F32, (50, 1), 5)),
        False,
    ),
    "div_by_row_lax_f32": (
        lambda jnp, lax, x, y: lax.div(x, y),
        (_reals(F32, (50, 8), 6), _reals(F32, (1, 8), 7)),
        False,
    ),
    "div_by_array_f32": (
        lambda jnp, lax, x, y: x / y,
        (_reals(F32, 500, 8), _reals(F32, 500, 9)),
        False,
    ),
    "mean_over_axis_f32": (
        lambda jnp, lax, x: jnp.mean(x, axis=0),
        (_reals(F32, (7, 300), 10),),
        False,
    ),
    "mul_c64": (
        lambda jnp, lax, x, y: x * y,
        (_complexes(C64, 500, 12), _complexes(C64, 500, 13)),
        False,
    ),
    "div_c64": (
        lambda jnp, lax, x, y: x / y,
        (_complexes(C64, 500, 14), _complexes(C64, 500, 15)),
        False,
    ),
    "div_by_scalar_c64": (
        lambda jnp, lax, x, s: x / s,
        (_complexes(C64, 500, 16), C64(0.3 - 1.7j)),
        False,
    ),
    "reciprocal_c64": (lambda jnp, lax, x: 1 / x, (_complexes(C64, 500, 17),), False),
    "abs_c64_special_values": (lambda jnp, lax, x: jnp.abs(x), (_special_complexes(C64),), False),
    "mul_c128": (
        lambda jnp, lax, x, y: x * y,
        (_complexes(C128, 500, 18), _complexes(C128, 500, 19)),
        True,
    ),
    "div_c128": (
        lambda jnp, lax, x, y: x / y,
        (_complexes(C128, 500, 20), _complexes(C128, 500, 21)),
        True,
    ),
    **{
        f"integer_pow_c64_{n}": (
            lambda jnp, lax, x, n=n: lax.integer_pow(x, n),
            (_complexes(C64, 500, 30 + n),),
            False,
        )
        for n in (2, 3, 4, 5, 6, 7, 13, -1, -2, -3, -5)
    },
}


def main(jax):
    jnp = jax.numpy
    lax = jax.lax

    out = {}
    for name, (fun, args, x64) in CASES.items():
        jax.config.update("jax_enable_x64", x64)
        out[name] = np.asarray(fun(jnp, lax, *[jnp.asarray(a) for a in args]))
    jax.config.update("jax_enable_x64", False)
    np.savez_compressed(DATA, **out)
    print(f"wrote {len(out)} results to {DATA}")
