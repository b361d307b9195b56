"""`tracejit.scipy.special`: SciPy's special functions (erf, gammaln, logsumexp, ndtr, ...).

JAX's other special functions are named here but raise NotImplementedError: they need
primitives or algorithms tracejit does not have yet."""

from tracejit._src.scipy.special import (  # noqa: F401
    beta,
    betaln,
    boxcox,
    boxcox1p,
    digamma,
    entr,
    erf,
    erfc,
    erfinv,
    expit,
    factorial,
    gamma,
    gammaln,
    gammasgn,
    kl_div,
    log_ndtr,
    log_softmax,
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

# jax.scipy.special names without an implementation here, and what each one needs.
_MISSING = {
    **dict.fromkeys(
        ("bessel_jn", "i0", "i0e", "i1", "i1e"), "the Bessel-function primitives (bessel_i0e, ...)"
    ),
    **dict.fromkeys(("gammainc", "gammaincc"), "the igamma/igammac primitives"),
    **dict.fromkeys(
        (
            "zeta",
            "hyp1f1",
            "hyp2f1",
            "spence",
            "owens_t",
            "wofz",
            "fresnel",
            "dawsn",
            "erfcx",
            "exp1",
            "expi",
            "expn",
            "sici",
            "sph_harm_y",
            "bernoulli",
        ),
        "a series or primitive tracejit does not have yet",
    ),
    **dict.fromkeys(
        ("betainc", "poch", "loggamma", "comb"),
        "an algorithm accurate for large arguments (lgamma differences cancel)",
    ),
}


def __getattr__(name):
    if name in _MISSING:
        raise NotImplementedError(
            f"tracejit.scipy.special.{name} is not implemented yet: it needs {_MISSING[name]}"
        )
    raise AttributeError(f"module 'tracejit.scipy.special' has no attribute {name!r}")
