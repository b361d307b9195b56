"""Array editing, index tricks, `pad`, `einsum` and `where`/`nonzero` against what JAX 0.10.2
gives (`make_jax_reference_manipulation.py`): the same values, shapes, dtypes and weak types,
or an exception of the same class, for every case of its table."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import tracejit.numpy as jnp

_HERE = pathlib.Path(__file__).parent
_spec = importlib.util.spec_from_file_location(
    "manipulation_reference", _HERE / "make_jax_reference_manipulation.py"
)
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)
RECORDED = json.loads((_HERE / "data" / "jax_reference_manipulation.json").read_text())


def test_every_case_is_recorded():
    assert set(RECORDED) == set(reference.CASES)


def _assert_matches(got: dict, want: dict, name: str):
    assert got.keys() == want.keys(), (name, got, want)
    if "items" in want:
        assert got["sequence"] == want["sequence"], name
        assert len(got["items"]) == len(want["items"]), name
        for g, w in zip(got["items"], want["items"], strict=True):
            _assert_matches(g, w, name)
    elif "values" in want:
        assert (got["dtype"], got["weak_type"], got["shape"]) == (
            want["dtype"],
            want["weak_type"],
            want["shape"],
        ), name
        tol = 1e-6 if want["dtype"].startswith(("float", "complex", "bfloat")) else 0
        np.testing.assert_allclose(
            np.asarray(got["values"]), np.asarray(want["values"]), rtol=tol, atol=tol, err_msg=name
        )
    else:
        assert got == want, name


@pytest.mark.parametrize("name", sorted(reference.CASES))
def test_matches_jax(name):
    _assert_matches(reference.outcome(reference.CASES[name], jnp), RECORDED[name], name)
