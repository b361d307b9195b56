"""Records JAX 0.10.2's hyp1f1, hyp2f1 and sph_harm_y on sampled operands and at their edges,
in float32 and float64, with their gradients, for tests/scipy/test_special_hypergeometric.py:
JAX's conventions (1F1(0; 0; x) = 1, 2F1's poles and x > 1) and its float32 rounding are not
SciPy's.

Run by hand, with JAX 0.10.2 installed, from the repository:
    /work/jaxref/bin/python tools/jax_reference.py tests/scipy/make_jax_reference_special2.py
It writes tests/scipy/data/jax_special2.json next to this script.
"""

import json
import pathlib

import numpy as np

JAX_MODULES = ("jax.scipy.special",)  # (imported for main by tools/jax_reference.py)


def hyp1f1_operands():
    rng = np.random.default_rng(1)
    n = 40
    a, b, x = rng.uniform(0.1, 5, n), rng.uniform(0.1, 5, n), rng.uniform(-30, 30, n)
    edges_a = [0.0, 0.0, 1.5, 2.0, 1.5, 1.5, 1.5, -2.0, 1.5]
    edges_b = [0.0, 2.0, 1.5, 0.0, 2.5, 2.5, 2.5, 3.0, -2.5]
    edges_x = [0.5, 3.0, 2.0, 1.0, 150.0, -150.0, 0.0, 4.0, 2.0]
    return [
        np.concatenate([v, e]) for v, e in zip((a, b, x), (edges_a, edges_b, edges_x), strict=True)
    ]


def hyp2f1_operands():
    rng = np.random.default_rng(2)
    n = 40
    a, b = rng.uniform(0.1, 4, n), rng.uniform(0.1, 4, n)
    c, x = rng.uniform(0.5, 6, n), rng.uniform(-0.9, 0.98, n)
    edges = [  # (a, b, c, x): every branch of JAX's case analysis
        (1.0, 2.0, 3.0, 0.0), (0.0, 2.0, 3.0, 0.5), (1.0, 2.0, 0.0, 0.5), (1.0, 2.0, -2.0, 0.5),
        (2.5, 1.5, 2.0, 0.5), (2.5, 1.5, 2.0, -0.5), (1.0, 2.0, 2.0, 0.5), (2.0, 1.5, 2.0, 0.5),
        (1.0, 2.0, 3.0, 1.5), (0.5, 0.7, 3.0, 1.0), (1.0, 2.0, 3.0, 1.0), (-3.0, 2.0, 3.0, 0.7),
        (2.0, -4.0, 3.5, 0.95), (0.5, 1.5, 4.0, 0.95), (0.5, 1.5, 2.0, 0.97),
        (0.5, 1.25, 3.5, 0.93), (1.0, 2.0, 5.0, 0.99),
    ]  # fmt: skip
    return [
        np.concatenate([v, e]) for v, e in zip((a, b, c, x), zip(*edges, strict=True), strict=True)
    ]


def record(jax, fun, operands, argnums):
    jnp = jax.numpy
    out = {}
    for name, dtype in (("float32", np.float32), ("float64", np.float64)):
        args = [jnp.asarray(v, dtype) for v in operands]
        grads = jax.vmap(jax.grad(fun, argnums))(*args)
        out[name] = {
            "args": [np.asarray(v, dtype).tolist() for v in operands],
            "value": np.asarray(fun(*args)).tolist(),
            "grad": [np.asarray(g).tolist() for g in grads],
        }
    return out


def record_sph_harm_y(jax):
    jnp, sp = jax.numpy, jax.scipy.special
    rng = np.random.default_rng(4)
    n = np.array([0, 1, 1, 2, 2, 3, 4, 5, 6, 6, 8, 8])
    m = np.array([0, -1, 1, 2, -2, 0, -3, 5, 1, -6, 7, -4])
    theta, phi = rng.uniform(0, np.pi, n.size), rng.uniform(0, 2 * np.pi, n.size)
    out = {"n": n.tolist(), "m": m.tolist()}
    for name, dtype in (("float32", np.float32), ("float64", np.float64)):
        th, ph = jnp.asarray(theta, dtype), jnp.asarray(phi, dtype)
        value = sp.sph_harm_y(n, m, th, ph)
        grads = jax.grad(
            lambda t, p: jnp.sum(
                jnp.abs(sp.sph_harm_y(n, m, t, p)) ** 2 + sp.sph_harm_y(n, m, t, p).real
            ),
            (0, 1),
        )(th, ph)
        out[name] = {
            "args": [np.asarray(th).tolist(), np.asarray(ph).tolist()],
            "value": [np.real(value).tolist(), np.imag(value).tolist()],
            "grad": [np.asarray(g).tolist() for g in grads],
        }
    return out


def main(jax):
    jax.config.update("jax_enable_x64", True)
    sp = jax.scipy.special
    data = {
        "hyp1f1": record(jax, sp.hyp1f1, hyp1f1_operands(), (0, 1, 2)),
        "hyp2f1": record(jax, sp.hyp2f1, hyp2f1_operands(), (0, 1, 2, 3)),
        "sph_harm_y": record_sph_harm_y(jax),
    }
    path = pathlib.Path(__file__).parent / "data" / "jax_special2.json"
    path.write_text(json.dumps(data, allow_nan=True) + "\n")
