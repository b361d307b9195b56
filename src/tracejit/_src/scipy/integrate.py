"""`tracejit.scipy.integrate.trapezoid`: the trapezoidal rule along an axis.

With equal spacing (`dx` a scalar, or constant along the axis) the rule is
dx * (sum(y) - (y[0] + y[-1]) / 2), one reduction; with sample points `x` (or an array `dx`)
it sums each interval's dx * (y[i] + y[i+1]) / 2.
"""

from tracejit._src.numpy import manipulation, reductions
from tracejit._src.numpy.lib import diff
from tracejit._src.numpy.promotion import asarray_operand, promote_dtypes_inexact, to_operands


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of the samples `y` along `axis`, at points `x` or spaced `dx` apart."""
    if x is None:
        (y_arr,) = promote_dtypes_inexact(*to_operands("trapezoid", (y,)))
        spacing = asarray_operand("trapezoid", dx)
        if spacing.ndim > 0:
            lead = (1,) * (y_arr.ndim - spacing.ndim)
            spacing = manipulation.moveaxis(
                manipulation.reshape(spacing, lead + spacing.shape), axis, -1
            )
    else:
        y_arr, x_arr = promote_dtypes_inexact(*to_operands("trapezoid", (y, x)))
        if x_arr.ndim == 1:
            spacing = diff(x_arr)
        else:
            spacing = manipulation.moveaxis(diff(x_arr, axis=axis), axis, -1)
    y_arr = manipulation.moveaxis(y_arr, axis, -1)
    if spacing.ndim == 0 or spacing.shape[-1] == 1:
        constant = spacing if spacing.ndim == 0 else spacing[..., 0]
        ends = y_arr[..., 0] + y_arr[..., -1]
        return constant * (reductions.sum(y_arr, axis=-1) - 0.5 * ends)
    return 0.5 * reductions.sum(spacing * (y_arr[..., 1:] + y_arr[..., :-1]), axis=-1)
