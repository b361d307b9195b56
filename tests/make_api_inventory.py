"""Record JAX 0.10.2's public API into tests/data/jax_api_0_10_2.json.

Run by hand, with real JAX in a scratch virtualenv (the package and the test suite never import
jax):

    python -m venv /tmp/jaxref && /tmp/jaxref/bin/pip install jax==0.10.2 jaxlib==0.10.2
    /tmp/jaxref/bin/python tools/jax_reference.py tests/make_api_inventory.py

For each public module it writes every public name with its kind and, where Python can inspect
it, its signature as a list of [name, kind, default] (default is the repr of the default value,
or null where there is none). `tests/test_api_surface.py` checks tracejit against this file.
"""

import importlib
import inspect
import json
import pathlib
import types

import numpy as np

MODULES = [
    "jax",
    "jax.numpy",
    "jax.numpy.linalg",
    "jax.numpy.fft",
    "jax.lax",
    "jax.random",
    "jax.nn",
    "jax.nn.initializers",
    "jax.scipy.special",
    "jax.scipy.stats",
    *(
        f"jax.scipy.stats.{d}"
        for d in [
            "bernoulli",
            "beta",
            "betabinom",
            "binom",
            "cauchy",
            "chi2",
            "dirichlet",
            "expon",
            "gamma",
            "gennorm",
            "geom",
            "gumbel_l",
            "gumbel_r",
            "laplace",
            "logistic",
            "multinomial",
            "multivariate_normal",
            "nbinom",
            "norm",
            "pareto",
            "poisson",
            "t",
            "truncnorm",
            "uniform",
            "vonmises",
            "wrapcauchy",
        ]
    ),
    "jax.scipy.linalg",
    "jax.scipy.signal",
    "jax.scipy.integrate",
    "jax.scipy.optimize",
    "jax.scipy.ndimage",
    "jax.tree_util",
    "jax.tree",
    "jax.dtypes",
    "jax.errors",
    "jax.debug",
    "jax.sharding",
    "jax.experimental",
    "jax.example_libraries.stax",
    "jax.example_libraries.optimizers",
]
NAMES_ONLY = {"jax.experimental"}
OUT = pathlib.Path(__file__).parent / "data" / "jax_api_0_10_2.json"


def kind_of(value, ufunc: type):
    if isinstance(value, types.ModuleType):
        return "module"
    if isinstance(value, ufunc):
        return "ufunc"
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "function"
    return "constant"


def signature_of(value, ufunc: type):
    target = value.__call__ if isinstance(value, ufunc) else value
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    return [
        [
            p.name,
            p.kind.name,
            None if p.default is inspect.Parameter.empty else repr(p.default),
        ]
        for p in sig.parameters.values()
    ]


def describe(module_name, ufunc: type):
    """Every public name of the module; `ufunc`: `jax.numpy.ufunc`, whose instances are a
    kind of their own."""
    module = importlib.import_module(module_name)
    names = {}
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        entry = {"kind": kind_of(value, ufunc)}
        if module_name not in NAMES_ONLY and entry["kind"] in ("function", "ufunc", "class"):
            entry["signature"] = signature_of(value, ufunc)
        if entry["kind"] == "constant" and isinstance(value, (int, float, bool, type(None))):
            entry["value"] = repr(value)
        names[name] = entry
    return names


def to_json(inventory):
    """One name per line, so that a new JAX version shows as a readable diff."""
    lines = ["{", f' "jax_version": {json.dumps(inventory["jax_version"])},']
    lines.append(f' "numpy_version": {json.dumps(inventory["numpy_version"])},')
    lines.append(' "modules": {')
    modules = inventory["modules"]
    for i, (module, names) in enumerate(modules.items()):
        lines.append(f"  {json.dumps(module)}: {{")
        for j, (name, entry) in enumerate(names.items()):
            comma = "," if j < len(names) - 1 else ""
            lines.append(f"   {json.dumps(name)}: {json.dumps(entry, sort_keys=True)}{comma}")
        lines.append("  }" + ("," if i < len(modules) - 1 else ""))
    lines += [" }", "}", ""]
    return "\n".join(lines)


def main(jax):

    inventory = {
        "jax_version": jax.__version__,
        "numpy_version": np.__version__,
        "modules": {m: describe(m, jax.numpy.ufunc) for m in MODULES},
    }
    OUT.write_text(to_json(inventory))
    counts = {m: len(v) for m, v in inventory["modules"].items()}
    print(json.dumps(counts, indent=1))
