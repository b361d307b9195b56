"""`tracejit.random`: JAX's counter-based random numbers on raw `uint32[2]` keys
(`jax.random`); typed keys and the distributions not yet built are absent."""

from tracejit._src.random import (  # noqa: F401
    PRNGKey,
    bernoulli,
    bits,
    categorical,
    cauchy,
    choice,
    exponential,
    fold_in,
    gumbel,
    key_data,
    laplace,
    logistic,
    normal,
    permutation,
    rademacher,
    randint,
    split,
    truncated_normal,
    uniform,
)
