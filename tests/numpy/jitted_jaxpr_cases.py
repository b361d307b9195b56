"""The `jnp` calls whose jaxprs `test_jitted_jaxprs.py` compares with JAX's (recorded by
`make_jax_reference_jitted_jaxprs.py`): functions that JAX stages as a `jit` of their own
(`jnp.flip` as `jit[name=_flip ...]`). Written against a module `jax` passed in, so that the
recording script runs them on JAX and the test on tracejit."""

import numpy as np


def jitted_calls(jax) -> dict:
    jnp = jax.numpy
    return {
        "flip": lambda a: jnp.flip(a),
        "flip0": lambda a: jnp.flip(a, 0),
        "fliplr": jnp.fliplr,
        "flipud": jnp.flipud,
        "rot90": lambda a: jnp.rot90(a),
        "rot90_k2": lambda a: jnp.rot90(a, 2),
        "sort": lambda a: jnp.sort(a),
        "sort0": lambda a: jnp.sort(a, axis=0),
        "argsort": lambda a: jnp.argsort(a),
        "argsort_descending": lambda a: jnp.argsort(a, descending=True),
        "diff": lambda a: jnp.diff(a),
        "diff_prepend": lambda a: jnp.diff(a, prepend=0.0),
        "append": lambda a: jnp.append(a, a),
        "append_scalar": lambda a: jnp.append(a, 1.0),
        "kron": lambda a: jnp.kron(a, a),
        "atleast_1d": lambda a: jnp.atleast_1d(a),
        "atleast_2d_two": lambda a: jnp.atleast_2d(a, a[0]),
        "atleast_3d": lambda a: jnp.atleast_3d(a),
        "hstack": lambda a: jnp.hstack([a, a]),
        "vstack": lambda a: jnp.vstack([a, a[0]]),
        "linspace": lambda a: jnp.linspace(0.0, 1.0, 5),
        "linspace_retstep": lambda a: jnp.linspace(0.0, 1.0, 5, retstep=True),
        "logspace": lambda a: jnp.logspace(0.0, 1.0, 5),
        "geomspace": lambda a: jnp.geomspace(1.0, 4.0, 3),
        "diagonal": lambda a: jnp.diagonal(a),
        "tril": lambda a: jnp.tril(a),
        "triu": lambda a: jnp.triu(a, 1),
        "trace": lambda a: jnp.trace(a),
        "round": lambda a: jnp.round(a, 2),
        "rint": jnp.rint,
        "cumsum": lambda a: jnp.cumsum(a),
        "where": lambda a: jnp.where(a > 0.5, a, 0.0),
        "clip": lambda a: jnp.clip(a, 0.2, 0.8),
    }


OPERAND = np.linspace(0.1, 0.9, 6).astype(np.float32).reshape(2, 3)
