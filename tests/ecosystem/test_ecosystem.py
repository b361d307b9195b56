"""optax, chex and equinox run unmodified on tracejit, through `python -m tracejit.as_jax`,
and print what they print on real JAX 0.10.2 (recorded by `make_jax_reference_ecosystem.py`).

Each program in `programs/` runs once, in a subprocess (the import hook serves `jax` to the
whole process); every case it prints is a test here. The libraries are installed by `.ci/run`
(pinned, `--no-deps`); where they are not, these tests are skipped.
"""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tracejit

HERE = pathlib.Path(__file__).resolve().parent
LIBRARIES = ("optax", "chex", "equinox")
MISSING = [name for name in LIBRARIES if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"JAX-ecosystem libraries not installed: {', '.join(MISSING)}"
)


def _reference(program):
    return json.loads((HERE / "data" / f"{program}.json").read_text())


def _cases(program):
    return [pytest.param(name, id=name) for name in _reference(program)]


_outputs = {}


def run_program(program) -> dict:
    """What `programs/<program>.py` prints, run on tracejit as jax (once per test session)."""
    if program not in _outputs:
        src = pathlib.Path(tracejit.__file__).resolve().parent.parent
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
        done = subprocess.run(
            [sys.executable, "-m", "tracejit.as_jax", str(HERE / "programs" / f"{program}.py")],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        _outputs[program] = json.loads(done.stdout)
    return _outputs[program]


def assert_same(ours, expected, rtol, atol):
    if isinstance(expected, dict) and "error" in expected:
        assert ours == expected
        return
    assert not (isinstance(ours, dict) and "error" in ours), ours["error"]
    flat_ours, flat_expected = _numbers(ours), _numbers(expected)
    assert len(flat_ours) == len(flat_expected)
    np.testing.assert_allclose(flat_ours, flat_expected, rtol=rtol, atol=atol)


def _numbers(value) -> list:
    if isinstance(value, dict):
        return [x for key in sorted(value) for x in _numbers(value[key])]
    if isinstance(value, list):
        return [x for item in value for x in _numbers(item)]
    return [value]


@pytest.mark.parametrize("name", _cases("optax_optimizers"))
def test_optax_optimizer_20_jitted_steps_match_jax(name):
    """Loss at each step and the final parameters, to 1e-6."""
    ours = run_program("optax_optimizers")[name]
    assert_same(ours, _reference("optax_optimizers")[name], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", _cases("equinox_models"))
def test_equinox_model_matches_jax(name):
    """Outputs of models, gradients of an ensemble, and 50 training steps' losses, to 1e-5."""
    ours = run_program("equinox_models")[name]
    assert_same(ours, _reference("equinox_models")[name], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", _cases("chex_checks"))
def test_chex_outcome_matches_jax(name):
    """Which asserts pass and which raise (and what), dataclasses, variants with(out) jit."""
    assert run_program("chex_checks")[name] == _reference("chex_checks")[name]
