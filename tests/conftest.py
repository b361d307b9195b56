"""Fixtures shared by every test module, and the session's private caches.

The suite never writes to the user's home: before tracejit is imported, the compile cache
(`TRACEJIT_CACHE_DIR`) and the PJRT header cache (`XDG_CACHE_HOME`) are pointed at one temporary
directory. pytest-xdist's workers inherit the environment of the controller, which imports this
module first, so all processes of a session share that directory (both caches write atomically);
subprocesses started by tests inherit it too. The process that created it removes it at exit.
"""

import atexit
import os
import shutil
import tempfile

SESSION_CACHE = "TRACEJIT_TEST_SESSION_CACHE"

if SESSION_CACHE not in os.environ:
    os.environ[SESSION_CACHE] = tempfile.mkdtemp(prefix="tracejit-tests-")
    atexit.register(shutil.rmtree, os.environ[SESSION_CACHE], ignore_errors=True)
os.environ["TRACEJIT_CACHE_DIR"] = os.path.join(os.environ[SESSION_CACHE], "compiled")
os.environ["XDG_CACHE_HOME"] = os.path.join(os.environ[SESSION_CACHE], "xdg")

import pytest

import tracejit


@pytest.fixture
def enable_x64():
    """Runs a test with 64-bit types enabled, restoring the previous setting afterwards."""
    previous = tracejit.config.read("jax_enable_x64")
    tracejit.config.update("jax_enable_x64", True)
    yield
    tracejit.config.update("jax_enable_x64", previous)
