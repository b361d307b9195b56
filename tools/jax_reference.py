"""Runs a recording script against real JAX 0.10.2. The package and the tests never import
JAX; the scripts under `tools/` run it by hand. A recording script (`make_*.py` beside the
tests that read what it writes, and that load its cases) defines `main(jax)` and gets JAX from
here, so that nothing the tests load imports it. Run by hand, with
an interpreter that has `jax==0.10.2` installed (a scratch virtualenv), from any directory:

    python tools/jax_reference.py tests/random/make_reference.py

A script that needs JAX submodules not imported by `import jax` lists them in `JAX_MODULES`.
"""

import importlib
import importlib.util
import pathlib
import sys


def load_script(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))  # (its neighbours: cases modules, shared helpers)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    script = load_script(pathlib.Path(sys.argv[1]).resolve())
    import jax

    if jax.__version__ != "0.10.2" or "tracejit" in jax.__file__:
        sys.exit(f"needs real JAX 0.10.2, found {jax.__version__} at {jax.__file__}")
    for name in getattr(script, "JAX_MODULES", ()):
        importlib.import_module(name)
    script.main(jax)


if __name__ == "__main__":
    main()
