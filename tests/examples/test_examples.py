"""Every example in `examples/` runs in its fast mode (`--smoke`: a few steps, no plot files)
and its training makes progress; `--help` works."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"
SCRIPTS = sorted(p.stem for p in EXAMPLES.glob("*.py") if p.stem != "support")

pytest.importorskip("sklearn", reason="the examples' data set comes with scikit-learn")


def run(name: str, *argv: str):
    """The example's `main(argv)` result, run in this process (its module loaded from
    examples/, with examples/ on sys.path for `support`)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.main(list(argv))
    finally:
        sys.path.remove(str(EXAMPLES))


def improved(losses, fraction=0.2) -> bool:
    """The mean of the last fifth of the losses is below the mean of the first fifth."""
    k = max(1, int(len(losses) * fraction))
    return np.mean(losses[-k:]) < np.mean(losses[:k])


def test_each_example_is_tested():
    assert set(SCRIPTS) == {
        "digits_classifier", "digits_convnet", "dp_sgd", "newton_cg", "ode_fit",
        "pmap_training", "vae",
    }  # fmt: skip


def test_digits_classifier_learns():
    result = run("digits_classifier", "--smoke")
    assert improved(result["losses"])
    assert result["test_accuracy"] > 0.5
    assert not (EXAMPLES / "out").exists() or not any((EXAMPLES / "out").iterdir())


def test_digits_convnet_learns():
    result = run("digits_convnet", "--smoke")
    assert improved(result["losses"])


def test_dp_sgd_learns_with_clipped_noised_gradients():
    result = run("dp_sgd", "--smoke", "--steps", "40")
    assert result["private_accuracy"] > 0.3


def test_vae_elbo_improves():
    assert improved(run("vae", "--smoke")["losses"])


def test_ode_fit_loss_falls():
    result = run("ode_fit", "--smoke")
    assert result["losses"][-1] < result["losses"][0]


def test_newton_cg_objectives_agree_with_numpy():
    rows = run("newton_cg", "--smoke")
    assert all(abs(r["numpy_objective"] - r["jit_objective"]) <= 1e-4 * abs(r["numpy_objective"])
               for r in rows.values())  # fmt: skip


def test_pmap_training_matches_one_device():
    """Run as a script in its own process, which starts the runtime with 2 CPU devices."""
    env = {**os.environ, "TRACEJIT_NUM_CPU_DEVICES": "2"}
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "pmap_training.py"), "--smoke", "--devices", "2"],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    assert "data-parallel training on 2 devices" in out.stdout
    difference = float(out.stdout.split("largest loss difference")[1].split()[0])
    assert difference < 1e-5


@pytest.mark.parametrize("name", SCRIPTS)
def test_help(name):
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "--smoke" in out.stdout
