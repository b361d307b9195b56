"""Edge cases of `jax.nn`, `jax.scipy.special` and `lax` where JAX 0.10.2 is not the obvious
reading, found by calling every function on scalars, booleans, integers, half precision and
complex values next to JAX; complex values recorded from JAX 0.10.2."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp

C = np.array([0.5 + 1j, 1.5, -2 - 3j], np.complex64)


def test_logsumexp_of_complex_values_is_the_complex_log_of_the_sum():
    np.testing.assert_allclose(jax.nn.logsumexp(C), np.log(np.exp(C.astype(complex)).sum()),
                               rtol=1e-6)  # fmt: skip
    magnitude, sign = jax.nn.logsumexp(C, return_sign=True)
    np.testing.assert_allclose(magnitude, 1.6890354, rtol=1e-6)  # (JAX 0.10.2)
    np.testing.assert_allclose(sign, 0.9675413 + 0.25271297j, rtol=1e-6)
    np.testing.assert_allclose(jax.nn.logsumexp(C, b=jnp.array([1.0, -2.0, 0.5])),
                               2.1108613 + 2.9739099j, rtol=1e-6)  # fmt: skip
    assert jax.nn.logsumexp(jnp.full(2, -np.inf, jnp.complex64)) == -np.inf
    np.testing.assert_allclose(jax.nn.logmeanexp(C), 0.5904231 + 0.25548318j, rtol=1e-6)
    np.testing.assert_allclose(
        jax.grad(lambda x: jax.nn.logsumexp(x).real)(C),
        [0.2239449 + 0.2063443j, 0.80088925 - 0.20918496j, -0.02483416 + 0.00284067j],
        rtol=1e-5,
    )


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmaxes_of_booleans_are_type_errors(name):
    with pytest.raises(TypeError, match="sub does not accept dtype bool"):
        getattr(jax.nn, name)(jnp.array([True, False]))


@pytest.mark.parametrize("name", ["entr", "gammasgn"])
def test_real_only_special_functions_refuse_complex_values(name):
    with pytest.raises(ValueError, match="does not support complex-valued inputs"):
        getattr(jax.scipy.special, name)(C)


def test_softplus_of_integers_is_strong():
    out = jax.nn.softplus(jnp.array([1, 2], jnp.int8))
    assert out.dtype == np.float32 and not out.weak_type
    np.testing.assert_allclose(out, np.log1p(np.exp([1.0, 2.0])), rtol=1e-6)


def test_stage_returns_device_arrays_as_they_are():
    x = jax.jit(lambda: 2.5)()
    assert jax.lax.stage(x) is x
