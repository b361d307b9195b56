"""Convolutions against values recorded from JAX 0.10.2 (`make_jax_reference_convolution.py`):
the gradients of `conv_general_dilated` in both operands over a grid of dimension numbers,
strides, paddings, dilations and group counts; `conv_transpose`'s paddings; the feature order
of `conv_general_dilated_patches` and `conv_general_dilated_local`. Eagerly and under `jit`."""

import importlib.util
import pathlib

import numpy as np
import pytest
from helpers import assert_close

import tracejit

_spec = importlib.util.spec_from_file_location(
    "convolution_reference", pathlib.Path(__file__).parent / "make_jax_reference_convolution.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
DATA = dict(np.load(reference.DATA))


@pytest.fixture(autouse=True)
def _x64():
    with tracejit.enable_x64(True):
        yield


# Compiled: every case but most of conv_transpose's grid of 1-D paddings (its pads are computed
# before binding, the same eagerly and compiled).
COMPILED = [
    n for i, n in enumerate(reference.CASES) if not n.startswith("transpose_") or i % 12 == 0
]
CASES = [(n, False) for n in reference.CASES] + [(n, True) for n in COMPILED]


@pytest.mark.parametrize(
    ("name", "compiled"), CASES, ids=[f"{n}-{'jit' if c else 'eager'}" for n, c in CASES]
)
def test_matches_jax(name, compiled):
    fun, args = reference.CASES[name]
    run = (
        (lambda *a: fun(tracejit, *a))
        if not compiled
        else tracejit.jit(lambda *a: fun(tracejit, *a))
    )
    results = run(*args)
    for i, got in enumerate(results):
        assert_close(got, DATA[f"{name}/{i}"], 1e-10, err_msg=f"{name} result {i}")
