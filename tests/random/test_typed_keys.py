"""Typed keys (`random.key`, dtype `key<fry>`): the same bits as the raw keys whose words they
hold (the raw keys' values are checked against JAX in test_random.py), arrays of keys that
index, stack and pass through jit, vmap and scan as JAX's do, and JAX's errors where keys are
used as numbers."""

import numpy as np
import pytest
from helpers import jaxpr_text

import tracejit
import tracejit.numpy as jnp
from tracejit import dtypes, lax, random

SAMPLERS = {
    "uniform": (),
    "normal": (),
    "bits": (),
    "randint": ((3,), 0, 10),
    "bernoulli": (),
    "categorical": (jnp.zeros(3),),
    "choice": (jnp.arange(5),),
    "permutation": (5,),
    "gamma": (2.0,),
    "beta": (2.0, 3.0),
    "poisson": (3.0,),
    "binomial": (5, 0.3),
    "multinomial": (5, jnp.array([0.2, 0.8])),
    "truncated_normal": (-1.0, 1.0),
    "exponential": (),
}


def words(keys):
    return np.asarray(random.key_data(keys))


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_samplers_draw_the_raw_keys_bits(name):
    sampler, args = getattr(random, name), SAMPLERS[name]
    want = np.asarray(sampler(random.PRNGKey(7), *args))
    np.testing.assert_array_equal(np.asarray(sampler(random.key(7), *args)), want)
    jitted = tracejit.jit(lambda key: sampler(key, *args))(random.key(7))
    np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-6)


def test_key_functions_keep_the_form_they_are_given():
    typed, raw = random.key(42), random.PRNGKey(42)
    assert typed.shape == () and typed.dtype == random.key_dtype()
    np.testing.assert_array_equal(words(typed), np.asarray(raw))
    for fn in (lambda k: random.split(k, 3), lambda k: random.fold_in(k, 5), random.clone):
        out = fn(typed)
        assert out.dtype == random.key_dtype()
        np.testing.assert_array_equal(words(out), np.asarray(fn(raw)))
    assert random.split(typed, (2, 3)).shape == (2, 3)
    assert random.key_impl(typed) == random.key_impl(raw) == "threefry2x32"


def test_wrap_key_data_round_trips_and_checks_the_words():
    data = np.arange(6, dtype=np.uint32).reshape(3, 2)
    keys = random.wrap_key_data(data)
    assert keys.shape == (3,)
    np.testing.assert_array_equal(words(keys), data)
    with pytest.raises(TypeError, match=r"shape to end with \(2,\)"):
        random.wrap_key_data(np.zeros((2, 3), np.uint32))
    with pytest.raises(TypeError, match="dtype = uint32"):
        random.wrap_key_data(np.zeros((2, 2), np.float32))


def test_keys_are_categorized_as_jax_categorizes_them():
    dtype = random.key(0).dtype
    assert jnp.issubdtype(dtype, dtypes.prng_key)
    assert jnp.issubdtype(dtype, dtypes.extended)
    assert not jnp.issubdtype(jnp.float32, dtypes.extended)


def test_a_key_prints_as_jax_prints_it():
    keys = random.split(random.key(0), 2)
    assert repr(keys) == (
        f"Array((2,), dtype=key<fry>) overlaying:\n{np.asarray(random.split(random.PRNGKey(0), 2))}"
    )
    assert str(keys) == repr(keys)
    assert repr(tracejit.typeof(keys)) == "ShapedArray(key<fry>[2])"
    assert str(keys.dtype) == repr(keys.dtype) == keys.dtype.name == "key<fry>"
    assert keys.dtype == random.key(1).dtype and hash(keys.dtype) == hash(random.key(1).dtype)
    assert keys.dtype.itemsize == 8 and keys.dtype.type is dtypes.prng_key
    traced = []
    tracejit.jit(lambda k: traced.append(str(k.dtype)) or k)(keys)
    assert traced == ["key<fry>"]
    shape = tracejit.eval_shape(random.split, random.key(0))
    assert repr(shape) == "ShapeDtypeStruct(shape=(2,), dtype=key<fry>)"


