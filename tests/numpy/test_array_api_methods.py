"""Methods jax.Array has beyond NumPy's names (`view`, `tobytes`, `in`, the array API's
namespace, `flat`'s refusal), eagerly and traced where JAX has them on tracers."""

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp


@pytest.mark.parametrize(
    "source, dtype",
    [(np.float32, np.int32), (np.float32, np.uint8), (np.float32, np.float16),
     (np.int8, np.int16), (np.bool_, np.uint8), (np.uint8, np.bool_)],
)  # fmt: skip
def test_view_reinterprets_the_bits_as_numpy_does(source, dtype):
    x = np.arange(8).astype(source).reshape(2, 4)
    want = x.view(dtype)
    got = jnp.asarray(x).view(dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(tracejit.jit(lambda a: a.view(dtype))(x), want)


def test_view_errors_and_the_identity():
    x = jnp.arange(3.0)
    assert x.view() is x
    with pytest.raises(ValueError, match="size must be a divisor"):
        jnp.arange(3, dtype=jnp.int8).view(np.int16)
    with pytest.raises(NotImplementedError, match="`type` argument"):
        x.view(np.int32, type=np.ndarray)


def test_tobytes_contains_namespace_and_flat():
    x = jnp.arange(4.0)
    assert x.tobytes() == np.arange(4.0, dtype=np.float32).tobytes()
    assert 2.0 in x and 7.0 not in x
    with pytest.raises(ValueError, match="search array must be one-dimensional"):
        1.0 in x.reshape(2, 2)  # noqa: B015
    assert x.__array_namespace__() is jnp and x.__array_namespace__(api_version="2024.12") is jnp
    with pytest.raises(ValueError, match="available versions are"):
        x.__array_namespace__(api_version="2023.12")
    with pytest.raises(NotImplementedError, match="consider arr.flatten"):
        x.flat  # noqa: B018
    np.testing.assert_array_equal(x.clone(), x)
    with pytest.raises(tracejit.errors.TracerBoolConversionError):
        tracejit.jit(lambda a: 2.0 in a)(x)
