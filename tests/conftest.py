"""Fixtures shared by every test module."""

import pytest

import tracejit


@pytest.fixture
def enable_x64():
    """Runs a test with 64-bit types enabled, restoring the previous setting afterwards."""
    previous = tracejit.config.read("jax_enable_x64")
    tracejit.config.update("jax_enable_x64", True)
    yield
    tracejit.config.update("jax_enable_x64", previous)
