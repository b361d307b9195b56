"""`parse_index`: the one description of a NumPy index that basic and advanced indexing read."""

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src.numpy.index_parsing import ArrayIndex, ScalarIndex, SliceIndex, parse_index
from tracejit.errors import NonConcreteBooleanIndexError


def describe(index):
    """The items as tuples of their fields, arrays as lists."""
    out = []
    for it in index.items:
        if it is None:
            out.append(None)
        elif isinstance(it, SliceIndex):
            out.append(("slice", it.dim, it.start, it.stop, it.step, it.count))
        else:
            value = it.value if isinstance(it.value, int) else np.asarray(it.value).tolist()
            out.append((type(it).__name__, it.dim, value))
    return out


def test_ellipsis_and_padding_give_one_item_per_dimension():
    index = parse_index((3, 4, 5), (None, Ellipsis, np.int32(-1)))
    assert describe(index) == [
        None,
        ("slice", 0, 0, 3, 1, 3),
        ("slice", 1, 0, 4, 1, 4),
        ("ScalarIndex", 2, -1),
    ]
    assert not index.advanced and not index.has_traced_scalar
    assert describe(parse_index((3, 4), slice(None, None, -2))) == [
        ("slice", 0, 2, -1, -2, 2),
        ("slice", 1, 0, 4, 1, 4),
    ]


def test_integer_scalars_are_python_ints():
    for scalar in (2, np.int64(2), np.array(2), jnp.array(2)):
        assert describe(parse_index((3,), scalar)) == [("ScalarIndex", 0, 2)]


def test_arrays_and_masks_are_advanced():
    index = parse_index((3, 4, 5), ([0, 2], np.array([[True, False, True, False, True]] * 4)))
    assert describe(index) == [
        ("ArrayIndex", 0, [0, 2]),
        ("ArrayIndex", 1, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]),
        ("ArrayIndex", 2, [0, 2, 4, 0, 2, 4, 0, 2, 4, 0, 2, 4]),
    ]
    assert index.advanced
    assert describe(parse_index((3,), True)) == [
        ("ArrayIndex", None, [0]),
        ("slice", 0, 0, 3, 1, 3),
    ]
    assert describe(parse_index((3,), ([],))) == [("ArrayIndex", 0, [])]


def test_traced_scalars_stay_traced():
    def check(i):
        index = parse_index((3, 4), (i, 1))
        assert isinstance(index.items[0], ScalarIndex) and index.items[0].value is i
        assert index.has_traced_scalar and not index.advanced
        index = parse_index((3, 4), (i[None], 1))
        assert isinstance(index.items[0], ArrayIndex) and index.advanced
        return i

    jax.make_jaxpr(check)(1)


@pytest.mark.parametrize(
    ("idx", "error", "match"),
    [
        ([0, 1], TypeError, "non-tuple sequence"),
        ("a", TypeError, "JAX does not support string indexing"),
        (1.5, TypeError, "got indexer with type float64"),
        (np.array([0.5]), TypeError, "got indexer with type float64"),
        ({}, TypeError, "Unsupported index type dict"),
        ((Ellipsis, Ellipsis), IndexError, "a single ellipsis"),
        ((0, 0, 0), IndexError, "array is 2-dimensional, but 3 were indexed"),
        (np.ones((3, 3), bool), IndexError, "boolean index did not match shape"),
    ],
)
def test_errors(idx, error, match):
    with pytest.raises(error, match=match):
        parse_index((3, 4), idx)


def test_a_traced_mask_is_an_error():
    with pytest.raises(NonConcreteBooleanIndexError, match="must be concrete"):
        jax.make_jaxpr(lambda m: parse_index((3,), m))(np.ones(3, bool))


@pytest.mark.parametrize("index", [2**31, -(2**31) - 1, 2**40, 2**70])
def test_a_python_int_index_outside_int32_overflows_instead_of_clamping(index):
    x = jnp.arange(3)
    with pytest.raises(OverflowError, match=f"Python int {index} too large to convert to int32"):
        x[index]
    with pytest.raises(OverflowError):
        x.at[index].set(1)
    with pytest.raises(OverflowError):
        jax.jit(lambda x: x[index])(x)
    assert int(x[2**31 - 1]) == 2  # in range: clamped, as every gather index is
