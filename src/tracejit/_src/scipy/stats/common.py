"""What every distribution module needs: its operands promoted together, and constants."""

from tracejit._src.numpy.promotion import promote_args_inexact, weak_scalar


def inexact(name, *args):
    """The operands in one inexact dtype and rank (`norm.logpdf(x, loc, scale)`'s promotion)."""
    return promote_args_inexact(name, *args)


def const(x, value):
    """`value` as a weakly typed scalar of x's dtype: like the constants of JAX's lax-level
    formulas, it changes neither the dtype nor the weak type of a result it enters."""
    return weak_scalar(float(value), x.dtype)
