"""The rule contract, checked for every primitive: a primitive's block registers each rule its
family promises, or declares why it needs none. Adding a primitive without its rules fails
here, not in a user's program.

- differentiation: a JVP rule, or `ad.not_differentiable(p, reason)`;
- linear primitives (`ad.deflinear`, `ad.defjvp_linear_in`, `ad.mark_linear`): a transpose rule,
  and only they have one;
- vmap: a batching rule, or `batching.no_batched_operands(p)`;
- compilation: a lowering rule, or `lower.never_lowered(p, reason)`;
- primitives that every trace handles with a method of its own
  (`core.processed_by_trace_method`) need no JVP or batching rule.
"""

import ast
import inspect
import os
import re

import numpy as np
import pytest

import tracejit as jax
from tracejit import lax
from tracejit._src import core, custom_derivatives
from tracejit._src.interpreters import ad, batching
from tracejit._src.interpreters.ad import transpose_rules
from tracejit._src.lax import binary, parallel, trigonometric
from tracejit._src.lowering import lower


def names(primitives) -> list[str]:
    return sorted(p.name for p in primitives)


def primitives_where(condition) -> list[str]:
    return names(p for p in core.primitives.values() if condition(p))


# --- every primitive ------------------------------------------------------------------------


def test_every_primitive_has_an_impl_and_an_abstract_eval():
    missing = primitives_where(lambda p: "impl" not in vars(p) or "abstract_eval" not in vars(p))
    assert not missing, f"primitives without impl or abstract_eval: {missing}"


def test_every_primitive_has_a_jvp_rule_or_is_not_differentiable():
    missing = primitives_where(
        lambda p: (
            p not in ad.jvp_rules
            and p not in ad.not_differentiable_reasons
            and p not in core.trace_methods
        )
    )
    assert not missing, f"primitives without a JVP rule or ad.not_differentiable: {missing}"


def test_every_linear_primitive_has_a_transpose_rule():
    missing = names(p for p in ad.linear_operands if p not in transpose_rules)
    assert not missing, f"linear primitives without a transpose rule: {missing}"


def test_only_linear_primitives_have_transpose_rules():
    undeclared = names(p for p in transpose_rules if p not in ad.linear_operands)
    assert not undeclared, f"transpose rules of primitives not declared linear: {undeclared}"


def test_every_primitive_has_a_batching_rule_or_no_batched_operands():
    missing = primitives_where(
        lambda p: (
            p not in batching.batch_rules
            and p not in batching.operandless
            and p not in core.trace_methods
        )
    )
    assert not missing, f"primitives without a batching rule or no_batched_operands: {missing}"


def test_every_primitive_has_a_lowering_rule_or_is_never_lowered():
    missing = primitives_where(
        lambda p: p not in lower.lowering_rules and p not in lower.never_lowered_reasons
    )
    assert not missing, f"primitives without a lowering rule or lower.never_lowered: {missing}"


def test_an_exemption_is_never_declared_beside_the_rule_it_replaces():
    both = [
        *(f"{p} jvp" for p in ad.not_differentiable_reasons if p in ad.jvp_rules),
        *(f"{p} batching" for p in batching.operandless if p in batching.batch_rules),
        *(f"{p} lowering" for p in lower.never_lowered_reasons if p in lower.lowering_rules),
        *(f"{p} jvp" for p in core.trace_methods if p in ad.jvp_rules),
        *(f"{p} batching" for p in core.trace_methods if p in batching.batch_rules),
    ]
    assert not both, f"exemptions declared beside a rule: {both}"


def test_no_batched_operands_is_declared_only_for_primitives_without_operands():
    for primitive in batching.operandless:
        params = inspect.signature(primitive.abstract_eval).parameters.values()
        assert all(p.kind is p.KEYWORD_ONLY for p in params), primitive


# --- the declarations -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, argnums",
    [
        ("mul", (0, 1)),  # hand-written JVP, mark_linear: in each operand
        ("div", (0,)),  # in the numerator only
        ("neg", ()),  # deflinear: in any operand
        ("dynamic_slice", (0,)),  # defjvp_linear_in: not in the start indices
        ("scatter-add", (0, 2)),
        ("jit", ()),  # call primitives: in the operands their bodies are linear in
        ("custom_lin", ()),
    ],
)
def test_linear_primitives_declare_the_operands_they_are_linear_in(name, argnums):
    assert ad.linear_operands[core.primitives[name]] == argnums


def test_only_these_primitives_are_exempt_from_a_rule():
    # composite, rng_uniform, scatter_apply, igamma_grad_a, zeta, schur, hessenberg, tridiagonal,
    # geqrf, householder_product, select_and_scatter, symmetric_product, ormqr,
    # cholesky_update: JAX defines no JVP for them either
    not_differentiable = {
        "cholesky_update",
        "composite",
        "custom_lin",
        "hessenberg",
        "geqrf",
        "householder_product",
        "igamma_grad_a",
        "nextafter",
        "ormqr",
        "pmax",
        "pmin",
        "rng_uniform",
        "scatter_apply",
        "schur",
        "tridiagonal",
        "select_and_scatter",
        "symmetric_product",
        "zeta",
    }
    assert set(names(ad.not_differentiable_reasons)) == not_differentiable
    assert set(names(batching.operandless)) == {"axis_index", "iota"}
    assert set(names(lower.never_lowered_reasons)) == {"custom_lin"}
    assert set(names(core.trace_methods)) == {"custom_jvp_call", "custom_vjp_call"}


