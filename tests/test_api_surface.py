"""Every public name of JAX 0.10.2's modules exists in tracejit with a compatible signature, or
is excluded with a reason; `docs/api.md` says which (see `api_surface.py`)."""

import inspect

import api_surface
import pytest

INVENTORY = api_surface.inventory()
EXCLUSIONS = api_surface.exclusions()
EXPECTED = [
    (module, name)
    for module, names in INVENTORY.items()
    for name in names
    if name not in EXCLUSIONS.get(module, {})
]


@pytest.mark.parametrize(("module", "name"), EXPECTED, ids=[f"{m}.{n}" for m, n in EXPECTED])
def test_name_is_present_with_jax_signature(module, name):
    problems = api_surface.check_name(module, name, INVENTORY[module][name])
    assert not problems, f"{api_surface.tracejit_module_name(module)}.{name}: {problems}"


def _split(key):
    """'jit(in_shardings)' -> ('jit', 'in_shardings'); 'pmap' -> ('pmap', None)."""
    name, _, parameter = key.partition("(")
    return name, parameter[:-1] or None


def test_exclusions_name_real_jax_names_with_reasons():
    for module, names in EXCLUSIONS.items():
        assert module in INVENTORY, module
        for key, reason in names.items():
            name, parameter = _split(key)
            assert name in INVENTORY[module], f"{module}.{name} is not a JAX 0.10.2 name"
            if parameter is not None:
                jax_parameters = [p[0] for p in INVENTORY[module][name]["signature"]]
                assert parameter in jax_parameters, f"{module}.{key}: JAX has no such parameter"
            assert api_surface.REASON.match(reason), f"{module}.{key}: reason {reason!r}"


def test_excluded_names_are_not_half_built():
    """An excluded name or parameter is absent: once it is built, its exclusion goes."""
    built = []
    for module, names in EXCLUSIONS.items():
        found = api_surface.tracejit_module(module)
        for key in names:
            name, parameter = _split(key)
            if found is None or not hasattr(found, name):
                continue
            if parameter is None or parameter in inspect.signature(getattr(found, name)).parameters:
                built.append(f"{module}.{key}")
    assert not built, f"built but still excluded: {built}"


def test_api_doc_is_current():
    assert api_surface.API_DOC_PATH.read_text() == api_surface.render_api_doc(), (
        "docs/api.md is stale: run `python tests/api_surface.py`"
    )
