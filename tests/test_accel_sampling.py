"""The C accelerator's eager samplers (`csrc/accel/sampling.c`) give what the Python path gives.

Each case draws with the fast path, then with it switched off (`fast_path.STATE[0] = None`,
what a build without the accelerator has), and compares bit for bit. Each case also checks that the C function took the arguments rather than
declining them, so that a fast path that silently fell back would fail here.
"""

import ml_dtypes
import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit import random
from tracejit._src.accel import accel
from tracejit._src.random import fast_path

pytestmark = pytest.mark.skipif(accel is None, reason="the C accelerator is not built here")


@pytest.fixture(params=[True, False], ids=["partitionable", "original"])
def partitionable(request):
    with tracejit.threefry_partitionable(request.param):
        yield request.param


def _both(sample, key):
    """`sample(key)` by the fast path and by the Python path, as NumPy arrays."""
    fast = sample(key)
    previous, fast_path.STATE[0] = fast_path.STATE[0], None
    try:
        slow = sample(key)
    finally:
        fast_path.STATE[0] = previous
    if tracejit.dtypes.issubdtype(fast.dtype, tracejit.dtypes.prng_key):
        assert tracejit.dtypes.issubdtype(slow.dtype, tracejit.dtypes.prng_key)
        fast, slow = random.key_data(fast), random.key_data(slow)
    return np.asarray(fast), np.asarray(slow)


def _keys():
    return [random.PRNGKey(0), random.PRNGKey(42), random.key(7), random.key(2**31 - 1)]


def _check_equal(sample):
    for key in _keys():
        fast, slow = _both(sample, key)
        assert fast.dtype == slow.dtype and fast.shape == slow.shape, (fast.dtype, slow.dtype)
        np.testing.assert_array_equal(
            fast.reshape(-1).view(np.uint8), slow.reshape(-1).view(np.uint8)
        )


def _taken(function, *args):
    key = random.PRNGKey(0)
    assert getattr(accel, function)(key._value, *args, fast_path.STATE[0]) is not None


SHAPES = [(), 0, (7,), (3, 5), (1001,), (2, 0, 3), (np.int64(4), np.uint8(3))]
FLOAT_DTYPES = [None, float, np.float32, "float32", jnp.float32, np.float16, jnp.bfloat16]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_uniform(partitionable, shape, dtype):
    _taken("uniform", shape, dtype, 0.0, 1.0)
    _check_equal(lambda key: random.uniform(key, shape, dtype))


@pytest.mark.parametrize("bounds", [(-2.5, 3.0), (0, 10), (0.3, 0.30001), (5.0, -1.0)])
def test_uniform_between_bounds(partitionable, bounds):
    _taken("uniform", (257,), None, *bounds)
    _check_equal(lambda key: random.uniform(key, (257,), minval=bounds[0], maxval=bounds[1]))


@pytest.mark.parametrize("dtype", [None, np.float64, np.float32], ids=str)
def test_uniform_x64(partitionable, enable_x64, dtype):
    _taken("uniform", (33,), dtype, -1.0, 4.0)
    _check_equal(lambda key: random.uniform(key, (33,), dtype, -1.0, 4.0))
    _check_equal(lambda key: random.uniform(key, (33,), dtype))


def test_normal_has_no_fast_path():
    """(its erfinv in C could not give XLA's values to the last bit: eager draws must equal
    jitted ones)"""
    assert not hasattr(accel, "normal")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [None, np.uint8, np.uint16, np.uint32, jnp.uint8])
def test_bits(partitionable, shape, dtype):
    _taken("bits", shape, dtype)
    _check_equal(lambda key: random.bits(key, shape, dtype))


@pytest.mark.parametrize("dtype", [None, np.uint64, np.uint8], ids=str)
def test_bits_x64(partitionable, enable_x64, dtype):
    _taken("bits", (9,), dtype)
    _check_equal(lambda key: random.bits(key, (9,), dtype))


RANDINT_CASES = [
    (0, 10, None),
    (-5, 5, np.int32),
    (0, 256, np.uint8),
    (-200, 200, np.int8),
    (-(2**15), 2**15, np.int16),
    (0, 2**31 - 1, np.int32),
    (-(2**31), 2**31 - 1, np.int32),
    (5, 3, np.int32),
    (0, 2**31 - 1, np.uint32),
    (3, 1000, np.uint16),
]


@pytest.mark.parametrize("minval, maxval, dtype", RANDINT_CASES)
def test_randint(partitionable, minval, maxval, dtype):
    _taken("randint", (301,), minval, maxval, dtype)
    _check_equal(lambda key: random.randint(key, (301,), minval, maxval, dtype))


@pytest.mark.parametrize(
    "minval, maxval, dtype",
    [(1, 2**32, np.uint32), (-(2**40), 2**40, None), (-3, 2**63 - 1, np.uint64), (0, 7, np.int8)],
)
def test_randint_x64(partitionable, enable_x64, minval, maxval, dtype):
    _taken("randint", (64,), minval, maxval, dtype)
    _check_equal(lambda key: random.randint(key, (64,), minval, maxval, dtype))


