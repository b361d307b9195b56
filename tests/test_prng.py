"""The PRNG primitives (`_src/prng.py`): Threefry-2x32 against its published known-answer
vectors, its rules (eager = compiled, vmap = a loop, zero tangents), and the key primitives'
jaxprs printed as JAX 0.10.2 prints them."""

import numpy as np
import pytest
from helpers import check_traced_matches_eager

import tracejit
from tracejit import random
from tracejit._src import dtypes, prng

# Random123's known-answer tests for Threefry-2x32, 20 rounds: (key, counter, result).
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def _u32(*values):
    return [np.uint32(v) for v in values]


@pytest.mark.parametrize("key, counter, expected", KNOWN_ANSWERS)
def test_threefry2x32_known_answers(key, counter, expected):
    eager = prng.threefry2x32(*_u32(*key), *_u32(*counter))
    compiled = tracejit.jit(prng.threefry2x32)(*_u32(*key), *_u32(*counter))
    for out in (eager, compiled):
        assert [int(o) for o in out] == list(expected)


def test_threefry2x32_broadcasts_vectorized_and_compiled_alike():
    rng = np.random.default_rng(0)
    key1, key2 = rng.integers(0, 2**32, (2, 3, 1), dtype=np.uint32)
    x1, x2 = rng.integers(0, 2**32, (2, 4), dtype=np.uint32)
    eager = prng.threefry2x32(key1, key2, x1, x2)
    compiled = tracejit.jit(prng.threefry2x32)(key1, key2, x1, x2)
    assert eager[0].shape == (3, 4)
    for e, c in zip(eager, compiled, strict=True):
        np.testing.assert_array_equal(e, c)
    # Each element is the scalar cipher of its operands.
    scalar = prng.threefry2x32(key1[2, 0], key2[2, 0], x1[3], x2[3])
    assert (int(eager[0][2, 3]), int(eager[1][2, 3])) == tuple(int(s) for s in scalar)


@pytest.mark.parametrize("in_axes", [(0, 0, 0, 0), (None, None, 0, 0), (0, None, None, 1)])
def test_threefry2x32_vmap_is_a_loop(in_axes):
    rng = np.random.default_rng(1)
    args = [rng.integers(0, 2**32, (3, 3), dtype=np.uint32) for _ in range(4)]
    args = [a if axis is not None else a[0] for a, axis in zip(args, in_axes, strict=True)]
    batched = tracejit.vmap(prng.threefry2x32, in_axes=in_axes)(*args)
    for i in range(3):
        member = [
            a if ax is None else np.take(a, i, ax) for a, ax in zip(args, in_axes, strict=True)
        ]
        for b, m in zip(batched, prng.threefry2x32(*member), strict=True):
            np.testing.assert_array_equal(b[i], m)


def test_threefry2x32_rejects_other_dtypes():
    with pytest.raises(TypeError, match="threefry2x32 requires uint32 arguments"):
        prng.threefry2x32(np.int32(1), np.uint32(1), np.uint32(1), np.uint32(1))


def test_samplers_have_zero_tangents():
    key = random.PRNGKey(0)
    grad = tracejit.grad(lambda x: (random.normal(key, (3,)) * x).sum())(2.0)
    np.testing.assert_allclose(grad, np.asarray(random.normal(key, (3,))).sum(), rtol=1e-6)


JAXPRS = {
    "split": (
        lambda k: random.split(k),
        """{ lambda ; a:u32[2]. let
    b:key<fry>[] = random_wrap[impl=fry] a
    c:key<fry>[2] = random_split[shape=(2,)] b
    d:u32[2,2] = random_unwrap c
  in (d,) }""",
    ),
    "fold_in": (
        lambda k: random.fold_in(k, 3),
        """{ lambda ; a:u32[2]. let
    b:key<fry>[] = random_wrap[impl=fry] a
    c:key<fry>[] = random_fold_in b 3:u32[]
    d:u32[2] = random_unwrap c
  in (d,) }""",
    ),
    "bits": (
        lambda k: random.bits(k, (3,)),
        """{ lambda ; a:u32[2]. let
    b:key<fry>[] = random_wrap[impl=fry] a
    c:u32[3] = random_bits[bit_width=32 shape=(3,)] b
  in (c,) }""",
    ),
}


