"""Running code written for JAX on tracejit, unmodified: `install_as_jax()` and
`python -m tracejit.as_jax script.py ...`.

Libraries such as optax, chex and equinox say `import jax`; an import hook (a finder first on
`sys.meta_path`) answers that import, and every `jax.X.Y`, with a module that serves tracejit's
`tracejit.X.Y`. Each served module is a thin module of its own rather than tracejit's module
object, for two reasons: `jax.__version__` must be the JAX version whose API tracejit follows
(libraries pick their code paths by it) while `tracejit.__version__` stays tracejit's; and a
name that JAX has and tracejit lacks must say so (an `AttributeError` naming the JAX version
followed), not pass for a typo. A served module starts as a copy of its tracejit module's
namespace, so that `jnp.sum` is one dictionary lookup and a library that patches `jax.jit`
(chex's `fake_jit`) patches what every caller of `jax.jit` sees, as with JAX; submodules are
served lazily, as attributes of their parent.

A few private `jax._src` modules that libraries import at their top level are served as
stand-ins (`_PRIVATE`) holding only what tracejit can honour; `jaxlib` is a stand-in with a
version. Real JAX in the same process would mix two kinds of arrays and traces, so the hook
refuses to install after it was imported.
"""

import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import types
from typing import NamedTuple

import numpy as np

from tracejit._src import dtypes, errors

JAX_VERSION = "0.10.2"
JAX_VERSION_INFO = (0, 10, 2)


class ServedModule(types.ModuleType):
    """A `jax.*` module serving the tracejit module `_tracejit_name`."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        target = self.__dict__.get("_tracejit_name")
        if target is not None and _exists(f"{target}.{name}"):
            return importlib.import_module(f"{self.__name__}.{name}")
        missing = f"{target}.{name}" if target else f"{self.__name__}.{name}"
        raise AttributeError(
            f"module {self.__name__!r} has no attribute {name!r}: tracejit, serving as jax, "
            f"follows JAX {JAX_VERSION}'s API and has no {missing}"
        )


def _exists(module_name) -> bool:
    try:
        return importlib.util.find_spec(module_name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _copy_namespace(module, tracejit_module) -> None:
    for name, value in vars(tracejit_module).items():
        if name.startswith("__") or isinstance(value, types.ModuleType):
            continue  # submodules are served on first use (`ServedModule.__getattr__`)
        setattr(module, name, value)
    if hasattr(tracejit_module, "__all__"):
        module.__all__ = list(tracejit_module.__all__)
    module.__doc__ = tracejit_module.__doc__
    module.__file__ = tracejit_module.__file__  # (scripts locate data beside `jax.__file__`)


def _serve_jax(module) -> None:
    _copy_namespace(module, importlib.import_module("tracejit"))
    module._tracejit_name = "tracejit"
    module.__version__ = JAX_VERSION
    module.__version_info__ = JAX_VERSION_INFO


def _serve_version(module) -> None:
    module.__version__ = module._version = JAX_VERSION
    module.__version_info__ = JAX_VERSION_INFO


def _serve_traceback_util(module) -> None:
    module.register_exclusion = errors.register_exclusion
    module.include_filename = errors.is_user_file
    module.include_frame = _include_frame
    module.api_boundary = _api_boundary
    module._exclude_paths = errors._EXCLUDED_PREFIXES  # (flax adds and removes its own paths)


class PartialVal(NamedTuple):
    """JAX's value of partial evaluation: an abstract value and no constant (unknown), or no
    abstract value and the constant (known). flax names it in annotations at import time;
    tracejit's partial evaluation (`linearize`) works on jaxprs and has no use for it."""

    pv: object
    const: object

    @classmethod
    def unknown(cls, aval):
        return cls(aval, None)

    @classmethod
    def known(cls, const):
        return cls(None, const)


def _serve_partial_eval(module) -> None:
    module.PartialVal = PartialVal


