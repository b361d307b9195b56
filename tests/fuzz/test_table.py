"""The fuzz tables cover every public name of `tracejit.numpy` and `tracejit.lax` (from
`dir()`): each is called by a table, or listed in `NOT_FUZZED` with the reason."""

from fuzz.crash_prone import INTEGER_DIVISIONS, SHIFTS
from fuzz.table import (
    AXIS_FUNCTIONS,
    BINARY,
    LAX_REDUCTIONS,
    NOT_FUZZED,
    REDUCTIONS,
    SHAPE_CALLS,
    UNARY,
)
from fuzz.test_bad_inputs import CREATION

import tracejit.numpy as jnp
from tracejit import lax


def _fuzzed():
    ops = UNARY + BINARY + REDUCTIONS + AXIS_FUNCTIONS + LAX_REDUCTIONS
    called = [*SHAPE_CALLS, *CREATION, *INTEGER_DIVISIONS, *SHIFTS]
    return {op.name for op in ops} | {n if n.startswith("lax.") else f"jnp.{n}" for n in called}


def _public():
    names = {f"jnp.{n}" for n in dir(jnp) if not n.startswith("_")}
    # The primitives themselves are reached through their wrappers.
    return names | {f"lax.{n}" for n in dir(lax) if not n.startswith("_") and not n.endswith("_p")}


def test_every_public_name_is_fuzzed_or_excused():
    missing = _public() - _fuzzed() - set(NOT_FUZZED)
    assert not missing, f"public names neither fuzzed nor in NOT_FUZZED: {sorted(missing)}"


def test_excuses_name_real_and_unfuzzed_names():
    stale = set(NOT_FUZZED) - (_public() - _fuzzed())
    assert not stale, f"NOT_FUZZED lists names that are fuzzed or absent: {sorted(stale)}"
