"""`jnp.pad` in every mode against NumPy, eagerly, under jit and replayed; its derivatives
against finite differences and `vmap` against a loop. (Dtypes, weak types and errors are
checked against JAX in `test_jax_reference_manipulation.py`.)"""

import numpy as np
import pytest
from helpers import check_eager_jit_numpy, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit.errors import ConcretizationTypeError
from tracejit.test_util import check_grads

X = np.array([[1.5, -2.0, 3.0, 0.25], [4.0, 5.5, -6.0, 7.0], [0.5, 9.0, 2.0, -1.0]], np.float32)
I = np.array([3, 1, 4, 1, 5, 9, 2], np.int32)
WIDTHS = [0, 2, (1, 3), ((0, 5), (4, 1)), (2, 9), 9]

# mode -> the keyword arguments tried with it (besides none)
MODES = {
    "constant": [{"constant_values": -7}, {"constant_values": ((1, 2), (3, 4))}],
    "edge": [],
    "wrap": [],
    "reflect": [{"reflect_type": "odd"}],
    "symmetric": [{"reflect_type": "odd"}],
    "linear_ramp": [{"end_values": (5, -3)}],
    "maximum": [{"stat_length": 2}],
    "minimum": [{"stat_length": ((1, 2), (3, 1))}],
    "mean": [{"stat_length": 3}],
    "median": [{"stat_length": (1, 2)}],
}
CASES = [(mode, kwargs) for mode, options in MODES.items() for kwargs in [{}, *options]]
# the options that fit a 1-D array (not one pair per axis of a matrix)
CASES_1D = [
    (mode, kwargs) for mode, kwargs in CASES if all(np.ndim(v) < 2 for v in kwargs.values())
]


@pytest.mark.parametrize("widths", WIDTHS, ids=str)
@pytest.mark.parametrize(("mode", "kwargs"), CASES, ids=str)
def test_float_against_numpy(mode, kwargs, widths):
    want = np.pad(X, widths, mode, **kwargs)
    check_eager_jit_numpy(lambda x: jnp.pad(x, widths, mode, **kwargs), (X,), want, tol=1e-5)


@pytest.mark.parametrize("widths", [3, (2, 9)], ids=str)
@pytest.mark.parametrize(("mode", "kwargs"), CASES_1D, ids=str)
def test_int_against_numpy(mode, kwargs, widths):
    """Integer statistics are rounded to the nearest integer and ramps floored, as JAX does
    (JAX's exact values are in `test_jax_reference_manipulation.py`): within 1 of NumPy's
    float result."""
    got = np.asarray(tracejit.jit(lambda x: jnp.pad(x, widths, mode, **kwargs))(I))
    want = np.pad(I.astype(np.float64), widths, mode, **kwargs)
    assert got.dtype == np.int32
    if mode in ("mean", "median", "linear_ramp"):
        np.testing.assert_allclose(got, want, atol=1 if mode == "linear_ramp" else 0.5 + 1e-9)
    else:
        np.testing.assert_array_equal(got, want)


def test_empty_mode_pads_with_zeros():
    """JAX's `empty` is `zeros`: the padding is 0 (NumPy leaves it undefined)."""
    got = jnp.pad(X, (1, 2), "empty")
    np.testing.assert_array_equal(got, np.pad(X, (1, 2)))


def test_callable_mode_follows_numpy():
    def fill(vector, pad_width, axis, kwargs):
        before, after = pad_width
        vector = vector.at[:before].set(kwargs["low"] + axis)
        return vector.at[vector.shape[0] - after :].set(kwargs["high"])

    def np_fill(vector, pad_width, axis, kwargs):
        before, after = pad_width
        vector[:before] = kwargs["low"] + axis
        vector[vector.shape[0] - after :] = kwargs["high"]

    want = np.pad(X, ((1, 2), (3, 0)), np_fill, low=-1.0, high=8.0)
    check_eager_jit_numpy(
        lambda x: jnp.pad(x, ((1, 2), (3, 0)), fill, low=-1.0, high=8.0), (X,), want
    )


def test_traced_constant_values():
    got = tracejit.jit(lambda x, c: jnp.pad(x, 1, constant_values=c))(X, np.float32(2.5))
    np.testing.assert_array_equal(got, np.pad(X, 1, constant_values=2.5))


def test_traced_widths_raise_concretization_error():
    with pytest.raises(ConcretizationTypeError, match="pad_width"):
        tracejit.jit(lambda x, w: jnp.pad(x, w))(X, 2)


DIFFERENTIABLE = [c for c in CASES if c[0] != "median"] + [("median", {}), ("empty", {})]


@pytest.mark.parametrize(("mode", "kwargs"), DIFFERENTIABLE, ids=str)
def test_grads(mode, kwargs):
    # distinct values, so that maximum/minimum/median have a unique winner
    x = np.array([[0.3, -1.2, 2.1], [1.7, 0.9, -0.4]])
    check_grads(lambda x: jnp.pad(x, (2, 4), mode, **kwargs), (x,), order=2)


def test_grad_of_constant_values():
    check_grads(lambda x, c: jnp.pad(x, 1, constant_values=c), (X[:2, :2], 1.5), order=1)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap", "mean", "linear_ramp"])
def test_vmap_matches_loop(mode):
    check_vmap(lambda x: jnp.pad(x, (2, 3), mode), (X,), in_axes=(0,), jit=True)
    check_vmap(lambda x: jnp.pad(x, (2, 3), mode), (X,), in_axes=(1,))