@pytest.mark.parametrize("p, shape", [(0.5, None), (0.3, (101,)), (0.0, (4,)), (1.0, (2, 3))])
def test_bernoulli(partitionable, p, shape):
    _taken("bernoulli", p, shape)
    _check_equal(lambda key: random.bernoulli(key, p, shape))


@pytest.mark.parametrize("num", [2, 3, 0, 1000, (2, 3)], ids=str)
def test_split(partitionable, num):
    _taken("split", num)
    _check_equal(lambda key: random.split(key, num))


@pytest.mark.parametrize("data", [0, 1, 12345, 2**32 - 1])
def test_fold_in(partitionable, data):
    _taken("fold_in", data)
    _check_equal(lambda key: random.fold_in(key, data))


def test_keys_come_back_in_the_form_given():
    raw, typed = random.PRNGKey(0), random.key(0)
    assert random.split(raw).dtype == np.uint32 and random.split(raw).shape == (2, 2)
    assert random.fold_in(raw, 3).dtype == np.uint32 and random.fold_in(raw, 3).shape == (2,)
    assert random.split(typed, (2, 3)).shape == (2, 3)
    assert tracejit.dtypes.issubdtype(random.split(typed).dtype, tracejit.dtypes.prng_key)
    assert tracejit.dtypes.issubdtype(random.fold_in(typed, 1).dtype, tracejit.dtypes.prng_key)
    assert random.uniform(raw, (3,)).weak_type is False


# Arguments the C functions decline: the Python path handles (or refuses) them.
DECLINED = [
    ("uniform", ((3,), None, np.float32(0), 1.0)),  # a NumPy scalar bound
    ("uniform", ((3,), None, np.zeros(3), 1.0)),  # an array bound
    ("uniform", ((3,), np.float16, -1.0, 1.0)),  # 16-bit floats off [0, 1)
    ("uniform", ((3,), np.int32, 0.0, 1.0)),  # not a float dtype
    ("uniform", ((3,), [], 0.0, 1.0)),  # an unhashable dtype
    ("uniform", ([3], None, 0.0, 1.0)),  # a list as the shape
    ("uniform", ((-1,), None, 0.0, 1.0)),  # a negative dimension
    ("uniform", ((2**16, 2**16), None, 0.0, 1.0)),  # 2**32 elements
    ("bits", ((3,), np.int32)),
    ("randint", ((3,), 0, 2**40, None)),  # beyond int32 with x64 off
    ("randint", ((3,), 0.5, 4, None)),
    ("bernoulli", (np.float32(0.5), None)),
    ("split", (-1,)),
    ("fold_in", (-1,)),
    ("fold_in", (2**32,)),
]


@pytest.mark.parametrize("function, args", DECLINED, ids=lambda x: str(x)[:40])
def test_declines_what_the_python_path_decides(function, args):
    key = random.PRNGKey(0)
    assert getattr(accel, function)(key._value, *args, fast_path.STATE[0]) is None


def test_declines_a_span_of_the_whole_dtype(enable_x64):
    # (0, 2**32) for uint32 spans 2**32 values, which 32-bit arithmetic cannot count
    args = ((3,), 0, 2**32, np.uint32, fast_path.STATE[0])
    assert accel.randint(random.PRNGKey(0)._value, *args) is None


def test_declines_narrow_integers_bounds_beyond_int32(enable_x64):
    # (the Python path converts them to int32, wrapping, before clipping them to int8)
    args = ((3,), 2**32 + 5, 2**33, np.int8, fast_path.STATE[0])
    assert accel.randint(random.PRNGKey(0)._value, *args) is None


def test_declines_keys_it_cannot_read():
    state = fast_path.STATE[0]
    for value in (np.zeros(3, np.uint32), np.zeros(2, np.int32), np.zeros((2, 2), np.uint32)):
        assert accel.split(value, 2, state) is None
    with tracejit.legacy_prng_key("error"):
        assert accel.split(random.PRNGKey(0)._value, 2, fast_path.STATE[0]) is None
        assert accel.split(random.key(0)._value, 2, fast_path.STATE[0]) is not None


def test_off_where_the_python_path_does_more():
    with tracejit.transfer_guard("disallow"):
        assert fast_path.STATE[0] is None
    with tracejit.disable_jit():
        assert fast_path.STATE[0] is None
    assert fast_path.STATE[0] is not None


def test_traced_keys_take_the_python_path():
    key = random.PRNGKey(0)
    jaxpr = tracejit.make_jaxpr(lambda: random.uniform(key, (3,)))()
    assert "random_bits" in str(jaxpr)  # staged, not a constant computed eagerly
    jitted = tracejit.jit(lambda k: random.uniform(k, (3,)))
    np.testing.assert_array_equal(jitted(key), random.uniform(key, (3,)))


def test_bfloat16_results_have_its_dtype():
    out = random.uniform(random.PRNGKey(0), (4,), jnp.bfloat16)
    assert out.dtype == ml_dtypes.bfloat16
