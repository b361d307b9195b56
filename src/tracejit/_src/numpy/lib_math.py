"""Numerical helpers over the elementwise ops: stable log-sum-exp of two values, NaN cleanup,
multi-way selection, Kronecker and cross products, polynomials and linear interpolation.

`logaddexp` is a `custom_jvp`: its primal is `max + log1p(exp(-|x1 - x2|))` (no overflow), and
its tangent weighs each input by `exp(x - out)`, with `+inf` replaced by 0 on both sides so that
`logaddexp(inf, y)` has gradient (1, exp(y)) instead of NaN, which is what JAX gives.
`interp` finds each point's interval by counting the breakpoints at or below it (a broadcast
compare and a sum, so no sort primitive is needed unless `period` asks to reorder `xp`), then
reads the two neighbouring values with `take`.
`gcd` runs Euclid's algorithm on all elements at once in a `while_loop` that stops when every
remainder is zero; `packbits`/`unpackbits` shift bits into and out of uint8 lanes.
"""

from __future__ import annotations

import builtins

import numpy as np

from tracejit._src import dtypes, vmap
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.lax import slicing as lax_slicing
from tracejit._src.lax import sort as lax_sort
from tracejit._src.lax.control_flow import loops
from tracejit._src.numpy import (
    advanced_indexing,
    arithmetic,
    creation,
    lib,
    lib_vectorize,
    manipulation,
    padding,
    products,
    promotion,
    reductions,
    ufuncs,
)
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.namesakes import FLOATS, numpy_namesake
from tracejit._src.numpy.promotion import asarray_operand

# --------------------------------------------------------------------------------------------
# logaddexp


def _finite_or_zero(x):
    """`x` with +inf replaced by 0: the tangent weights then stay finite at +inf."""
    x = asarray_operand("logaddexp", x)
    return ufuncs.where(ufuncs.equal(x, np.inf), ufuncs.zero_like_scalar(x), x)


def _logaddexp_impl(x1, x2, exp, log1p_scale):
    if dtypes.is_complex(x1.dtype):
        # The input with the larger real part factors out: out = big + log1p(exp(small - big)).
        first = ufuncs.greater_equal(ufuncs.real(x1), ufuncs.real(x2))
        big, small = ufuncs.where(first, x1, x2), ufuncs.where(first, x2, x1)
        tail = ufuncs.log1p(exp(ufuncs.subtract(small, big)))
        if log1p_scale is not None:
            tail = ufuncs.multiply(tail, promotion.weak_scalar(log1p_scale, tail.dtype))
        return ufuncs.add(big, tail)
    # (staged in JAX's order)
    amax = ufuncs.maximum(x1, x2)
    delta = ufuncs.subtract(x1, x2)
    # delta is NaN for inf - inf of one sign (and for NaN inputs): x1 + x2 is then the answer.
    undefined, total = ufuncs.isnan(delta), ufuncs.add(x1, x2)
    tail = ufuncs.log1p(exp(ufuncs.negative(ufuncs.absolute(delta))))
    if log1p_scale is not None:
        tail = ufuncs.multiply(promotion.weak_scalar(log1p_scale, tail.dtype), tail)
    return lax_selection.select(undefined, total, ufuncs.add(amax, tail))


def _logaddexp(x1, x2):
    return _logaddexp_impl(x1, x2, ufuncs.exp, None)


_logaddexp.__name__ = "logaddexp"  # (the custom_jvp_call's name in jaxprs, as JAX's)
_logaddexp = custom_jvp(_logaddexp)


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    x1, x2 = primals
    t1, t2 = tangents
    out = _logaddexp(x1, x2)
    w1 = ufuncs.exp(ufuncs.subtract(_finite_or_zero(x1), _finite_or_zero(out)))
    w2 = ufuncs.exp(ufuncs.subtract(_finite_or_zero(x2), _finite_or_zero(out)))
    return out, ufuncs.add(ufuncs.multiply(t1, w1), ufuncs.multiply(t2, w2))


def _logaddexp2(x1, x2):
    return _logaddexp_impl(x1, x2, ufuncs.exp2, 1 / np.log(2))


