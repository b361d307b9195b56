"""`tracejit.scipy.stats`: SciPy's distributions as JAX has them, one module per distribution.

Each function promotes its operands together to an inexact dtype (Python scalars stay weakly
typed, as in JAX) and is built from `tracejit.numpy` and `tracejit.scipy.special`, so jit, grad
and vmap need no rules of their own. Outside the support a density is 0 (its log -inf); invalid
parameters give NaN where JAX checks them, and whatever the formula gives where JAX does not.
"""
