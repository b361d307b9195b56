"""Every lowering test compiles with XLA: a silent fallback to NumPy (dispatch warns when a
primitive has no lowering rule) fails it, and no compiled program is reused between tests."""

import warnings

import pytest

from tracejit._src import dispatch, runtime


def pytest_collection_modifyitems(config, items):
    if not runtime.platform_available():
        skip = pytest.mark.skip(reason="no PJRT plugin on this platform")
        for item in items:
            if "tests/lowering/" in str(item.fspath):
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def compiled_by_xla(monkeypatch):
    monkeypatch.setattr(dispatch, "_backend", "pjrt")
    monkeypatch.setattr(dispatch, "_programs", {})
    monkeypatch.setattr(dispatch, "_warned", set())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
