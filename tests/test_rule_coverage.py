"""Every primitive carries every rule its family promises: adding a primitive without its
derivative rules fails here, not in a user's program."""

import tracejit  # noqa: F401  (registers every primitive)
from tracejit._src import core
from tracejit._src.interpreters import ad
from tracejit._src.interpreters.transpose import transpose_rules

# Primitives that transformations handle through trace methods instead of rules.
HANDLED_BY_TRACES = {"custom_jvp_call", "custom_vjp_call"}
# Primitives that only ever appear in linear jaxprs, to be transposed.
TRANSPOSE_ONLY = {"custom_lin"}

# The linear primitives (in at least one operand): each needs a transpose rule.
LINEAR = {
    "add", "add_any", "sub", "mul", "div", "neg", "reduce_sum", "broadcast_in_dim", "reshape",
    "transpose", "squeeze", "rev", "pad", "concatenate", "slice", "dynamic_slice",
    "dynamic_update_slice", "convert_element_type", "select_n", "cumsum", "dot_general", "copy",
    "real", "imag", "conj", "custom_lin", "jit", "cond", "scan", "remat2", "gather", "scatter-add",
    "scatter", "scatter-mul",
}  # fmt: skip


def test_every_primitive_has_a_jvp_rule():
    missing = sorted(
        name
        for name, p in core.primitives.items()
        if p not in ad.jvp_rules and name not in HANDLED_BY_TRACES | TRANSPOSE_ONLY
    )
    assert not missing, f"primitives without a JVP rule: {missing}"


def test_every_linear_primitive_has_a_transpose_rule():
    missing = sorted(name for name in LINEAR if core.primitives[name] not in transpose_rules)
    assert not missing, f"linear primitives without a transpose rule: {missing}"


def test_every_primitive_has_a_lowering_rule():
    from tracejit._src.lowering.lower import lowering_rules

    never_lowered = {"custom_lin"}  # transposed away before anything is compiled
    missing = sorted(
        name
        for name, p in core.primitives.items()
        if p not in lowering_rules and name not in never_lowered
    )
    assert not missing, f"primitives without a StableHLO lowering rule: {missing}"


def test_every_primitive_has_a_batching_rule():
    from tracejit._src.interpreters.batching import batch_rules

    no_operands = {"iota", "axis_index"}  # nothing to batch: vmap never binds it on batched values
    missing = sorted(
        name
        for name, p in core.primitives.items()
        if p not in batch_rules and name not in HANDLED_BY_TRACES | no_operands
    )
    assert not missing, f"primitives without a batching rule: {missing}"
