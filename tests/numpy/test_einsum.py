"""`jnp.einsum` in full generality against NumPy: repeated letters (diagonals, traces),
ellipses, implicit outputs, broadcast size-1 axes, the interleaved form, every `optimize`
choice; eagerly, under jit and replayed; derivatives and `vmap`. (Dtypes, weak types,
`einsum_path` and errors are checked against JAX in `test_jax_reference_manipulation.py`.)"""

import numpy as np
import opt_einsum
import pytest
from helpers import check_eager_jit_numpy, check_vmap, jaxpr_text

import tracejit.numpy as jnp
from tracejit.test_util import check_grads

_rng = np.random.default_rng(0)


def _r(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


CASES = [
    ("ii->i", _r(3, 3)),
    ("ii", _r(3, 3)),
    ("iij->j", _r(2, 2, 4)),
    ("iji->ij", _r(2, 3, 2)),
    ("iii->i", _r(2, 2, 2)),
    ("ijji->ij", _r(2, 3, 3, 2)),
    ("ij,jk->ik", _r(2, 3), _r(3, 4)),
    ("ij,jk", _r(2, 3), _r(3, 4)),
    ("ij,kj->ikj", _r(2, 3), _r(4, 3)),
    ("bij,bjk", _r(2, 3, 4), _r(2, 4, 5)),
    ("...ij,...jk->...ik", _r(5, 2, 3), _r(5, 3, 4)),
    ("...ij,jk->...ik", _r(5, 1, 2, 3), _r(3, 4)),
    ("i...->...", _r(3, 2, 2)),
    ("...", _r(2, 3)),
    ("ijk,ik->j", _r(1, 3, 4), _r(2, 4)),
    ("ij,ij->", _r(2, 3), _r(2, 3)),
    ("i,i", _r(3), _r(3)),
    ("i,j", _r(3), _r(2)),
    ("ij->", _r(2, 3)),
    ("ii,ij->j", _r(3, 3), _r(3, 4)),
    ("ii,jj->ij", _r(2, 2), _r(3, 3)),
    ("iij,jkk->ik", _r(2, 2, 3), _r(3, 4, 4)),
    ("ij,jk,kl->il", _r(2, 3), _r(3, 4), _r(4, 5)),
    ("ab,bc,cd,de->ae", _r(2, 3), _r(3, 4), _r(4, 5), _r(5, 2)),
    ("ab,ab,ab->a", _r(2, 3), _r(2, 3), _r(2, 3)),
    ("ij,,jk->ki", _r(2, 3), np.float32(2.0), _r(3, 4)),
]
OPTIMIZE = ["auto", True, False, "greedy", "optimal", "branch-2", "dp"]


@pytest.mark.parametrize("optimize", OPTIMIZE, ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_against_numpy(case, optimize):
    spec, *operands = case
    want = np.einsum(spec, *[np.float64(x) for x in operands])
    check_eager_jit_numpy(
        lambda *xs: jnp.einsum(spec, *xs, optimize=optimize),
        operands,
        want.astype(np.float32),
        1e-5,
    )


def test_explicit_path_from_einsum_path():
    operands = [_r(2, 3), _r(3, 40), _r(40, 5)]
    path, _ = jnp.einsum_path("ij,jk,kl", *operands, optimize="optimal")
    assert path == opt_einsum.contract_path("ij,jk,kl", *operands, optimize="optimal")[0]
    want = np.einsum("ij,jk,kl", *operands)
    check_eager_jit_numpy(
        lambda *xs: jnp.einsum("ij,jk,kl", *xs, optimize=path), operands, want, 1e-5
    )


def test_interleaved_form():
    a, b = _r(2, 3), _r(3, 4)
    want = np.einsum(a, [0, 1], b, [1, 2], [0, 2])
    check_eager_jit_numpy(lambda a, b: jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), (a, b), want)


def test_integer_and_boolean_operands():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    check_eager_jit_numpy(lambda a: jnp.einsum("ij,kj->ik", a, a), (a,), np.einsum("ij,kj", a, a))
    m = np.array([[True, False], [False, False]])
    check_eager_jit_numpy(lambda m: jnp.einsum("ij,jk", m, m), (m,), np.einsum("ij,jk", m, m))


def test_diagonal_is_a_masked_sum():
    """A repeated letter selects the diagonal with an iota equality and sums the rest away,
    as JAX stages it."""
    text = jaxpr_text(lambda x: jnp.einsum("ii->i", x), np.ones((2, 2), np.float32))
    assert "iota" in text and "select_n" in text and "reduce_sum" in text, text


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c[0] in ("ii", "iij->j", "ij,jk->ik", "iij,jkk->ik", "ij,jk,kl->il")],
    ids=lambda c: c[0],
)
def test_grads(case):
    spec, *operands = case
    check_grads(lambda *xs: jnp.einsum(spec, *xs), operands, order=2, rtol=1e-4, atol=1e-4)


def test_vmap_matches_loop():
    a, b = _r(4, 3, 3), _r(3, 2)
    check_vmap(lambda a, b: jnp.einsum("ii,ij->j", a, b), (a, b), (0, None), tol=1e-5, jit=True)
    check_vmap(lambda a, b: jnp.einsum("ij,jk", a, b), (_r(3, 4, 3), _r(4, 3, 2)), (1, 0), tol=1e-5)