_logaddexp2.__name__ = "logaddexp2"
_logaddexp2 = custom_jvp(_logaddexp2)


@_logaddexp2.defjvp
def _logaddexp2_jvp(primals, tangents):
    x1, x2 = primals
    t1, t2 = tangents
    out = _logaddexp2(x1, x2)
    w1 = ufuncs.exp2(ufuncs.subtract(_finite_or_zero(x1), _finite_or_zero(out)))
    w2 = ufuncs.exp2(ufuncs.subtract(_finite_or_zero(x2), _finite_or_zero(out)))
    return out, ufuncs.add(ufuncs.multiply(t1, w1), ufuncs.multiply(t2, w2))


def _logaddexp_in_place(exp, log1p_scale):
    """`_logaddexp_impl`'s steps for real operands, into two arrays: in eager mode each step
    would fill a fresh array, and a fresh 4 MB array costs about as much as a pass over it."""

    def fun(x1, x2):
        out = np.maximum(x1, x2)
        delta = np.subtract(x1, x2)
        nan = np.isnan(delta)  # the composite's `delta != delta`
        np.abs(delta, out=delta)
        np.negative(delta, out=delta)
        exp(delta, out=delta)
        np.log1p(delta, out=delta)
        if log1p_scale is not None:
            np.multiply(delta, delta.dtype.type(log1p_scale), out=delta)
        np.add(out, delta, out=out)
        if nan.any():
            np.copyto(out, np.add(x1, x2), where=nan)
        return out

    return fun


@numpy_namesake(_logaddexp_in_place(np.exp, None), FLOATS)
def logaddexp(x1, x2, /):
    """`log(exp(x1) + exp(x2))` without overflow (integers promote to float)."""
    x1, x2 = promotion.promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(x1, x2)


@numpy_namesake(_logaddexp_in_place(np.exp2, 1 / np.log(2)), FLOATS)
def logaddexp2(x1, x2, /):
    """`log2(2**x1 + 2**x2)` without overflow (integers promote to float)."""
    x1, x2 = promotion.promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp2(x1, x2)


# --------------------------------------------------------------------------------------------
# nan_to_num


def _replace_nonfinite(x, nan, posinf, neginf):
    info = dtypes.finfo(x.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = ufuncs.where(ufuncs.isnan(x), ufuncs.strong_scalar(nan, x.dtype), x)
    out = ufuncs.where(ufuncs.isposinf(out), ufuncs.strong_scalar(posinf, x.dtype), out)
    return ufuncs.where(ufuncs.isneginf(out), ufuncs.strong_scalar(neginf, x.dtype), out)


@jnp_jit
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """`x` with NaN replaced by `nan` and infinities by `posinf`/`neginf` (default: the
    dtype's largest and smallest finite values); complex parts are cleaned separately, other
    dtypes come back unchanged."""
    del copy
    x = asarray_operand("nan_to_num", x)
    if not dtypes.is_inexact(x.dtype):
        return x
    if dtypes.is_complex(x.dtype):
        re = _replace_nonfinite(ufuncs.real(x), nan, posinf, neginf)
        im = _replace_nonfinite(ufuncs.imag(x), nan, posinf, neginf)
        return ufuncs._complex_from_parts(re, im, x.dtype)
    return promotion.convert_element_type(_replace_nonfinite(x, nan, posinf, neginf), x.dtype)


# --------------------------------------------------------------------------------------------
# select, piecewise


def select(condlist, choicelist, default=0):
    """The element of the first `choicelist` entry whose condition holds, else `default`
    (all broadcast together): a chain of `where`s applied from the last condition back."""
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})"
        )
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist, strict=True))):
        out = ufuncs.where(cond, choice, out)
    return out


def _vectorized_call(fun, x, args, kw):
    """`fun` applied to each element of `x` separately (vmapped over the flattened array), as
    JAX's piecewise calls its functions on scalars."""
    flat = manipulation.ravel(x)
    if flat.shape[0] == 0:
        return x
    out = vmap.vmap(lambda e: asarray_operand("piecewise", fun(e, *args, **kw)))(flat)
    return manipulation.reshape(out, x.shape)