JAXPRS["clone"] = (
    random.clone,
    "{ lambda ; a:u32[2]. let b:u32[2] = random_clone a in (b,) }",
)


@pytest.mark.parametrize("name", JAXPRS)
def test_jaxprs_print_as_jax(name):
    fun, expected = JAXPRS[name]
    assert str(tracejit.make_jaxpr(fun)(random.PRNGKey(0))) == expected


def test_prng_key_jaxpr_prints_as_jax():
    expected = """{ lambda ; a:i32[]. let
    b:key<fry>[] = random_seed[impl=fry] a
    c:u32[2] = random_unwrap b
  in (c,) }"""
    assert str(tracejit.make_jaxpr(random.PRNGKey)(np.int32(0))) == expected


def test_key_dtype_prints_key_fry():
    assert dtypes.short_dtype_name(dtypes.key_fry) == "key<fry>"


def test_gamma_vmap_over_shapes_is_a_loop():
    keys = random.split(random.PRNGKey(3), 3)
    a = np.array([[0.5, 2.0], [1.0, 4.0], [3.0, 0.2]], np.float32)
    batched = tracejit.vmap(random.gamma)(keys, a)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], random.gamma(keys[i], a[i]))
    shared_key = tracejit.vmap(random.gamma, in_axes=(None, 0))(keys[0], a)
    for i in range(3):
        np.testing.assert_array_equal(shared_key[i], random.gamma(keys[0], a[i]))


def test_clone_is_the_same_key():
    key = random.PRNGKey(5)
    for clone in (random.clone, tracejit.jit(random.clone)):
        np.testing.assert_array_equal(clone(key), key)
    np.testing.assert_array_equal(
        tracejit.vmap(random.clone)(random.split(key, 3)), random.split(key, 3)
    )


# Each PRNG primitive on a few operand shapes: eager = staged, type-checked and replayed =
# compiled, bit for bit (the ops are exact on bits).
SPECS = {
    "random_seed": (random.PRNGKey, [np.int32(7)]),
    "random_seed_negative": (random.PRNGKey, [np.int32(-3)]),
    "random_split": (lambda k: random.split(k, (2, 3)), [np.array([1, 2], np.uint32)]),
    "random_fold_in": (lambda k: random.fold_in(k, 9), [np.array([3, 4], np.uint32)]),
    "random_bits_8": (lambda k: random.bits(k, (5,), np.uint8), [np.array([5, 6], np.uint32)]),
    "random_bits_16": (lambda k: random.bits(k, (2, 3), np.uint16), [np.array([5, 6], np.uint32)]),
    "random_bits_32": (lambda k: random.bits(k, (4,)), [np.array([0, 7], np.uint32)]),
    "random_clone": (random.clone, [np.array([8, 9], np.uint32)]),
    "random_gamma": (
        lambda k: random.gamma(k, np.array([0.3, 2.0, 7.5], np.float32)),
        [np.array([1, 1], np.uint32)],
    ),
    "threefry2x32": (
        lambda a, b: prng.threefry2x32(a, b, a * 3, b + 1),
        [np.arange(4, dtype=np.uint32), np.uint32(5)],
    ),
}


@pytest.mark.parametrize("name", SPECS)
def test_primitive_eager_staged_and_compiled_agree(name):
    fun, args = SPECS[name]
    eager = check_traced_matches_eager(fun, *args, rtol=0, atol=0)
    compiled = tracejit.jit(fun)(*args)
    for e, c in zip(
        tracejit.tree_util.tree_leaves(eager), tracejit.tree_util.tree_leaves(compiled), strict=True
    ):
        np.testing.assert_array_equal(e, c)
