"""Records JAX's derivatives of the factorizations where the factorization is not unique or the
convention is JAX's own: the tangent of a full QR's Householder complement (tall input), the
eigenvector and singular-vector tangents at repeated eigen- and singular values (infinities and
NaNs), and `jnp.linalg.pinv`'s custom JVP. The tests (`tests/lax/test_linalg_spectral.py`)
never import JAX; they compare with `tests/lax/data/linalg_spectral.npz`. To regenerate it, in a
virtualenv with `jax==0.10.2` (CPU), from the repository's root:

    python tools/jax_reference.py tests/lax/make_jax_reference_linalg_spectral.py

`CASES` is also the tests' table: `name -> (fun(jax, *args), args)`, with 64-bit types; each
case stores its primal and tangent outputs as `<name>/primal/<i>` and `<name>/tangent/<i>`.
"""

from __future__ import annotations

import pathlib

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "linalg_spectral.npz"

_RNG = np.random.default_rng(7)
_TALL, _TALL_T = _RNG.normal(size=(4, 2)), _RNG.normal(size=(4, 2))
_WIDE, _WIDE_T = _RNG.normal(size=(2, 3)), _RNG.normal(size=(2, 3))
_SWAP = np.array([[0.0, 1.0], [1.0, 0.0]])
_RECT, _RECT_T = _RNG.normal(size=(3, 2)), _RNG.normal(size=(3, 2))


def _jvp(fun):
    return lambda jax, x, t: jax.jvp(lambda x: fun(jax, x), (x,), (t,))


CASES = {
    "qr_full_tall": (_jvp(lambda jax, x: jax.lax.linalg.qr(x)), (_TALL, _TALL_T)),
    "qr_wide": (_jvp(lambda jax, x: jax.lax.linalg.qr(x)), (_WIDE, _WIDE_T)),
    "eigh_repeated": (_jvp(lambda jax, x: jax.lax.linalg.eigh(x)), (np.eye(2), _SWAP)),
    "svd_repeated": (_jvp(lambda jax, x: jax.lax.linalg.svd(x)), (np.eye(2), _SWAP)),
    "svd_tall": (
        _jvp(lambda jax, x: jax.lax.linalg.svd(x, full_matrices=False)),
        (_RECT, _RECT_T),
    ),
    "pinv": (_jvp(lambda jax, x: jax.numpy.linalg.pinv(x)), (_RECT, _RECT_T)),
}


def _flat(name, primal, tangent):
    primal = primal if isinstance(primal, tuple | list) else (primal,)
    tangent = tangent if isinstance(tangent, tuple | list) else (tangent,)
    out = {f"{name}/primal/{i}": np.asarray(x) for i, x in enumerate(primal)}
    out.update({f"{name}/tangent/{i}": np.asarray(x) for i, x in enumerate(tangent)})
    return out


def main(jax):

    jax.config.update("jax_enable_x64", True)
    data = {}
    for name, (fun, args) in CASES.items():
        data.update(_flat(name, *fun(jax, *args)))
    DATA.parent.mkdir(exist_ok=True)
    np.savez(DATA, **data)
