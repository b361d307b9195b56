"""JAX 0.10.2's public API against tracejit's: the comparison `test_api_surface.py` asserts, and
the writer of `docs/api.md` (`python tests/api_surface.py` rewrites it).

The inventory (`data/jax_api_0_10_2.json`, recorded from real JAX by `make_api_inventory.py`)
lists every public name of the modules tracejit follows. A name must exist in the tracejit module
of the same path (`jax.scipy.stats.norm` -> `tracejit.scipy.stats.norm`) with a compatible
signature, unless `data/api_exclusions.json` excludes it with a reason: the open issue that will
build it, or why it is not planned. An exclusion `"jit(in_shardings)"` leaves out one parameter
of a name that is otherwise there.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pathlib
import re
from collections import Counter

DATA = pathlib.Path(__file__).parent / "data"
INVENTORY_PATH = DATA / "jax_api_0_10_2.json"
EXCLUSIONS_PATH = DATA / "api_exclusions.json"
API_DOC_PATH = pathlib.Path(__file__).parent.parent / "docs" / "api.md"

# A reason is "issue N: what" for a name an open issue builds, or "not planned: why".
REASON = re.compile(r"^(issue \d+|not planned): \S")

# Defaults compared by value: literals whose repr is the same in both libraries. Other defaults
# (dtypes, functions, sentinels) are JAX's own objects; for those a default must merely exist.
_LITERAL = re.compile(r"^(None|True|False|-?[\d.e+-]+|inf|'[^']*'|\(\)|\((-?\d+, )*-?\d*\))$")


def inventory() -> dict:
    return json.loads(INVENTORY_PATH.read_text())["modules"]


def exclusions() -> dict:
    return json.loads(EXCLUSIONS_PATH.read_text())


def tracejit_module_name(jax_module: str) -> str:
    return "tracejit" + jax_module[len("jax") :]


def tracejit_module(jax_module: str):
    """The tracejit module of the same path, or None if there is none yet."""
    try:
        return importlib.import_module(tracejit_module_name(jax_module))
    except ModuleNotFoundError:
        return None


def _parameters(value):
    try:
        return list(inspect.signature(value).parameters.values())
    except (TypeError, ValueError):
        return None


def _compatible_kind(jax_kind: str, ours: inspect._ParameterKind) -> bool:
    """Ours may be more permissive than JAX's: a positional-only or keyword-only parameter of
    JAX's may be positional-or-keyword here, never the other way round."""
    p = inspect.Parameter
    allowed = {
        "POSITIONAL_ONLY": {p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD},
        "POSITIONAL_OR_KEYWORD": {p.POSITIONAL_OR_KEYWORD},
        "KEYWORD_ONLY": {p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD},
        "VAR_POSITIONAL": {p.VAR_POSITIONAL},
        "VAR_KEYWORD": {p.VAR_KEYWORD},
    }
    return ours in allowed[jax_kind]


def excluded_parameters(jax_module: str, name: str) -> set[str]:
    prefix = name + "("
    return {
        key[len(prefix) : -1] for key in exclusions().get(jax_module, {}) if key.startswith(prefix)
    }


def signature_mismatches(jax_signature: list, value, excluded=frozenset()) -> list[str]:
    """What keeps a call written for JAX's signature from meaning the same thing here.

    Positional parameters are matched by position (the names of JAX's positional-only ones do
    not matter), the others by name; defaults that are literals must be equal, others exist.
    A JAX signature of only `*args`/`**kwargs` (a wrapper) says nothing to compare."""
    jax_signature = [p for p in jax_signature if p[0] not in excluded]
    if all(kind.startswith("VAR_") for _, kind, _ in jax_signature):
        return []
    ours = _parameters(value)
    if ours is None:
        return ["its signature cannot be inspected"]
    problems = []
    our_positional = [p for p in ours if p.kind.name.startswith("POSITIONAL")]
    our_var_positional = any(p.kind.name == "VAR_POSITIONAL" for p in ours)
    jax_positional = [p for p in jax_signature if p[1].startswith("POSITIONAL")]
    matched = {}  # JAX parameter name -> ours
    for i, (name, kind, _) in enumerate(jax_positional):
        if i >= len(our_positional):
            if not our_var_positional:
                problems.append(f"takes {len(our_positional)} positional parameters, JAX's more")
            break
        param = our_positional[i]
        if kind == "POSITIONAL_OR_KEYWORD" and param.name != name:
            problems.append(f"positional parameter {i} is {param.name!r}, JAX's {name!r}")
        matched[name] = param
    by_name = {p.name: p for p in ours}
    for name, kind, default in jax_signature:
        if kind.startswith("VAR_"):
            if not any(p.kind.name == kind for p in ours):
                problems.append(f"no {'*args' if kind == 'VAR_POSITIONAL' else '**kwargs'}")
            continue
        param = matched.get(name) or by_name.get(name)
        if param is None:
            problems.append(f"no parameter {name!r}")
            continue
        if not _compatible_kind(kind, param.kind):
            problems.append(f"{name!r} is {param.kind.name}, JAX's is {kind}")
        ours_default = None if param.default is inspect.Parameter.empty else repr(param.default)
        if default is not None and ours_default is None:
            problems.append(f"{name!r} has no default, JAX's is {default}")
        elif default is not None and _LITERAL.match(default) and ours_default != default:
            problems.append(f"{name!r} defaults to {ours_default}, JAX's to {default}")
    used = {p.name for p in matched.values()} | {n for n, _, _ in jax_signature}
    for param in ours:
        required = param.default is inspect.Parameter.empty and not param.kind.name.startswith(
            "VAR_"
        )
        if param.name not in used and required:
            problems.append(f"requires {param.name!r}, which JAX does not have")
    return problems


