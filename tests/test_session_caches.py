"""The suite keeps its caches in a temporary directory (see conftest.py), never in the user's."""

import os
from pathlib import Path

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import dispatch, runtime
from tracejit._src.runtime import header

HOME_CACHE = Path("~/.cache/tracejit").expanduser()


def listing(folder: Path) -> set:
    return set(os.listdir(folder)) if folder.exists() else set()


def test_caches_lie_under_the_session_directory():
    session = Path(os.environ["TRACEJIT_TEST_SESSION_CACHE"])  # made by conftest.py
    assert Path(dispatch.cache_dir()).is_relative_to(session)
    assert header.cache_dir().is_relative_to(session)


@pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)
def test_compiling_writes_to_the_session_cache_not_home():
    """Other processes on the machine may write to the home cache meanwhile, so this looks for
    the executable the test compiles, by name."""
    session_executables = Path(dispatch.cache_dir())
    before = listing(session_executables)
    scale = float(np.random.default_rng().integers(1 << 20))  # a program no test compiled yet
    out = jax.jit(lambda x: jnp.sin(x) * scale)(jnp.ones(3))
    np.testing.assert_allclose(np.asarray(out), np.sin(1.0) * scale, rtol=1e-6)
    written = listing(session_executables) - before
    assert written
    assert not written & listing(HOME_CACHE / "executables")