def piecewise(x, condlist, funclist, *args, **kw):
    """`funclist[i](x)` where `condlist[i]` holds (the last true condition wins), an extra
    trailing function (or constant) where none holds, else 0; results take `x`'s dtype."""
    x = asarray_operand("piecewise", x)
    # An array of conditions is a list of its rows (JAX does not wrap a single condition array
    # of x's rank as NumPy does).
    rows = [condlist[i] for i in range(len(condlist))]
    conds = [manipulation.broadcast_to(asarray_operand("piecewise", c), x.shape) for c in rows]
    nc, nf = len(conds), len(funclist)
    if nf not in (nc, nc + 1):
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )

    def value(f):
        if callable(f):
            out = _vectorized_call(f, x, args, kw)
        else:
            out = creation.full(x.shape, f, x.dtype)
        return promotion.convert_element_type(out, x.dtype)

    if nf == nc + 1:
        out = value(funclist[-1])
    else:
        out = creation.zeros_like(x)
    for cond, f in zip(conds, funclist, strict=False):
        if cond.dtype != np.bool_:
            cond = ufuncs.not_equal(cond, ufuncs.zero_like_scalar(cond))
        out = ufuncs.where(cond, value(f), out)
    return out


# --------------------------------------------------------------------------------------------
# products


@jnp_jit
def kron(a, b):
    """The Kronecker product: blocks `a[i, j] * b`, rank-padded to the larger operand."""
    a, b = promotion.promote_dtypes(asarray_operand("kron", a), asarray_operand("kron", b, 1))
    if a.dtype == np.bool_:
        raise TypeError("kron does not accept dtype bool (JAX's lax.mul needs a numeric dtype)")
    rank = builtins.max(a.ndim, b.ndim)
    a = lax_shapes.reshape(a, (1,) * (rank - a.ndim) + a.shape)
    b = lax_shapes.reshape(b, (1,) * (rank - b.ndim) + b.shape)
    # a at the even axes, b at the odd ones: the product's (2i, 2i+1) axes merge into one.
    a_spread = manipulation.expand_dims(a, tuple(range(1, 2 * rank, 2)))
    b_spread = manipulation.expand_dims(b, tuple(range(0, 2 * rank, 2)))
    out = ufuncs.multiply(a_spread, b_spread)
    return lax_shapes.reshape(out, tuple(p * q for p, q in zip(a.shape, b.shape, strict=True)))


def _components(x):
    return [manipulation.squeeze(x[..., i : i + 1], -1) for i in range(x.shape[-1])]