def test_arrays_of_keys_index_stack_and_select():
    keys = random.split(random.key(0), 4)
    raw = np.asarray(random.split(random.PRNGKey(0), 4))
    np.testing.assert_array_equal(words(keys[1]), raw[1])
    np.testing.assert_array_equal(words(keys[jnp.array([3, 0])]), raw[[3, 0]])
    np.testing.assert_array_equal(words(jnp.stack([keys[0], keys[2]])), raw[[0, 2]])
    np.testing.assert_array_equal(words(jnp.concatenate([keys, keys])), np.concatenate([raw, raw]))
    np.testing.assert_array_equal(words(jnp.array([keys[1], keys[1]])), raw[[1, 1]])
    mask = jnp.array([True, False, True, False])
    np.testing.assert_array_equal(words(jnp.where(mask, keys, keys[0])), raw[[0, 0, 2, 0]])
    np.testing.assert_array_equal(words(keys.at[1].set(keys[3])), raw[[0, 3, 2, 3]])
    np.testing.assert_array_equal(np.asarray(keys == keys[0]), [True, False, False, False])
    assert keys.reshape(2, 2).T.shape == (2, 2)
    assert [k.shape for k in keys] == [()] * 4
    # Out-of-bounds gathers fill with the key whose words are all ones, as JAX does.
    filled = jnp.take(keys, jnp.array([0, 9]), mode="fill")
    np.testing.assert_array_equal(words(filled)[1], [2**32 - 1] * 2)


@pytest.mark.parametrize(
    "fun",
    [
        lambda k: k[2],
        lambda k: k[jnp.array([3, 1])],
        lambda k: jnp.stack([k[0], k[1]]),
        lambda k: jnp.concatenate([k, k[:1]]),
        lambda k: jnp.where(jnp.arange(4) < 2, k, k[3]),
        lambda k: jnp.broadcast_to(k[0], (2, 3)),
        lambda k: k.at[0].set(k[1]),
        lambda k: k.reshape(2, 2).T,
        lambda k: k == k[1],
        lambda k: jnp.take(k, jnp.array([0, 9]), mode="fill"),
    ],
)
def test_key_array_operations_compile_to_the_eager_result(fun):
    keys = random.split(random.key(3), 4)
    eager, jitted = fun(keys), tracejit.jit(fun)(keys)
    assert jitted.dtype == eager.dtype and jitted.shape == eager.shape
    if eager.dtype == np.bool_:
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager))
    else:
        np.testing.assert_array_equal(words(jitted), words(eager))


def test_keys_through_jit_vmap_and_scan():
    key = random.key(1)
    np.testing.assert_array_equal(words(tracejit.jit(lambda k: k)(key)), words(key))
    np.testing.assert_array_equal(words(tracejit.jit(random.key)(3)), words(random.key(3)))
    keys = random.split(key, 3)
    by_vmap = tracejit.vmap(random.uniform)(keys)
    np.testing.assert_array_equal(np.asarray(by_vmap), [random.uniform(k) for k in keys])

    def step(total, k):
        return total + random.uniform(k), random.split(k)

    for run in (lax.scan, tracejit.jit(lax.scan, static_argnums=0)):
        total, children = run(step, 0.0, random.split(key, 4))
        assert children.shape == (4, 2) and children.dtype == key.dtype
        np.testing.assert_allclose(total, sum(random.uniform(k) for k in random.split(key, 4)))
    carried = tracejit.jit(lambda k: lax.fori_loop(0, 3, lambda i, k: random.split(k)[0], k))
    want = key
    for _ in range(3):
        want = random.split(want)[0]
    np.testing.assert_array_equal(words(carried(key)), words(want))
    assert tracejit.tree_util.tree_leaves({"key": key}) == [key]


