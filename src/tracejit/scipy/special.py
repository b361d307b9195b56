"""`tracejit.scipy.special`: SciPy's special functions (erf, gammaln, logsumexp, ndtr, ...)."""

from tracejit._src.scipy.special import (  # noqa: F401
    digamma,
    entr,
    erf,
    erfc,
    erfinv,
    expit,
    gammaln,
    log_ndtr,
    log_softmax,
    logit,
    logsumexp,
    ndtr,
    ndtri,
    polygamma,
    softmax,
    xlog1py,
    xlogy,
)
