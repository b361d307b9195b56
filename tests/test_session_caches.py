"""The suite keeps its caches in a directory of its own (see conftest.py), never in the user's."""

import os
import tempfile
import uuid
from pathlib import Path

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import compile_cache, dispatch, runtime
from tracejit._src.runtime import header

HOME_CACHE = Path("~/.cache/tracejit").expanduser()


def listing(folder: Path) -> set:
    return set(os.listdir(folder)) if folder.exists() else set()


def test_caches_lie_in_the_suites_directory():
    suite = Path(os.environ["TRACEJIT_TEST_CACHE"])  # set by conftest.py
    assert suite.is_relative_to(tempfile.gettempdir())
    assert Path(compile_cache.cache_dir()).is_relative_to(suite)
    assert header.cache_dir().is_relative_to(suite)


@pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)
def test_compiling_writes_to_the_suites_cache_not_home():
    """Other processes (xdist workers, other runs) may write to either cache meanwhile, so this
    looks for the executable of a program only this test compiles: in the suite's cache, not in
    the home one."""
    executables = Path(compile_cache.cache_dir())
    before = listing(executables)
    scale = float(uuid.uuid4().int % (1 << 24))  # a program no run compiled before
    out = jax.jit(lambda x: jnp.sin(x) * scale)(jnp.ones(3))
    np.testing.assert_allclose(np.asarray(out), np.sin(1.0) * scale, rtol=1e-6)
    ours = (listing(executables) - before) - listing(HOME_CACHE / "executables")
    assert len(ours) >= 1
    for name in ours:
        (executables / name).unlink()
