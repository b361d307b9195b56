"""Numerical calculus on sampled values: `gradient` (central differences) and `trapezoid`.

Both are slices, differences and sums, so they differentiate and batch like any composite.
`gradient` uses second-order central differences inside and first-order one-sided ones at the
edges (JAX has no `edge_order`); spacings are a scalar step or the coordinates along the axis.
`trapezoid` takes the fast form `dx * (sum(y) - (y[0] + y[-1]) / 2)` for a constant step.
"""

from __future__ import annotations

from tracejit._src.numpy import lib, manipulation, promotion, reductions, ufuncs
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.promotion import asarray_operand


def _along(x, start, stop, axis: int):
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def _gradient_along(a, h, axis: int):
    """The gradient of `a` along `axis` for the spacing `h` (a step, or coordinates)."""

    def part(start, stop):
        return _along(a, start, stop, axis)

    first = ufuncs.subtract(part(1, 2), part(0, 1))
    last = ufuncs.subtract(part(-1, None), part(-2, -1))
    if h.ndim == 0:
        central = ufuncs.subtract(part(2, None), part(None, -2))
        inner = ufuncs.divide(ufuncs.multiply(central, 0.5), h)
        first, last = ufuncs.divide(first, h), ufuncs.divide(last, h)
    elif h.ndim == 1:
        if h.shape[0] != a.shape[axis]:
            raise ValueError(
                "Spacing arrays must have the same length as the dimension along which the "
                "gradient is calculated."
            )
        h = manipulation.reshape(h, tuple(-1 if d == axis else 1 for d in range(a.ndim)))

        def coordinate(start, stop):
            return _along(h, start, stop, axis)

        first = ufuncs.divide(first, ufuncs.subtract(coordinate(1, 2), coordinate(0, 1)))
        last = ufuncs.divide(last, ufuncs.subtract(coordinate(-1, None), coordinate(-2, -1)))
        dx1 = ufuncs.subtract(coordinate(1, -1), coordinate(0, -2))
        dx2 = ufuncs.subtract(coordinate(2, None), coordinate(1, -1))
        total = ufuncs.add(dx1, dx2)
        below = ufuncs.divide(ufuncs.negative(dx2), ufuncs.multiply(dx1, total))
        middle = ufuncs.divide(ufuncs.subtract(dx2, dx1), ufuncs.multiply(dx1, dx2))
        above = ufuncs.divide(dx1, ufuncs.multiply(dx2, total))
        inner = ufuncs.add(
            ufuncs.add(ufuncs.multiply(below, part(0, -2)), ufuncs.multiply(middle, part(1, -1))),
            ufuncs.multiply(above, part(2, None)),
        )
    else:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    return manipulation.concatenate([first, inner, last], axis=axis)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of the sampled `f` along each axis in `axis` (all by default): one array,
    or a list of them for several axes. `varargs` are the spacings: none (step 1), one for
    every axis, or one per axis, each a scalar step or the 1-D coordinates."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = promotion.promote_dtypes_inexact(
        *(asarray_operand("gradient", v, i) for i, v in enumerate((f, *varargs)))
    )
    axes = tuple(range(a.ndim)) if axis is None else manipulation.normalize_axis_tuple(axis, a.ndim)
    if not axes:
        return []
    if min(a.shape[d] for d in axes) < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least 2 elements "
            "are required."
        )
    if not spacing:
        spacing = [promotion.weak_scalar(1.0, a.dtype)] * len(axes)
    elif len(spacing) == 1:
        spacing = spacing * len(axes)
    elif len(spacing) != len(axes):
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    grads = [_gradient_along(a, h, d) for d, h in zip(axes, spacing, strict=True)]
    return grads[0] if len(axes) == 1 else grads


@jnp_jit(static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of the samples `y` along `axis` by the trapezoidal rule, at the
    coordinates `x` (1-D, or shaped like `y`) or a constant step `dx`."""
    if x is None:
        (values,) = promotion.promote_dtypes_inexact(asarray_operand("trapezoid", y))
        step = asarray_operand("trapezoid", dx, 2)
        if step.ndim > 0:
            step = manipulation.reshape(step, (1,) * (values.ndim - step.ndim) + step.shape)
            step = manipulation.moveaxis(step, axis, -1)
    else:
        values, coords = promotion.promote_dtypes_inexact(
            asarray_operand("trapezoid", y), asarray_operand("trapezoid", x, 1)
        )
        if coords.ndim == 1:
            step = lib.diff(coords)
        else:
            step = manipulation.moveaxis(lib.diff(coords, axis=axis), axis, -1)
    values = manipulation.moveaxis(values, axis, -1)
    if step.ndim == 0 or step.shape[-1] == 1:
        constant = step if step.ndim == 0 else step[..., 0]
        total = reductions.sum(values, -1)
        ends = ufuncs.multiply(0.5, ufuncs.add(values[..., 0], values[..., -1]))
        return ufuncs.multiply(constant, ufuncs.subtract(total, ends))
    pairs = ufuncs.add(values[..., 1:], values[..., :-1])
    return ufuncs.multiply(0.5, reductions.sum(ufuncs.multiply(step, pairs), -1))
