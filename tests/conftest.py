"""Fixtures shared by every test module, and the suite's own caches.

The suite never writes to the user's home: before tracejit is imported, the compile cache
(`TRACEJIT_CACHE_DIR`) and the PJRT header cache (`XDG_CACHE_HOME`) are pointed at a directory
of the system's temporary area. It is kept between runs, because compiling is most of the
lowering tests' time (about 70 s of the suite cold, 2 s warm); both caches are keyed by content
and written atomically, so a stale entry cannot be read and concurrent runs can share it. A
directory that this user does not own alone is not trusted (executables are loaded from it):
the session then gets a fresh one, removed at exit. pytest-xdist's workers, and subprocesses
started by tests, inherit the environment of the controller, which imports this module first.
"""

import atexit
import os
import shutil
import stat
import tempfile

SUITE_CACHE = "TRACEJIT_TEST_CACHE"


def _private_directory() -> str:
    path = os.path.join(tempfile.gettempdir(), f"tracejit-tests-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.lstat(path)
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077:
        return path
    path = tempfile.mkdtemp(prefix="tracejit-tests-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


if SUITE_CACHE not in os.environ:
    os.environ[SUITE_CACHE] = _private_directory()
os.environ["TRACEJIT_CACHE_DIR"] = os.path.join(os.environ[SUITE_CACHE], "compiled")
os.environ["XDG_CACHE_HOME"] = os.path.join(os.environ[SUITE_CACHE], "xdg")

import pytest

import tracejit


@pytest.fixture
def enable_x64():
    """Runs a test with 64-bit types enabled, restoring the previous setting afterwards."""
    previous = tracejit.config.read("jax_enable_x64")
    tracejit.config.update("jax_enable_x64", True)
    yield
    tracejit.config.update("jax_enable_x64", previous)
