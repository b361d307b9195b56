"""The multinomial distribution of counts `x` (last axis) over n trials with probabilities `p`."""

import numpy as np

from tracejit._src import dtypes
from tracejit._src.numpy import reductions
from tracejit._src.numpy.promotion import (
    convert_element_type,
    promote_args_inexact,
    promote_args_numeric,
)
from tracejit._src.numpy.ufuncs import equal, exp, where
from tracejit._src.scipy.special import gammaln, xlogy


def logpmf(x, n, p):
    """Needs integer counts `x` and `n` (a ValueError otherwise); -inf where they do not sum
    to n."""
    (p,) = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(
            f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}"
        )
    x = convert_element_type(x, p.dtype, x.weak_type)
    n = convert_element_type(n, p.dtype, n.weak_type)
    logprobs = gammaln(n + 1) + reductions.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return where(equal(reductions.sum(x), n), logprobs, -np.inf)


def pmf(x, n, p):
    return exp(logpmf(x, n, p))