def test_keys_closed_over_by_jit_are_constants_of_the_compiled_program(recwarn):
    """optax's inject_hyperparams keeps a key given at construction in its jitted state."""
    key = random.key(17)
    state = tracejit.jit(lambda: {"key": key, "noise": random.normal(key, (2,))})()
    assert isinstance(state["key"], tracejit.Array) and state["key"].dtype == key.dtype
    np.testing.assert_array_equal(words(state["key"]), words(key))
    np.testing.assert_allclose(state["noise"], random.normal(key, (2,)), rtol=2e-7)
    split = tracejit.jit(lambda s: random.split(s["key"]))(state)
    np.testing.assert_array_equal(words(split), words(random.split(key)))
    assert not [w for w in recwarn if "NumPy instead" in str(w.message)]


def test_jaxpr_of_a_split_prints_as_jax():
    assert jaxpr_text(lambda k: random.split(k)[0], random.key(0)) == (
        "{ lambda ; a:key<fry>[]. let\n"
        "    b:key<fry>[2] = random_split[shape=(2,)] a\n"
        "    c:key<fry>[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] b\n"
        "    d:key<fry>[] = squeeze[dimensions=(0,)] c\n"
        "  in (d,) }"
    )


@pytest.mark.parametrize(
    ("fun", "error", "match"),
    [
        (lambda k: k + 1, TypeError, "do not promote"),
        (lambda k: k - k, TypeError, "sub does not accept dtype key<fry>"),
        (lambda k: -k, TypeError, "neg does not accept dtype key<fry>"),
        (lambda k: k < random.clone(k), TypeError, "lt does not accept dtype key<fry>"),
        (lambda k: jnp.sin(k), ValueError, "Cannot convert_element_type from key<fry>"),
        (lambda k: k.astype(jnp.float32), ValueError, "Cannot convert_element_type"),
        (np.asarray, TypeError, "cannot be converted to a NumPy array"),
        (lambda k: random.key(jnp.arange(2)), TypeError, "scalar seed"),
        (lambda k: random.key(1.0), TypeError, "seed must be an integer"),
        (lambda k: random.key(k), TypeError, "given a PRNG key"),
        (lambda k: random.uniform(random.split(k)), ValueError, "single key"),
    ],
)
def test_keys_are_not_numbers(fun, error, match):
    key = random.key(0)
    with pytest.raises(error, match=match):
        fun(key)
    if fun is not np.asarray:
        with pytest.raises(error, match=match):
            tracejit.jit(fun)(key)


def test_legacy_prng_key_option_warns_about_or_refuses_raw_keys():
    raw = random.PRNGKey(0)
    with tracejit.legacy_prng_key("error"):
        with pytest.raises(ValueError, match="Legacy uint32 key array"):
            random.uniform(raw)
        typed_draw = random.uniform(random.key(0))
    np.testing.assert_array_equal(typed_draw, random.uniform(raw))
    with tracejit.legacy_prng_key("warn"), pytest.warns(UserWarning, match="jax.random.key") as w:
        random.normal(raw)
    assert w[0].filename == __file__  # the user's line
    assert tracejit.default_prng_impl.value == "threefry2x32"


def test_astype_of_keys_to_the_key_dtype_is_the_identity():
    keys = random.split(random.key(0), 3)
    same = jnp.astype(keys, keys.dtype)
    np.testing.assert_array_equal(random.key_data(same), random.key_data(keys))


def test_keys_in_the_carry_of_an_eager_scan_reach_jitted_calls():
    """The eager scan evaluates its body on NumPy values, keys among them (optax's noisy_sgd
    under a scan)."""
    step = tracejit.jit(lambda k: random.split(k)[0])
    carry, _ = lax.scan(lambda k, _: (step(k), None), random.key(0), length=3)
    want = random.key(0)
    for _ in range(3):
        want = random.split(want)[0]
    np.testing.assert_array_equal(words(carry), words(want))
