"""The optional C accelerator: `accel` is the compiled module, or None where it is absent.

`tracejit._src._accel` (built from `csrc/accel/` by setup.py wherever pip finds a C compiler)
holds C versions of a few hot paths whose cost in Python is per call or per small operation,
not per element. Each has a Python twin that gives the same results, and callers choose with
`if accel is not None`, so tracejit works, identically but slower, without it.
`TRACEJIT_NO_ACCEL=1` makes tracejit ignore a built accelerator (to compare the two, or to
rule it out).
"""

from __future__ import annotations

import os

try:
    from tracejit._src import _accel
except ImportError:  # not built here: no C compiler at install time
    _accel = None

accel = _accel if os.environ.get("TRACEJIT_NO_ACCEL", "") in ("", "0") else None