def kind_of(value) -> str:
    if inspect.ismodule(value):
        return "module"
    if isinstance(value, type):
        return "class"
    return "function" if callable(value) else "constant"


def _kinds_compatible(jax_kind: str, ours: str) -> bool:
    if jax_kind in ("function", "class"):
        return ours in ("function", "class")  # e.g. a dtype class JAX's function builds
    return jax_kind == ours


def check_name(jax_module: str, name: str, entry: dict) -> list[str]:
    """Empty when tracejit has `name` as JAX has it; else what is wrong."""
    module = tracejit_module(jax_module)
    if module is None:
        return [f"module {tracejit_module_name(jax_module)} does not exist"]
    if not hasattr(module, name):
        return ["missing"]
    value = getattr(module, name)
    if entry["kind"] == "ufunc":
        # JAX's ufunc objects all take (*args, out=None, where=None): what matters is the class.
        ufunc = importlib.import_module("tracejit.numpy").ufunc
        return [] if isinstance(value, ufunc) else ["is not a jnp.ufunc object"]
    ours = kind_of(value)
    if not _kinds_compatible(entry["kind"], ours):
        return [f"is a {ours}, JAX's is a {entry['kind']}"]
    if entry["kind"] == "function" and entry.get("signature") is not None:
        return signature_mismatches(
            entry["signature"], value, excluded_parameters(jax_module, name)
        )
    return []


def status() -> dict:
    """{module: {name: "present" | "excluded" | "missing" | "mismatched"}}."""
    excluded = exclusions()
    result = {}
    for module, names in inventory().items():
        result[module] = {}
        for name, entry in names.items():
            if name in excluded.get(module, {}):
                result[module][name] = "excluded"
            else:
                result[module][name] = (
                    "present" if not check_name(module, name, entry) else "missing"
                )
    return result


def render_api_doc() -> str:
    excluded = exclusions()
    lines = [
        "# tracejit's public API against JAX 0.10.2",
        "",
        "Written by `python tests/api_surface.py` from the inventory of JAX 0.10.2's names",
        "(`tests/data/jax_api_0_10_2.json`) and the exclusions (`tests/data/api_exclusions.json`);",
        "`tests/test_api_surface.py` checks that every name not excluded is present with JAX's",
        "signature, and that this file is current.",
        "",
        "| module | JAX names | present | excluded |",
        "| --- | --- | --- | --- |",
    ]
    table = status()
    for module, names in table.items():
        counts = Counter(names.values())
        lines.append(f"| `{module}` | {len(names)} | {counts['present']} | {counts['excluded']} |")
    for module, names in table.items():
        lines += ["", f"## `{module}`", ""]
        present = [n for n, s in names.items() if s == "present"]
        lines.append("Present: " + (", ".join(f"`{n}`" for n in present) or "none") + ".")
        reasons = {}
        for name, reason in excluded.get(module, {}).items():
            reasons.setdefault(reason, []).append(name)
        if reasons:
            lines += ["", "Excluded:", ""]
            for reason, group in sorted(reasons.items()):
                lines.append(f"- {reason}: " + ", ".join(f"`{n}`" for n in sorted(group)))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    API_DOC_PATH.write_text(render_api_doc())
    print(f"wrote {API_DOC_PATH}")
