"""`tracejit.scipy.special`: SciPy's special functions (erf, gammaln, gammainc, betainc, the
Bessel functions, zeta, the exponential integrals, the Faddeeva function, the hypergeometric
functions, the spherical harmonics, ...)."""

from tracejit._src.scipy.special import (  # noqa: F401
    beta,
    betainc,
    betaln,
    boxcox,
    boxcox1p,
    comb,
    digamma,
    entr,
    erf,
    erfc,
    erfinv,
    expit,
    factorial,
    gamma,
    gammainc,
    gammaincc,
    gammaln,
    gammasgn,
    kl_div,
    log_ndtr,
    log_softmax,
    loggamma,
    logit,
    logsumexp,
    multigammaln,
    ndtr,
    ndtri,
    polygamma,
    rel_entr,
    softmax,
    xlog1py,
    xlogy,
)
from tracejit._src.scipy.special_bessel import (  # noqa: F401
    bessel_jn,
    i0,
    i0e,
    i1,
    i1e,
)
from tracejit._src.scipy.special_error import dawsn, erfcx, owens_t, wofz  # noqa: F401
from tracejit._src.scipy.special_harmonics import sph_harm_y  # noqa: F401
from tracejit._src.scipy.special_hypergeometric import hyp1f1, hyp2f1  # noqa: F401
from tracejit._src.scipy.special_integrals import (  # noqa: F401
    exp1,
    expi,
    expn,
    fresnel,
    sici,
    spence,
)
from tracejit._src.scipy.special_series import bernoulli, poch, zeta  # noqa: F401