def _serve_source_info_util(module) -> None:
    module.register_exclusion = errors.register_exclusion


def _api_boundary(fun, *, repro_api_name=None, repro_user_func=False):
    """JAX's marker of functions whose tracebacks it filters; tracejit filters none, so it
    returns `fun` itself."""
    return fun


def _include_frame(frame) -> bool:
    return errors.is_user_file(frame.f_code.co_filename)


def _serve_private_dtypes(module) -> None:
    _serve_tracejit_module("tracejit.dtypes")(module)
    module.ExtendedDType = dtypes.ExtendedDType
    module.DType = np.dtype


def _serve_nothing(module) -> None:
    """A private module a library imports at its top level but whose contents tracejit does
    not have: any name asked of it is an AttributeError naming the JAX version followed."""


def _serve_tracejit_module(tracejit_name):
    def serve(module):
        _copy_namespace(module, importlib.import_module(tracejit_name))
        module._tracejit_name = tracejit_name

    return serve


# Served modules that are not tracejit's public modules of the same path.
_PRIVATE = {
    "jax": _serve_jax,
    "jax.version": _serve_version,
    "jax._src": _serve_nothing,
    "jax._src.traceback_util": _serve_traceback_util,
    "jax._src.compiler": _serve_nothing,
    "jax._src.dispatch": _serve_nothing,
    "jax._src.dtypes": _serve_private_dtypes,
    "jax._src.core": _serve_tracejit_module("tracejit.core"),
    # flax imports these at its top level, for linen's `scan` only
    "jax.extend.linear_util": _serve_nothing,
    "jax.interpreters.partial_eval": _serve_partial_eval,
    "jax.extend.source_info_util": _serve_source_info_util,
    "jaxlib": _serve_version,
}


def _server_of(fullname):
    """How to build the served module `fullname`, or None if it is not served."""
    if fullname in _PRIVATE:
        return _PRIVATE[fullname]
    if not fullname.startswith("jax.") or fullname.startswith("jax._src."):
        return None
    tracejit_name = "tracejit" + fullname[len("jax") :]
    return _serve_tracejit_module(tracejit_name) if _exists(tracejit_name) else None


class JaxFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads the served `jax`, `jax.*` and `jaxlib` modules."""

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in ("jax", "jaxlib"):
            return None
        serve = _server_of(fullname)
        if serve is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: tracejit, serving as jax, follows JAX "
                f"{JAX_VERSION}'s API and has no such module",
                name=fullname,
            )
        spec = importlib.util.spec_from_loader(fullname, self, is_package=True)
        spec.loader_state = serve
        return spec

    def create_module(self, spec):
        module = ServedModule(spec.name)
        spec.loader_state(module)
        return module

    def exec_module(self, module):
        pass


def install_as_jax() -> None:
    """Serve `import jax` (and `jax.numpy`, `from jax import lax`, every `jax.X.Y`, `jaxlib`)
    from tracejit in this process, so that code written for JAX runs unmodified.

    Raises RuntimeError if the real `jax` is already imported: one process cannot mix JAX's
    arrays and traces with tracejit's."""
    if any(isinstance(finder, JaxFinder) for finder in sys.meta_path):
        return
    for name in ("jax", "jaxlib"):
        module = sys.modules.get(name)
        if module is not None and not isinstance(module, ServedModule):
            raise RuntimeError(
                f"install_as_jax: the real {name} is already imported (from "
                f"{getattr(module, '__file__', None)}); tracejit can serve `import jax` only "
                f"in a process that has not imported {name} yet"
            )
    sys.meta_path.insert(0, JaxFinder())


_USAGE = "usage: python -m tracejit.as_jax (script.py | -m module) [args ...]"


def main(argv) -> None:
    """Run a script (or `-m module`) with `jax` served by tracejit, as `python` would run it."""
    if not argv or (argv[0] == "-m" and len(argv) < 2):
        raise SystemExit(_USAGE)
    install_as_jax()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
