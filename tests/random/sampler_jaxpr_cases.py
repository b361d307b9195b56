"""The calls whose jaxprs `test_sampler_jaxprs.py` compares with JAX's (recorded by
`make_jax_reference_jaxprs.py`): each distribution on a typed key and on a raw one. Written
against a module `jax` passed in, so that the recording script runs them on JAX and the test
on tracejit; each case is a sampler and its key."""


def jaxpr_cases(jax) -> dict:
    r, jnp = jax.random, jax.numpy
    calls = {
        "uniform": lambda k: r.uniform(k, (3,)),
        "uniform_minmax": lambda k: r.uniform(k, (3,), minval=1.0, maxval=2.0),
        "normal": lambda k: r.normal(k, (3,)),
        "randint": lambda k: r.randint(k, (3,), 0, 10),
        "bits": lambda k: r.bits(k, (3,)),
        "split": lambda k: r.split(k),
        "fold_in": lambda k: r.fold_in(k, 3),
        "bernoulli": lambda k: r.bernoulli(k, 0.3, (3,)),
        "categorical": lambda k: r.categorical(k, jnp.zeros(4)),
        "choice": lambda k: r.choice(k, 5, (3,)),
        "permutation": lambda k: r.permutation(k, 5),
        "truncated_normal": lambda k: r.truncated_normal(k, -1.0, 1.0, (3,)),
        "gamma": lambda k: r.gamma(k, 2.0, (3,)),
        "beta": lambda k: r.beta(k, 2.0, 3.0, (3,)),
        "dirichlet": lambda k: r.dirichlet(k, jnp.ones(3)),
        "exponential": lambda k: r.exponential(k, (3,)),
        "laplace": lambda k: r.laplace(k, (3,)),
        "logistic": lambda k: r.logistic(k, (3,)),
        "cauchy": lambda k: r.cauchy(k, (3,)),
        "gumbel": lambda k: r.gumbel(k, (3,)),
        "poisson": lambda k: r.poisson(k, 3.0, (3,)),
        "binomial": lambda k: r.binomial(k, 5.0, 0.3, (3,)),
        "geometric": lambda k: r.geometric(k, 0.3, (3,)),
        "multinomial": lambda k: r.multinomial(k, 5.0, jnp.ones(3) / 3),
        "multivariate_normal": lambda k: r.multivariate_normal(k, jnp.zeros(2), jnp.eye(2)),
        "t": lambda k: r.t(k, 3.0, (3,)),
        "chisquare": lambda k: r.chisquare(k, 3.0, (3,)),
        "f": lambda k: r.f(k, 3.0, 4.0, (3,)),
        "pareto": lambda k: r.pareto(k, 3.0, (3,)),
        "weibull_min": lambda k: r.weibull_min(k, 1.0, 2.0, (3,)),
        "rademacher": lambda k: r.rademacher(k, (3,)),
        "maxwell": lambda k: r.maxwell(k, (3,)),
        "double_sided_maxwell": lambda k: r.double_sided_maxwell(k, 0.0, 1.0, (3,)),
        "ball": lambda k: r.ball(k, 3),
        "orthogonal": lambda k: r.orthogonal(k, 3),
        "lognormal": lambda k: r.lognormal(k, 0.5, (3,)),
        "rayleigh": lambda k: r.rayleigh(k, 1.0, (3,)),
        "wald": lambda k: r.wald(k, 1.0, (3,)),
        "triangular": lambda k: r.triangular(k, 0.0, 0.5, 1.0, (3,)),
        "generalized_normal": lambda k: r.generalized_normal(k, 2.0, (3,)),
        "loggamma": lambda k: r.loggamma(k, 2.0, (3,)),
    }
    keys = {"typed": r.key(0), "raw": r.PRNGKey(0)}
    return {
        f"{name} {kind}": (call, (key,))
        for name, call in calls.items()
        for kind, key in keys.items()
    }
