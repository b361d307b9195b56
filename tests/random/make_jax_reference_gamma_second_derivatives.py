"""Records JAX's second derivatives of Gamma samples in their shape `a` for
`tests/random/test_gamma_second_derivatives.py`, which never imports JAX. To regenerate, in a
virtualenv with `jax==0.10.2` (CPU), from the repository's root:

    python tools/jax_reference.py tests/random/make_jax_reference_gamma_second_derivatives.py

JAX differentiates the series of `random_gamma_grad` in forward mode only: `jacfwd(grad(f))`
and `jacfwd(jacfwd(f))` give the second derivative, `grad(grad(f))` raises.
"""

import json
import pathlib

CASES = {"float32": (0.5, 1.3, 4.0), "float64": (0.5, 1.3, 4.0)}
DATA = pathlib.Path(__file__).parent / "data" / "gamma_second_derivatives.json"


def sample_sum(jax, dtype):
    """The function of `a` differentiated: the sum of three Gamma(a) samples of key 0."""
    key = jax.random.key(0)
    return lambda a: jax.random.gamma(key, a, (3,), dtype=dtype).sum()


def main(jax):
    jnp = jax.numpy

    jax.config.update("jax_enable_x64", True)
    out = {}
    for dtype, shapes in CASES.items():
        f = sample_sum(jax, getattr(jnp, dtype))
        out[dtype] = [
            [float(jax.grad(f)(a)), float(jax.jacfwd(jax.grad(f))(a))]
            for a in (jnp.asarray(a, dtype) for a in shapes)
        ]
    DATA.write_text(json.dumps(out, indent=1) + "\n")
