"""Jaxpr printouts recorded from JAX 0.10.2, and the checks made of them.

A cases module (`*jaxpr_cases.py`) defines `jaxpr_cases(jax)`: case name -> (function,
arguments), written against either package. A `make_jax_reference_*jaxprs.py` script, run by
`tools/jax_reference.py` in JAX's virtualenv, records JAX's printout of each case with
`record`; the tests, which never
import JAX, compare tracejit's printouts with them (`jaxpr_params`) and check that each call
gives eagerly what it gives under `jit` (`assert_eager_equals_jit`). This module imports
neither package nor pytest at its top, so that both virtualenvs can load it.
"""

import importlib.util
import json
from pathlib import Path


def load_cases(path: Path, jax) -> dict:
    """The cases of the cases module at `path`, written against the package `jax`."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.jaxpr_cases(jax)


def record(jax, cases_path: Path, data_path: Path) -> None:
    """Writes the printout of every case by `jax` (real JAX 0.10.2, given by
    tools/jax_reference.py) to `data_path`."""
    printed = {
        case: str(jax.make_jaxpr(fun)(*args))
        for case, (fun, args) in load_cases(cases_path, jax).items()
    }
    data_path.write_text(json.dumps(printed, indent=1, sort_keys=True) + "\n")


def read_recorded(data_path: Path) -> dict:
    return json.loads(data_path.read_text())


def jaxpr_params(cases: dict, recorded: dict, different=frozenset()) -> list:
    """pytest parameters (function, arguments, JAX's printout), one per case; those in
    `different` (not yet printed as JAX prints them) are strict xfails."""
    import pytest

    xfail = pytest.mark.xfail(strict=True, reason="not yet JAX's jaxpr")
    return [
        pytest.param(fun, args, recorded[case], id=case, marks=[xfail] if case in different else [])
        for case, (fun, args) in cases.items()
    ]


def assert_eager_equals_jit(jax, fun, args, *, rtol: float, atol: float) -> None:
    import numpy as np

    eager, staged = fun(*args), jax.jit(fun)(*args)
    for e, s in zip(jax.tree.leaves(eager), jax.tree.leaves(staged), strict=True):
        assert e.dtype == s.dtype and e.shape == s.shape
        np.testing.assert_allclose(np.asarray(e), np.asarray(s), rtol=rtol, atol=atol)
