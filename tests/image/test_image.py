"""tracejit.image against JAX 0.10.2's results (recorded by make_jax_reference_image.py):
every resize method, antialiasing on and off, edge padding, batch and channel dimensions left
alone, integer inputs, scale_and_translate; eager and jitted; derivatives by finite
differences; vmap against a loop; JAX's errors."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest
from helpers import assert_close, check_vmap

import tracejit
import tracejit.numpy as jnp
from tracejit import image
from tracejit.test_util import check_grads

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location(
    "image_reference", HERE / "make_jax_reference_image.py"
)
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)  # the table of cases, without running it
CASES, arguments = _reference.CASES, _reference.arguments
DATA = HERE / "data"
REFERENCE = np.load(DATA / "image_reference.npz")
DTYPES = json.loads((DATA / "image_reference_dtypes.json").read_text())


@pytest.mark.parametrize("name", CASES)
def test_matches_jax(name):
    _, _, function, args = CASES[name]
    x, want = REFERENCE[f"{name}_in"], REFERENCE[f"{name}_out"]
    args = arguments(function, args)
    fun = getattr(image, function)
    out = fun(x, *args)
    assert out.dtype == np.dtype(DTYPES[name]) and out.shape == want.shape
    assert_close(out, want, 2e-6, atol=2e-5)
    jitted = tracejit.jit(lambda x: fun(x, *args))(x)
    assert_close(jitted, want, 2e-6, atol=2e-5)


def test_same_size_is_the_identity_and_nearest_picks_pixels():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(image.resize(x, (3, 4), "lanczos3"), x)
    np.testing.assert_array_equal(
        image.resize(x, (6, 2), "nearest"), x[[0, 0, 1, 1, 2, 2]][:, [1, 3]]
    )


def test_resize_method_enum_and_names():
    x = REFERENCE["linear_up_in"]
    by_enum = image.resize(x, (9, 11), image.ResizeMethod.LINEAR)
    np.testing.assert_array_equal(by_enum, image.resize(x, (9, 11), "bilinear"))
    assert image.ResizeMethod.from_string("tricubic") is image.ResizeMethod.CUBIC


def test_derivatives():
    x = REFERENCE["cubic_up_in"][:4, :3].astype(np.float64)
    check_grads(lambda x: image.resize(x, (6, 2), "cubic"), (x,), order=1)
    scale, shift = np.float64([1.3, 0.8]), np.float64([0.2, -0.4])
    check_grads(
        lambda s, t: image.scale_and_translate(x, (5, 4), (0, 1), s, t, "linear"),
        (scale, shift),
        order=1,
        atol=1e-3,
        rtol=1e-3,
    )


def test_vmap_over_images_matches_a_loop():
    xs = REFERENCE["batch_channels_in"][..., 0]
    check_vmap(lambda x: image.resize(x, (4, 7), "lanczos5"), (xs,), (0,), tol=2e-6, jit=True)


def test_errors_as_in_jax():
    x = jnp.ones((4, 4))
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        image.resize(x, (2, 2), "bogus")
    with pytest.raises(ValueError, match="shape must have length equal to the number of dim"):
        image.resize(x, (2, 2, 2), "linear")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently supported"):
        image.scale_and_translate(x, (2, 2), (0, 1), jnp.ones(2), jnp.zeros(2), "nearest")
