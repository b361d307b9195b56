"""Every op-table row (tests/op_specs) compiled by XLA agrees with eager evaluation, at the
row's first dtype and shape (the lowering files here test dtypes and edge values in bulk)."""

import numpy as np
import pytest
from helpers import TOLERANCE, assert_tree_equal
from op_specs import ALL_SPECS

from tracejit import jit


@pytest.mark.parametrize("spec", ALL_SPECS, ids=str)
def test_xla_matches_eager(spec):
    dtype = spec.dtypes[0]
    operands = spec.operands(dtype)
    tol = TOLERANCE.get(np.dtype(dtype), 0) * spec.tol
    assert_tree_equal(jit(spec.fun)(*operands), spec.fun(*operands), tol)
