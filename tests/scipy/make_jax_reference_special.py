"""Records what JAX 0.10.2 gives for tracejit.scipy.special's iterative and series functions
where SciPy differs or has no answer: their values at the edges of their domains (float64),
and the dtype and weak type of their results for Python-scalar, NumPy and low-precision
operands. Writes tests/scipy/data/jax_special.json, read by tests/scipy/test_special_*.py.

Run by hand with real JAX (never imported by the package or the tests), from outside the repo:

    /path/to/jax-venv/bin/python tools/jax_reference.py tests/scipy/make_jax_reference_special.py
"""

import json
import math
import pathlib

import numpy as np

JAX_MODULES = ("jax.scipy.special",)  # (imported for main by tools/jax_reference.py)
nan, inf = math.nan, math.inf


# name: (function of the operands, edge operands, one column per operand)
def _edges(jax, special, jnp):
    return {
        "gammainc": (
            special.gammainc,
            [
                [0.0, 0.0, 0.0, 1.0, 2.0, -1.0, nan, 1.0, inf, inf, 3.0, 0.5, 1e-30, 1e3, 50.0],
                [0.0, 0.5, 2.0, 0.0, inf, 1.0, 1.0, nan, 1.0, inf, -1.0, 1e-300, 1.0, 1e3, 1e-3],
            ],
        ),
        "gammaincc": (
            special.gammaincc,
            [
                [0.0, 0.0, 0.0, 1.0, 2.0, -1.0, nan, 1.0, inf, inf, 3.0, 0.5, 1e-30, 1e3, 50.0],
                [0.0, 0.5, 2.0, 0.0, inf, 1.0, 1.0, nan, 1.0, inf, -1.0, 1e-300, 1.0, 1e3, 1e-3],
            ],
        ),
        "igamma_grad_a": (
            jax.lax.igamma_grad_a,
            [
                [0.0, 0.0, 1.0, 2.0, -1.0, nan, 1.0, 3.0, 0.5, 1e-30, 2.5, 2.5],
                [0.0, 0.5, 0.0, inf, 1.0, 1.0, nan, -1.0, 1e-300, 1.0, 0.5, 7.0],
            ],
        ),
        "betainc": (
            special.betainc,
            [
                [0.0, 1.0, 2.0, 0.0, inf, 1.0, 1.0, -1.0, nan, 2.0, 1e-310, 0.5, 200.0],
                [1.0, 0.0, 2.0, 0.0, 1.0, inf, 1.0, 1.0, 1.0, 2.0, 2.0, 0.5, 300.0],
                [0.5, 0.5, 0.0, 0.5, 0.5, 0.5, 1.5, 0.5, 0.5, 1.0, 0.3, 1e-12, 0.4],
            ],
        ),
        "zeta": (
            special.zeta,
            [
                [
                    0.5,
                    1.0,
                    2.0,
                    3.0,
                    4.0,
                    2.5,
                    0.0,
                    -1.0,
                    -2.0,
                    2.0,
                    3.0,
                    2.0,
                    inf,
                    inf,
                    2.0,
                    1e300,
                ],
                [
                    0.0,
                    -1.0,
                    -2.0,
                    -3.0,
                    -0.5,
                    -2.0,
                    -1.0,
                    1.0,
                    -2.0,
                    -inf,
                    inf,
                    0.5,
                    1.0,
                    -1.0,
                    0,
                    2,
                ],
            ],
        ),
        "i0e": (special.i0e, [[0.0, -0.0, 1e-300, -3.0, 8.0, 8.0001, 100.0, inf, -inf, nan]]),
        "i1e": (special.i1e, [[0.0, -0.0, 1e-300, -3.0, 8.0, 8.0001, 100.0, inf, -inf, nan]]),
        "erfcx": (
            special.erfcx,
            [[-inf, -30.0, -1.0, 0.0, 1e-10, 5.0, 26.0, 27.0, 1e10, inf, nan]],
        ),
        "dawsn": (special.dawsn, [[-inf, -10.0, -3.25, 0.0, 1e-10, 3.25, 6.25, 1e10, inf, nan]]),
        "expi": (
            special.expi,
            [[-inf, -800.0, -1.0, 0.0, -0.0, 1e-10, 2.0, 64.0, 700.0, inf, nan]],
        ),
        "exp1": (special.exp1, [[-1.0, 0.0, 1e-10, 1.0, 2.0, 700.0, 800.0, inf, nan]]),
        "expn": (
            special.expn,
            [
                [-1.0, 0.0, 1.0, 2.0, 3.0, 0.0, 5000.0, 2.0, 1.0, 50.0, nan, 2.0],
                [1.0, 0.0, 0.0, 0.0, 0.0, 2.5, 3.0, -1.0, 1e-10, 0.5, 1.0, inf],
            ],
        ),
        "spence": (special.spence, [[-1.0, 0.0, 1e-10, 0.5, 1.0, 1.5, 2.0, 1e10, inf, nan]]),
        "comb": (
            special.comb,
            [
                [5.0, 5.0, 5.0, -1.0, 0.0, 30.0, 4.5, nan],
                [2.0, 6.0, -1.0, 0.0, 0.0, 15.0, 2.0, 1.0],
            ],
        ),
        "loggamma": (special.loggamma, [[-inf, -1.5, -1.0, 0.0, 1e-10, 0.5, 1.0, 1e10, inf, nan]]),
        "owens_t": (
            special.owens_t,
            [
                [0.0, 0.0, 1.0, -1.0, 2.0, 0.5, 3.0, inf, nan, 1.0],
                [0.5, 1.0, 1.0, 2.0, -3.0, 0.2, 0.1, 1.0, 1.0, inf],
            ],
        ),
        "sici.si": (
            lambda x: special.sici(x)[0],
            [[-inf, -1e10, -5.0, 0.0, 1e-10, 4.0, 8.0, 1e10, inf, nan]],
        ),
        "sici.ci": (
            lambda x: special.sici(x)[1],
            [[-inf, -1e10, -5.0, 0.0, 1e-10, 4.0, 8.0, 1e10, inf, nan]],
        ),
        "fresnel.s": (
            lambda x: special.fresnel(x)[0],
            [[-inf, -4e4, -2.0, 0.0, 1e-10, 1.6, 10.0, 4e4, inf, nan]],
        ),
        "fresnel.c": (
            lambda x: special.fresnel(x)[1],
            [[-inf, -4e4, -2.0, 0.0, 1e-10, 1.6, 10.0, 4e4, inf, nan]],
        ),
    }


