"""Checks generated from the op tables in `tests/op_specs/`: for every row, its values
(eager, staged and replayed, against the NumPy/SciPy reference) at each dtype and shape, vmap
against a Python loop, derivatives against finite differences; and every primitive has a row
or a named test file that covers it."""

import pytest
from op_specs import ALL_SPECS, COVERED_ELSEWHERE

import tracejit  # noqa: F401  (registers every primitive)
from tracejit._src.core import primitives

VALUE_CASES = [
    (spec, dtype, shape) for spec in ALL_SPECS for dtype in spec.dtypes for shape in spec.shapes
]


@pytest.mark.parametrize(
    "spec,dtype,shape",
    VALUE_CASES,
    ids=[f"{spec}-{dtype.name}-{shape}" for spec, dtype, shape in VALUE_CASES],
)
def test_matches_reference_eager_and_staged(spec, dtype, shape):
    spec.check_values(dtype, shape)


@pytest.mark.parametrize("spec", ALL_SPECS, ids=str)
def test_vmap_matches_a_loop(spec):
    spec.check_vmap()


@pytest.mark.parametrize("spec", [s for s in ALL_SPECS if s.grad_argnums], ids=str)
def test_derivatives_match_finite_differences(spec):
    spec.check_grads()


def test_every_primitive_has_a_spec_or_is_covered_elsewhere():
    with_specs = {spec.primitive_name for spec in ALL_SPECS}
    missing = sorted(set(primitives) - with_specs - set(COVERED_ELSEWHERE))
    assert not missing, f"primitives without an OpSpec row or a COVERED_ELSEWHERE entry: {missing}"
    assert with_specs <= set(primitives), with_specs - set(primitives)
    assert not with_specs & set(COVERED_ELSEWHERE), with_specs & set(COVERED_ELSEWHERE)
