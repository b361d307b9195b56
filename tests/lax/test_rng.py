"""XLA's generators (`lax/rng.py`): rng_bit_generator's bits are checked against recorded JAX
values in test_lax_extras_reference.py; here its vmap rule (JAX's: the first key draws for all
members, values recorded from JAX 0.10.2), its zero derivatives, errors, and rng_uniform's
range, dtypes and batching."""

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit import lax

KEY = np.array([1, 2, 3, 4], np.uint32)


def test_vmap_draws_every_member_from_the_first_key_as_jax_does():
    keys, bits = tracejit.vmap(lambda k: lax.rng_bit_generator(k, (2,)))(np.stack([KEY, KEY + 1]))
    np.testing.assert_array_equal(keys, [[1, 2, 4, 4], [2, 3, 4, 5]])
    np.testing.assert_array_equal(bits, [[512747620, 1298009047], [1267190206, 761827841]])


def test_jaxpr_and_zero_derivative():
    text = str(tracejit.make_jaxpr(lambda k: lax.rng_bit_generator(k, (3,), np.uint8))(KEY))
    assert "b:u32[4] c:u8[3] = rng_bit_generator[" in text
    assert "algorithm=RNG_DEFAULT" in text
    out, tangent = tracejit.jvp(
        lambda x: lax.rng_bit_generator(KEY, (2,))[1].astype(np.float32) * x, (1.0,), (1.0,)
    )
    np.testing.assert_array_equal(tangent, out)  # d/dx (bits * x) = bits: the bits are constant


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: lax.rng_bit_generator(KEY, (2,), np.int32), "unsupported dtype int32"),
        (lambda: lax.rng_bit_generator(KEY[:2], (2,)), "uint32\\[4\\]"),
        (lambda: lax.rng_bit_generator(KEY.astype(np.int32), (2,)), "uint32\\[4\\]"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(TypeError, match=message):
        call()


@pytest.mark.parametrize("jit", [False, True])
def test_rng_uniform_draws_in_range(jit):
    def draw():
        return lax.rng_uniform(np.float32(-2), np.float32(3), (1000,)), lax.rng_uniform(
            0, 10, (50,)
        )

    floats, ints = tracejit.jit(draw)() if jit else draw()
    assert floats.dtype == np.float32 and ints.dtype == np.int32
    floats, ints = np.asarray(floats), np.asarray(ints)
    assert floats.min() >= -2 and floats.max() < 3 and floats.std() > 1
    assert ints.min() >= 0 and ints.max() < 10 and len(set(ints.tolist())) > 3


def test_rng_uniform_batched_bounds_and_no_derivative():
    out = np.asarray(tracejit.vmap(lambda a: lax.rng_uniform(a, a + 1, (100,)))(jnp.arange(3.0)))
    assert out.shape == (3, 100)
    assert all((row >= i).all() and (row < i + 1).all() for i, row in enumerate(out))
    with pytest.raises(NotImplementedError, match="rng_uniform"):
        tracejit.grad(lambda a: lax.rng_uniform(a, 2.0, ()))(1.0)
