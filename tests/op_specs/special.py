"""The special functions computed by iteration or by series (`lax.igamma` and kin, `betainc`,
`zeta`, the scaled Bessel functions): SciPy references on float64 operands, sampled where the
functions are smooth and their algorithms converge."""

import scipy.special
from helpers import FLOATS, OpSpec

from tracejit import lax

# Shapes of the operands: size-1 dimensions, rank-0 operands broadcasting, size 0. The first
# is the one vmap, derivatives and XLA are checked on.
SINGLES = (((2, 3),), ((),), ((0,),))
PAIRS = (((2, 3), (1, 3)), ((), ()), ((2, 3), ()), ((0, 3), (0, 3)))
TRIPLES = (((2, 3), (1, 3), (2, 3)), ((), (), ()), ((2, 3), (), ()), ((0,), (0,), (0,)))


def ranges(*bounds):
    """A sampler of one operand per (low, high) in `bounds`, at the shapes it is given."""

    def sample(rng, shapes, dtype):
        return tuple(
            rng.uniform(low, high, shape).astype(dtype)
            for (low, high), shape in zip(bounds, shapes, strict=True)
        )

    return sample


def _gammainc_derivative_in_a(a, x, h=1e-5):
    """dP/da by central differences of SciPy's P (about 1e-10 accurate here)."""
    return (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)


# a in [0.5, 5), x in [0.1, 8): both the series (x < a or x < 1) and the continued fraction.
GAMMA_OPERANDS = ranges((0.5, 5.0), (0.1, 8.0))

SPECIAL = [
    OpSpec(
        "igamma",
        lax.igamma,
        scipy.special.gammainc,
        FLOATS,
        GAMMA_OPERANDS,
        PAIRS,
        grad_argnums=(0, 1),
        tol=4,
    ),
    OpSpec(
        "igammac",
        lax.igammac,
        scipy.special.gammaincc,
        FLOATS,
        GAMMA_OPERANDS,
        PAIRS,
        grad_argnums=(0, 1),
        tol=4,
    ),
    OpSpec(
        "igamma_grad_a",
        lax.igamma_grad_a,
        _gammainc_derivative_in_a,
        FLOATS,
        GAMMA_OPERANDS,
        PAIRS,
        tol=8,
    ),
    OpSpec(
        "betainc",
        lax.betainc,
        scipy.special.betainc,
        FLOATS,
        ranges((0.5, 5.0), (0.5, 5.0), (0.02, 0.98)),
        TRIPLES,
        grad_argnums=(2,),
        tol=8,
        primitive="regularized_incomplete_beta",
    ),
    OpSpec(
        "zeta",
        lax.zeta,
        scipy.special.zeta,
        FLOATS,
        ranges((1.5, 6.0), (0.2, 4.0)),
        PAIRS,
        tol=4,
    ),
    OpSpec(
        "bessel_i0e",
        lax.bessel_i0e,
        scipy.special.i0e,
        FLOATS,
        ranges((-12.0, 12.0)),
        SINGLES,
        grad_argnums=(0,),
        tol=2,
    ),
    OpSpec(
        "bessel_i1e",
        lax.bessel_i1e,
        scipy.special.i1e,
        FLOATS,
        ranges((-12.0, 12.0)),
        SINGLES,
        grad_argnums=(0,),
        tol=2,
    ),
]
