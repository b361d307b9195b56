"""`tracejit.scipy.stats`: SciPy's distributions (`norm.logpdf`, `poisson.pmf`, ...) and
`rankdata`, `mode`, `sem` and `gaussian_kde`, as JAX has them."""

from tracejit._src.scipy.stats.descriptive import mode, rankdata, sem  # noqa: F401
from tracejit._src.scipy.stats.kde import gaussian_kde  # noqa: F401
from tracejit.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