@jnp_jit(static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-vectors along `axisa`/`axisb` (2-vectors are taken with a
    zero z component; two 2-vectors give only the z component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promotion.promote_dtypes(asarray_operand("cross", a), asarray_operand("cross", b, 1))
    a = manipulation.moveaxis(a, axisa, -1)
    b = manipulation.moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    ca, cb = _components(a), _components(b)
    sub, mul = ufuncs.subtract, ufuncs.multiply
    if len(ca) == 2 and len(cb) == 2:
        return sub(mul(ca[0], cb[1]), mul(ca[1], cb[0]))
    if len(ca) == 2:
        ca.append(None)
    if len(cb) == 2:
        cb.append(None)

    def term(i, j):
        # ca[i] * cb[j], a missing (zero) component making the whole product zero.
        if ca[i] is None or cb[j] is None:
            return None
        return mul(ca[i], cb[j])

    def diff(p, q):
        if p is None and q is None:
            return ufuncs.zero_like_scalar(ca[0])
        if q is None:
            return p
        return ufuncs.negative(q) if p is None else sub(p, q)

    parts = [
        diff(term(1, 2), term(2, 1)),
        diff(term(2, 0), term(0, 2)),
        diff(term(0, 1), term(1, 0)),
    ]
    shape = promotion.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    parts = [manipulation.broadcast_to(p, shape) for p in parts]
    out = manipulation.stack(parts, 0)
    return manipulation.moveaxis(out, 0, axisc)


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients `p` (highest power first) at `x`, by Horner's rule."""
    del unroll
    p, x = promotion.promote_dtypes(asarray_operand("polyval", p), asarray_operand("polyval", x, 1))
    if p.ndim != 1:
        raise ValueError(f"polyval: p must be one-dimensional, got shape {p.shape}")
    y = creation.zeros(x.shape, x.dtype)  # strongly typed, as JAX's accumulator
    for i in range(p.shape[0]):
        y = ufuncs.add(ufuncs.multiply(y, x), p[i])
    return y


# --------------------------------------------------------------------------------------------
# interp


def _sorted_periodic(xp, fp, period):
    """`xp` folded into [0, period) and sorted (with `fp`), then extended by one point on each
    side so that every x in [0, period) lies between two breakpoints."""
    xp = arithmetic.remainder(xp, period)
    xp, fp = lax_sort.sort((xp, fp), 0, True, 1)
    n = xp.shape[0]
    xp = manipulation.concatenate(
        [ufuncs.subtract(xp[n - 1 :], period), xp, ufuncs.add(xp[:1], period)]
    )
    fp = manipulation.concatenate([fp[n - 1 :], fp, fp[:1]])
    return xp, fp


def _extrapolates(name: str, value) -> bool:
    if isinstance(value, str):
        if value != "extrapolate":
            raise ValueError(
                f"the only valid string value of `{name}` is 'extrapolate', but got: {value!r}"
            )
        return True
    return False


def interp(x, xp, fp, left=None, right=None, period=None):
    """The piecewise-linear interpolant through (`xp`, `fp`) at `x`; `left`/`right` (default
    `fp[0]`/`fp[-1]`, or 'extrapolate' to continue the end segments) outside the range, or a
    periodic interpolant with `period`."""
    x = asarray_operand("interp", x)
    xp = asarray_operand("interp", xp, 1)
    fp = asarray_operand("interp", fp, 2)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape[0] != fp.shape[0]:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    if xp.shape[0] == 0:
        raise ValueError("xp and fp must not be empty")
    if dtypes.is_complex(x.dtype) or dtypes.is_complex(xp.dtype):
        raise ValueError("jnp.interp: complex x values not supported.")
    x, xp = promotion.promote_dtypes_inexact(x, xp)
    (fp,) = promotion.promote_dtypes_inexact(fp)
    x = promotion.convert_element_type(x, x.dtype)
    if period is not None:
        period = ufuncs.absolute(promotion.convert_element_type(period, x.dtype))
        x = arithmetic.remainder(x, period)
        xp, fp = _sorted_periodic(xp, fp, period)
    shape, x = x.shape, manipulation.ravel(x)  # (`take` of a 0-d index is not yet 0-d)
    n = xp.shape[0]
    # searchsorted(xp, x, side="right"): the number of breakpoints at or below x.
    below = ufuncs.less_equal(xp, manipulation.expand_dims(x, -1))
    count = reductions.sum(below, axis=-1, dtype=dtypes.default_int_dtype())
    i = ufuncs.clip(count, 1, builtins.max(n - 1, 1))
    i0 = ufuncs.subtract(i, 1)
    if n == 1:
        i = i0
    take = advanced_indexing.take
    fp_hi, fp_lo, xp_hi, xp_lo = take(fp, i), take(fp, i0), take(xp, i), take(xp, i0)
    dx = ufuncs.subtract(xp_hi, xp_lo)
    epsilon = np.spacing(np.finfo(x.dtype).eps)
    flat = ufuncs.less_equal(ufuncs.absolute(dx), epsilon)
    slope_dx = ufuncs.where(flat, ufuncs.one_like_scalar(dx), dx)
    step = ufuncs.multiply(
        ufuncs.true_divide(ufuncs.subtract(x, xp_lo), slope_dx), ufuncs.subtract(fp_hi, fp_lo)
    )
    f = ufuncs.where(flat, fp_lo, ufuncs.add(fp_lo, step))
    if period is None:
        # Outside [xp[0], xp[-1]] the end segments' formula above already extrapolates; other
        # values replace it.
        if not _extrapolates("left", left):
            low = fp[0] if left is None else left
            f = ufuncs.where(ufuncs.less(x, xp[0]), low, f)
        if not _extrapolates("right", right):
            high = fp[n - 1] if right is None else right
            f = ufuncs.where(ufuncs.greater(x, xp[n - 1]), high, f)
    return manipulation.reshape(promotion.convert_element_type(f, f.dtype), shape)


# --------------------------------------------------------------------------------------------
# convolve, correlate


def _convolve_full(a, v, precision, preferred_element_type):
    """The full 1-D convolution `c[k] = sum_j a[j] v[k - j]`: the windows of `a` padded with
    `len(v) - 1` zeros on each side, gathered as a Toeplitz matrix (a static index table), times
    `v` reversed."""
    n, m = a.shape[0], v.shape[0]
    padded = padding.pad(a, (m - 1, m - 1))
    windows = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    table = advanced_indexing.take(padded, windows.astype(np.int32), axis=0, mode="clip")
    return products.matmul(
        table,
        manipulation.flip(v, 0),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _convolution(name, a, v, mode, precision, preferred_element_type, conjugate_reverse):
    a = asarray_operand(name, a)
    v = asarray_operand(name, v, 1)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {a.shape} and {v.shape}.")
    a, v = promotion.promote_dtypes_inexact(a, v)
    if conjugate_reverse:  # correlate(a, v) is convolve(a, conj(v)[::-1])
        v = manipulation.flip(ufuncs.conjugate(v), 0)
    full = _convolve_full(a, v, precision, preferred_element_type)
    if a.weak_type and v.weak_type:  # a convolution of weak operands stays weak in JAX
        full = promotion.convert_element_type(full, full.dtype, True)
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return full
    if mode == "same":
        # Centred on the longer input; NumPy's correlate rounds the other way when v is longer.
        shorter = builtins.min(n, m) - 1
        start = shorter - shorter // 2 if conjugate_reverse and n < m else shorter // 2
        return full[start : start + builtins.max(n, m)]
    if mode == "valid":
        start = builtins.min(n, m) - 1
        return full[start : start + builtins.max(n, m) - builtins.min(n, m) + 1]
    raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-D arrays; `mode` 'full' (every overlap),
    'same' (the length of the longer input, centred) or 'valid' (complete overlaps only)."""
    return _convolution("convolve", a, v, mode, precision, preferred_element_type, False)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation `c[k] = sum_n a[n + k] * conj(v[n])` of two 1-D arrays, with
    `convolve`'s modes (default 'valid')."""
    return _convolution("correlate", a, v, mode, precision, preferred_element_type, True)


# --------------------------------------------------------------------------------------------
# complex numbers


@jnp_jit(static_argnames=("deg",))
def angle(z, deg=False):
    """The argument of `z` (`atan2(imag, real)`), in radians or, with `deg`, degrees; integer
    inputs and real floating scalars are computed in the default float type."""
    z = asarray_operand("angle", z)
    re, im = ufuncs.real(z), ufuncs.imag(z)
    dtype = re.dtype
    if not dtypes.is_inexact(dtype) or (dtypes.is_float(z.dtype) and z.ndim == 0):
        dtype = dtypes.default_float_dtype()
        re = promotion.convert_element_type(re, dtype)
        im = promotion.convert_element_type(im, dtype)
    result = ufuncs.arctan2(im, re)
    return ufuncs.degrees(result) if deg else result


@jnp_jit
def iscomplex(x):
    """True where the imaginary part is nonzero (never for real dtypes)."""
    im = ufuncs.imag(asarray_operand("iscomplex", x))
    return lax_comparison.ne(im, ufuncs.constant_like(im, 0))


@jnp_jit
def isreal(x):
    """True where the imaginary part is zero (always for real dtypes)."""
    im = ufuncs.imag(asarray_operand("isreal", x))
    return lax_comparison.eq(im, ufuncs.constant_like(im, 0))


def iscomplexobj(x) -> bool:
    """Whether `x` has a complex dtype (or is a complex scalar), whatever its values."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    dtype = x.dtype if hasattr(x, "dtype") else creation.asarray(x).dtype
    return dtypes.is_complex(np.dtype(dtype))


def isrealobj(x) -> bool:
    """Whether `x` does not have a complex dtype."""
    return not iscomplexobj(x)


def isscalar(element) -> bool:
    """Whether `element` is a scalar: a Python or NumPy scalar, or a 0-d array (unlike NumPy,
    JAX counts 0-d arrays, tracers included)."""
    if np.isscalar(element):
        return True
    if hasattr(element, "ndim") and hasattr(element, "dtype"):
        return element.ndim == 0
    return False


def iterable(y) -> bool:
    """Whether `iter(y)` works (NumPy's `iterable`)."""
    return np.iterable(y)


@jnp_jit
def sort_complex(a):
    """`a` sorted along its last axis, as a complex array."""
    a = lax_sort.sort(asarray_operand("sort_complex", a), -1)
    inexact = promotion.to_inexact_dtype(a.dtype)
    if dtypes.is_complex(inexact):
        complex_dtype = inexact
    else:
        complex_dtype = np.dtype(np.complex128 if inexact == np.float64 else np.complex64)
    return promotion.convert_element_type(a, complex_dtype, a.weak_type)


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """`p` with jumps between neighbours along `axis` larger than `discont` (default
    `period / 2`) replaced by their complement modulo `period`."""
    p, period = promotion.promote_dtypes(
        asarray_operand("unwrap", p), promotion.to_operand("unwrap", period, 3)
    )
    if dtypes.is_complex(p.dtype):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.ndim == 0:
        raise IndexError("jnp.unwrap: a zero-dimensional array has no axis to unwrap along")
    axis = manipulation.normalize_axis(axis, p.ndim)
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = ufuncs.divide(period, 2)
    if dtypes.is_int(p.dtype):
        interval = arithmetic.floor_divide(period, 2)
    else:
        interval = ufuncs.divide(period, 2)
    dd = lib.diff(p, axis=axis)
    ddmod = ufuncs.subtract(arithmetic.mod(ufuncs.add(dd, interval), period), interval)
    at_minus_interval = ufuncs.logical_and(
        ufuncs.equal(ddmod, ufuncs.negative(interval)), ufuncs.greater(dd, 0)
    )
    ddmod = ufuncs.where(at_minus_interval, interval, ddmod)
    correction = ufuncs.where(
        ufuncs.less(ufuncs.absolute(dd), discont), 0, ufuncs.subtract(ddmod, dd)
    )
    head = lax_slicing.slice_in_dim(p, 0, 1, axis=axis)
    tail = lax_slicing.slice_in_dim(p, 1, p.shape[axis], axis=axis)
    tail = ufuncs.add(tail, reductions.cumsum(correction, axis=axis))
    return manipulation.concatenate((head, tail), axis=axis)


# --------------------------------------------------------------------------------------------
# gcd, lcm


def _gcd_continues(pair):
    return reductions.any(ufuncs.not_equal(pair[1], 0))


def _gcd_step(pair):
    a, b = pair
    nonzero = ufuncs.not_equal(b, 0)
    a, b = (
        ufuncs.where(nonzero, b, a),
        ufuncs.where(nonzero, arithmetic.fmod(a, b), ufuncs.constant_like(b, 0)),
    )
    swap = ufuncs.less(a, b)
    return ufuncs.where(swap, b, a), ufuncs.where(swap, a, b)


def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2| (integers only; gcd(0, 0) is 0)."""
    x1, x2 = promotion.promote_dtypes(asarray_operand("gcd", x1), asarray_operand("gcd", x2, 1))
    if not dtypes.is_int(x1.dtype):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = manipulation.broadcast_arrays(x1, x2)
    divisor, _ = loops.while_loop(
        _gcd_continues, _gcd_step, (ufuncs.absolute(x1), ufuncs.absolute(x2))
    )
    return divisor


def lcm(x1, x2):
    """The least common multiple of |x1| and |x2| (integers only; 0 if either is 0)."""
    x1, x2 = promotion.promote_dtypes(asarray_operand("lcm", x1), asarray_operand("lcm", x2, 1))
    x1, x2 = ufuncs.absolute(x1), ufuncs.absolute(x2)
    if not dtypes.is_int(x1.dtype):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    return ufuncs.where(
        ufuncs.equal(d, 0),
        ufuncs.constant_like(d, 0),
        ufuncs.multiply(x1, arithmetic.floor_divide(x2, d)),
    )


# --------------------------------------------------------------------------------------------
# packbits, unpackbits

_U8 = np.dtype(np.uint8)


def _check_bitorder(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")


def _bit_weights(bitorder):
    """The shift of each of a byte's 8 lanes: lane 0 holds the most significant bit for 'big'."""
    shifts = np.arange(8, dtype=np.uint8)
    return creation.asarray(shifts[::-1] if bitorder == "big" else shifts)


def packbits(a, axis=None, bitorder="big"):
    """The truth values of `a` (integer or bool) packed eight to a uint8 along `axis` (the
    flattened array when None), the last byte padded with zeros."""
    arr = asarray_operand("packbits", a)
    if not (dtypes.is_int(arr.dtype) or arr.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    _check_bitorder(bitorder)
    arr = promotion.convert_element_type(ufuncs.not_equal(arr, 0), _U8)
    if axis is None:
        arr, axis = manipulation.ravel(arr), 0
    arr = manipulation.swapaxes(arr, axis, -1)
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = padding.pad(arr, [(0, 0)] * (arr.ndim - 1) + [(0, 8 - remainder)])
    arr = manipulation.reshape(arr, arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    shifted = ufuncs.left_shift(arr, _bit_weights(bitorder))
    packed = promotion.convert_element_type(reductions.sum(shifted, axis=-1), _U8)
    return manipulation.swapaxes(packed, axis, -1)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 array `a` as 0/1 uint8 values along `axis` (the flattened array
    when None), cut or zero-padded to `count` bits."""
    arr = asarray_operand("unpackbits", a)
    if arr.dtype != _U8:
        raise TypeError("Expected an input array of unsigned byte data type")
    _check_bitorder(bitorder)
    bits = ufuncs.left_shift(ufuncs.strong_scalar(1, _U8), _bit_weights(bitorder))
    if axis is None:
        arr, axis = manipulation.ravel(arr), 0
    arr = manipulation.swapaxes(arr, axis, -1)
    masked = ufuncs.bitwise_and(manipulation.expand_dims(arr, -1), bits)
    unpacked = promotion.convert_element_type(ufuncs.greater(masked, 0), _U8)
    unpacked = manipulation.reshape(unpacked, unpacked.shape[:-2] + (-1,))
    if count is not None:
        if count > unpacked.shape[-1]:
            widths = [(0, 0)] * (unpacked.ndim - 1) + [(0, count - unpacked.shape[-1])]
            unpacked = padding.pad(unpacked, widths)
        else:
            unpacked = unpacked[..., :count]
    return manipulation.swapaxes(unpacked, axis, -1)


# --------------------------------------------------------------------------------------------
# matvec, vecmat


def matvec(x1, x2, /):
    """Matrix-vector products over the stacked leading axes: (..., n, m) @ (..., m)."""
    x1, x2 = asarray_operand("matvec", x1), asarray_operand("matvec", x2, 1)
    return lib_vectorize.vectorize(products.matmul, signature="(n,m),(m)->(n)")(x1, x2)


def vecmat(x1, x2, /):
    """Vector-matrix products over the stacked leading axes: conj(..., n) @ (..., n, m)."""
    x1, x2 = asarray_operand("vecmat", x1), asarray_operand("vecmat", x2, 1)
    product = lib_vectorize.vectorize(products.matmul, signature="(n),(n,m)->(m)")
    return product(ufuncs.conjugate(x1), x2)


# --------------------------------------------------------------------------------------------
# cumulative_sum, cumulative_prod
