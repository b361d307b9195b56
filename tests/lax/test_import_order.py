"""Each primitive family imports first: no module of `_src/lax` relies on another having been
imported before it (families import each other as modules, and none reads another's names while
that one may still be half-initialized)."""

import pathlib
import subprocess
import sys

import pytest

import tracejit

LAX = pathlib.Path(tracejit.__file__).parent / "_src" / "lax"
MODULES = sorted(p.stem for p in LAX.glob("*.py") if p.stem != "__init__")

# `import tracejit` would import every family first: a bare package object stands in for it.
IMPORT_FIRST = """
import importlib, sys, types
package = types.ModuleType("tracejit")
package.__path__ = [{path!r}]
sys.modules["tracejit"] = package
importlib.import_module("tracejit._src.lax.{module}")
"""


@pytest.mark.parametrize("module", MODULES)
def test_family_imports_first_in_a_fresh_process(module):
    code = IMPORT_FIRST.format(path=str(LAX.parent.parent), module=module)
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
