"""`tracejit.random`: JAX's counter-based random numbers (`jax.random`), on raw `uint32[2]`
keys (`PRNGKey`) and typed keys (`key`); the distributions not yet built are absent."""

from tracejit._src.random.counts import binomial, multinomial, poisson  # noqa: F401
from tracejit._src.random.distributions import (  # noqa: F401
    bernoulli,
    bits,
    categorical,
    cauchy,
    choice,
    double_sided_maxwell,
    exponential,
    geometric,
    gumbel,
    laplace,
    logistic,
    lognormal,
    maxwell,
    normal,
    pareto,
    permutation,
    rademacher,
    randint,
    rayleigh,
    triangular,
    truncated_normal,
    uniform,
    wald,
    weibull_min,
)
from tracejit._src.random.gamma_family import (  # noqa: F401
    ball,
    beta,
    chisquare,
    dirichlet,
    f,
    gamma,
    generalized_normal,
    loggamma,
    t,
)
from tracejit._src.random.keys import (  # noqa: F401
    PRNGKey,
    clone,
    fold_in,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from tracejit._src.random.matrices import multivariate_normal, orthogonal  # noqa: F401
from tracejit._src.random_gamma import random_gamma_p  # noqa: F401
