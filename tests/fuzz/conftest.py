"""Hypothesis profiles for the fuzz suite, chosen by `HYPOTHESIS_PROFILE`.

"ci" (the default) is derandomized and small, so that every run draws the same examples and
the suite adds well under a minute to the test run; "long" draws many more, fresh each run,
for local bug hunts (`HYPOTHESIS_PROFILE=long pytest tests/fuzz`).
"""

import os

import pytest
from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci", derandomize=True, max_examples=12, deadline=None, suppress_health_check=_QUIET
)
settings.register_profile(
    "long", max_examples=400, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(items):
    """The fuzzer asks for 64-bit dtypes, empty reductions (NumPy's nanmean warns from its
    caller's line), complex-to-real casts and NumPy's deprecated `row_stack` (as its
    reference) on purpose: those warnings are expected there."""
    for item in items:
        if "fuzz" in item.nodeid:
            item.add_marker(pytest.mark.filterwarnings("ignore:Explicitly requested dtype"))
            item.add_marker(pytest.mark.filterwarnings("ignore::RuntimeWarning:numpy"))
            item.add_marker(pytest.mark.filterwarnings("ignore:Mean of empty slice"))
            item.add_marker(pytest.mark.filterwarnings("ignore:Casting complex values"))
            item.add_marker(pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated"))