@pytest.mark.parametrize("collective", [lax.pmax, lax.pmin])
def test_differentiating_pmax_and_pmin_raises_jax_error(collective):
    name = collective.__name__
    message = re.escape(f"Differentiation rule for '{name}' not implemented: JAX defines none")
    xs = np.arange(4.0, dtype=np.float32)
    with pytest.raises(NotImplementedError, match=message):
        jax.vmap(jax.grad(lambda x: collective(x, "i")), axis_name="i")(xs)
    with pytest.raises(NotImplementedError, match=message):
        jax.vmap(lambda x: jax.jvp(lambda y: collective(y, "i"), (x,), (x,)), axis_name="i")(xs)


def test_a_primitive_without_jvp_rule_or_exemption_raises_naming_it():
    unruled = core.Primitive("test_rule_coverage_unruled")
    unruled.def_impl(np.sin)
    unruled.def_abstract_eval(lambda x: x)
    try:
        with pytest.raises(
            NotImplementedError,
            match=r"^\[jvp\] Differentiation rule for 'test_rule_coverage_unruled' not implemented$",
        ):
            jax.jvp(unruled.bind, (np.float32(1.0),), (np.float32(1.0),))
    finally:
        del core.primitives["test_rule_coverage_unruled"]


# --- core.describe --------------------------------------------------------------------------


def described(primitive) -> dict[str, str]:
    """`core.describe`'s rows, by name: the first line is the primitive and where it is made."""
    header, *rows = core.describe(primitive).splitlines()
    assert header.startswith(f"{primitive.name}, defined at tracejit/_src/")
    return dict(re.fullmatch(r"  (\S+(?: \S+)*)\s{2,}(.*)", row).groups() for row in rows)


def source_path(obj) -> str:
    """The path `describe` gives: from the directory holding the package."""
    package_parent = os.path.dirname(os.path.dirname(jax.__file__))
    return os.path.relpath(inspect.getsourcefile(inspect.unwrap(obj)), package_parent)


def source_line(obj) -> str:
    return f"{source_path(obj)}:{inspect.getsourcelines(obj)[1]}"


def test_describe_names_each_rule_with_its_file_and_line():
    rows = described(binary.mul_p)
    transpose = f"_mul_transpose  {source_line(binary._mul_transpose)}"
    assert rows["transpose"] == transpose
    assert rows["jvp"].startswith("defjvp.<locals>.rule  tracejit/_src/interpreters/ad.py:")
    assert rows["linear in operands"] == "0, 1"
    assert rows["partial eval"] == "none"
    for name in ["abstract eval", "weak type", "batching", "lowering"]:
        assert re.search(r"  tracejit/_src/\S+\.py:\d+$", rows[name]), (name, rows[name])
    assert rows["impl"] == f"_mul_impl  {source_line(binary._mul_impl)}"
    assert described(binary.div_p)["impl"] == f"_div_impl  {source_line(binary._div_impl)}"
    # through the wrapper that silences NumPy's warnings
    assert described(trigonometric.sin_p)["impl"] == "numpy.sin"


def test_describe_shows_a_primitive_where_it_is_defined():
    lines = inspect.getsource(parallel).splitlines()
    number = lines.index('all_gather_p = Primitive("all_gather")') + 1
    header = core.describe(parallel.all_gather_p).splitlines()[0]
    assert header == f"all_gather, defined at {source_path(parallel)}:{number}"


def test_describe_shows_the_declared_exemptions():
    assert described(parallel.pmax_p)["not differentiable"].startswith("JAX defines none")
    assert described(parallel.pmax_p)["jvp"] == "none"
    assert described(parallel.axis_index_p)["no batched operands"]
    custom_lin = described(custom_derivatives.custom_lin_p)
    assert custom_lin["never lowered"] == "transposed away before anything is compiled"
    assert custom_lin["linear in operands"] == "any"
    custom_jvp_call = described(core.primitives["custom_jvp_call"])
    assert custom_jvp_call["processed by trace method"] == "process_custom_jvp_call"


def test_core_finds_the_rules_without_importing_the_interpreters():
    imported = {
        node.module
        for node in ast.walk(ast.parse(inspect.getsource(core)))
        if isinstance(node, ast.ImportFrom)
    }
    above_core = ("tracejit._src.interpreters", "tracejit._src.lowering", "tracejit._src.lax")
    assert not [module for module in imported if module.startswith(above_core)]
    assert {"jvp", "transpose", "batching", "lowering", "partial eval"} <= set(core.rule_registries)
