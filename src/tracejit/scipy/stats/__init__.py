"""`tracejit.scipy.stats`: SciPy's distributions (`norm.logpdf`, `poisson.pmf`, ...) and
`rankdata`, `mode`, `sem`, as JAX has them. JAX's `multivariate_normal` and `gaussian_kde`
need linear algebra and are absent (`hasattr` is False)."""

from tracejit._src.scipy.stats.descriptive import mode, rankdata, sem  # noqa: F401
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