# name: (function, operands): the dtype and weak type of the result (default 32-bit mode)
def _dtype_cases(jax, special, jnp):
    return {
        "gammainc": (special.gammainc, [(1, 2), (1.0, 2), (np.float32(1), 2.0), (np.int32(3), 2)]),
        "gammaincc": (special.gammaincc, [(1, 2.0), (np.float16(1), 2)]),
        "betainc": (special.betainc, [(1, 2, 0.5), (jnp.bfloat16(1), 2, 0.5)]),
        "zeta": (special.zeta, [(2, 1), (2.0, np.float32(1)), (np.int32(2), np.int32(1))]),
        "poch": (special.poch, [(2, 0), (2.0, 3.0), (np.float16(2), 3)]),
        "i0": (special.i0, [(1,), (np.int32(1),), (np.float16(1),)]),
        "i0e": (special.i0e, [(1.0,), (jnp.bfloat16(1),)]),
        "i1": (special.i1, [(1,), (np.float32(1),)]),
        "i1e": (special.i1e, [(1.0,), (np.int8(1),)]),
        "numpy.i0": (jnp.i0, [(1,), (np.int32(1),), (np.float16(1),)]),
        "erfcx": (special.erfcx, [(1,), (np.float16(1),), (np.int32(1),)]),
        "dawsn": (special.dawsn, [(1.0,), (jnp.bfloat16(1),)]),
        "expi": (special.expi, [(1,), (np.float32(1),)]),
        "exp1": (special.exp1, [(1.0,), (np.float16(1),)]),
        "expn": (special.expn, [(2, 1.0), (np.int32(2), np.float32(1))]),
        "spence": (special.spence, [(np.float32(0.5),)]),
        "comb": (special.comb, [(5, 2), (np.int32(5), 2), (5.0, np.float16(2))]),
        "loggamma": (special.loggamma, [(3,), (np.float32(3),)]),
        "owens_t": (special.owens_t, [(1, 2), (np.float32(1), 0.5), (np.float16(1), 2)]),
        "sici.si": (lambda x: special.sici(x)[0], [(1,), (np.float16(1),)]),
        "fresnel.s": (lambda x: special.fresnel(x)[0], [(1,), (np.float16(1),), (np.int32(1),)]),
    }


def _jsonable(values):
    """Floats, with "nan", "inf" and "-inf" as strings (`float()` reads them back)."""
    return [v if math.isfinite(v) else str(v) for v in map(float, np.ravel(values))]


def _describe(arg):
    """How an operand was given: ["int" or "float" (Python scalars), value], or [dtype name,
    value] for NumPy and JAX scalars."""
    if isinstance(arg, int | float):
        return [type(arg).__name__, float(arg)]
    return [str(np.asarray(arg).dtype), float(arg)]


def main(jax):
    jax.config.update("jax_enable_x64", True)
    special, jnp = jax.scipy.special, jax.numpy
    out = {"edges": {}, "dtypes": {}}
    for name, (fun, columns) in _edges(jax, special, jnp).items():
        # one element at a time: batched, JAX runs every branch of `expn`, whose loops need
        # not stop on the other branches' elements
        values = [fun(*[np.float64(c[i]) for c in columns]) for i in range(len(columns[0]))]
        out["edges"][name] = {
            "operands": [_jsonable(c) for c in columns],
            "values": _jsonable(values),
        }
    jax.config.update("jax_enable_x64", False)
    for name, (fun, cases) in _dtype_cases(jax, special, jnp).items():
        rows = []
        for args in cases:
            result = fun(*args)
            rows.append([[_describe(a) for a in args], str(result.dtype), bool(result.weak_type)])
        out["dtypes"][name] = rows
    path = pathlib.Path(__file__).parent / "data" / "jax_special.json"
    lines = [f'{{"jax_version": "{jax.__version__}",']
    for section in ("edges", "dtypes"):
        entries = [f" {json.dumps(name)}: {json.dumps(v)}" for name, v in out[section].items()]
        lines.append(f'"{section}": {{\n' + ",\n".join(entries) + "},")
    path.write_text("\n".join(lines).rstrip(",") + "}\n")
