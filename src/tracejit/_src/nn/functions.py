"""`tracejit.nn`: activation functions, softmax, logsumexp, one_hot and standardize.

Everything here is a composite of `jnp` and `lax` operations: there are no new primitives, so
every transformation (grad, vmap, jit) works through the operations' own rules. Three things
need more than a formula:

- **Kinks.** Autodiff of `max(x, 0)` gives the average of the two one-sided slopes at a tie
  (1/2 at 0), but JAX defines relu'(0) = 0 (and relu6'(0) = relu6'(6) = 0), so `relu` and
  `relu6` are `custom_jvp` functions whose rule selects the tangent only strictly inside the
  linear piece.
- **Overflow.** softplus, log_sigmoid, logsumexp and the softmaxes shift by a maximum first, so
  that `exp` never overflows; softplus' derivative is given as sigmoid(x) by a custom rule,
  which stays finite (0 or 1) at +-inf where the formula's own derivative would be inf - inf.
- **Dtypes.** The formulas are written as JAX writes them (Python scalars where JAX uses Python
  scalars, NumPy constants where it uses them) so that dtypes and weak types come out the same:
  `relu(2)` is a weak int32, `gelu(2.0)` a strong float32.

`logsumexp` lives here and `tracejit.scipy.special` re-exports it.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dtypes
from tracejit._src.custom_derivatives import custom_jvp
from tracejit._src.lax import arrays as lax_arrays
from tracejit._src.lax import elementwise as lax_elementwise
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import special as lax_special
from tracejit._src.lax.shapes import broadcasted_iota, stop_gradient
from tracejit._src.numpy import reductions as jnp_reductions
from tracejit._src.numpy import ufuncs as jnp_ufuncs
from tracejit._src.numpy.creation import array, asarray, zeros_like
from tracejit._src.numpy.jitted import jnp_jit
from tracejit._src.numpy.lib_math import logaddexp
from tracejit._src.numpy.manipulation import (
    broadcast_to,
    expand_dims,
    normalize_axis,
    normalize_axis_tuple,
    split,
)
from tracejit._src.numpy.promotion import asarray_operand, promote_args_inexact

jnp_max, jnp_sum, jnp_mean = jnp_reductions.max, jnp_reductions.sum, jnp_reductions.mean
jnp_where, maximum, minimum = jnp_ufuncs.where, jnp_ufuncs.maximum, jnp_ufuncs.minimum
exp, expm1, log, log1p = jnp_ufuncs.exp, jnp_ufuncs.expm1, jnp_ufuncs.log, jnp_ufuncs.log1p
tanh = jnp_ufuncs.tanh


def _operand(name, x):
    """`x` as an Array or tracer, Python scalars weakly typed (JAX's `check_arraylike`)."""
    return asarray_operand(name, x)


# --------------------------------------------------------------------------------------------
# Rectifiers: piecewise-linear, with JAX's derivative conventions at the kinks


@custom_jvp
@jnp_jit
def relu(x):
    r"""Rectified linear unit :math:`\max(x, 0)`.

    Its derivative at 0 is 0 (not the 1/2 that autodiff of `max` would give), as in JAX: the
    subgradient 0 keeps "dead" units dead and makes relu(x) - relu(-x) = x differentiate to 1.
    """
    return maximum(_operand("relu", x), 0)


relu.defjvps(lambda g, ans, x: lax_selection.select(x > 0, g, zeros_like(g)))


@custom_jvp
@jnp_jit
def relu6(x):
    r"""Rectified linear unit capped at 6: :math:`\min(\max(x, 0), 6)`.

    Derivative 0 at both kinks (0 and 6), the convention JAX takes (see `relu`).
    """
    return minimum(maximum(_operand("relu6", x), 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax_selection.select((x > 0) & (x < 6), g, zeros_like(g)))


@jnp_jit
def leaky_relu(x, negative_slope=1e-2):
    r"""Leaky rectifier: `x` where :math:`x \ge 0`, `negative_slope * x` elsewhere (slope 1 at
    0)."""
    x = _operand("leaky_relu", x)
    return jnp_where(x >= 0, x, negative_slope * x)


@jnp_jit
def hard_tanh(x):
    r"""`x` clipped to [-1, 1] (derivative 1 at the ends, since `where` keeps `x` there)."""
    x = _operand("hard_tanh", x)
    return jnp_where(x > 1, 1, jnp_where(x < -1, -1, x))


def hard_sigmoid(x):
    r"""Piecewise-linear sigmoid :math:`\mathrm{relu6}(x + 3) / 6`."""
    return relu6(_operand("hard_sigmoid", x) + 3.0) / 6.0


def hard_silu(x):
    r"""Hard SiLU (hard swish) :math:`x \cdot \mathrm{hard\_sigmoid}(x)`."""
    x = _operand("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def sparse_sigmoid(x):
    r"""Piecewise-linear sigmoid :math:`\mathrm{clip}(x + 1, 0, 2) / 2` (0 below -1, 1 above 1),
    the derivative of `sparse_plus`; slope 1/4 at the kinks (the clip's tie convention)."""
    x = _operand("sparse_sigmoid", x)
    return 0.5 * jnp_ufuncs.clip(x + 1.0, 0.0, 2.0)


# --------------------------------------------------------------------------------------------
# Smooth activations


def sigmoid(x):
    r"""Logistic sigmoid :math:`1 / (1 + e^{-x})` (`lax.logistic`: floating-point input only)."""
    return lax_elementwise.logistic(_operand("sigmoid", x))


@jnp_jit
def softplus(x):
    r"""Softplus :math:`\log(1 + e^x)` as `logaddexp(x, 0)` (as JAX computes it), which never
    overflows and whose derivative is sigmoid(x), exactly 0 at -inf and 1 at +inf."""
    return logaddexp(_operand("softplus", x), 0)


@jnp_jit
def log_sigmoid(x):
    r"""Log-sigmoid :math:`\log \sigma(x) = -\mathrm{softplus}(-x)`, stable for large
    :math:`|x|`."""
    x = _operand("log_sigmoid", x)
    return -softplus(-x)


@jnp_jit
def silu(x):
    r"""SiLU (swish) :math:`x \cdot \sigma(x)`."""
    x = _operand("silu", x)
    return x * sigmoid(x)


swish = silu


def soft_sign(x):
    r"""Soft sign :math:`x / (|x| + 1)`."""
    x = _operand("soft_sign", x)
    return x / (jnp_ufuncs.abs(x) + 1)


def squareplus(x, b=4):
    r"""Squareplus :math:`(x + \sqrt{x^2 + b}) / 2`, a smooth rectifier without `exp`."""
    x = _operand("squareplus", x)
    return (x + jnp_ufuncs.sqrt(jnp_ufuncs.square(x) + b)) / 2


def sparse_plus(x):
    r"""Sparse plus: 0 for :math:`x \le -1`, `x` for :math:`x \ge 1`, :math:`(x+1)^2/4`
    between (continuously differentiable)."""
    x = _operand("sparse_plus", x)
    return jnp_where(x <= -1.0, 0.0, jnp_where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jnp_jit
def elu(x, alpha=1.0):
    r"""Exponential linear unit: `x` for :math:`x > 0`, :math:`\alpha (e^x - 1)` elsewhere.

    `expm1` sees 0 instead of positive `x`, so a large positive `x` cannot overflow into the
    unused branch (whose inf would poison gradients through `where`).
    """
    x = _operand("elu", x)
    return jnp_where(x > 0, x, alpha * expm1(jnp_where(x > 0, 0.0, x)))


@jnp_jit
def celu(x, alpha=1.0):
    r"""Continuously differentiable ELU :math:`\max(x, 0) + \alpha(e^{\min(x, 0)/\alpha} - 1)`."""
    x = _operand("celu", x)
    return maximum(x, 0.0) + alpha * expm1(minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@jnp_jit
def selu(x):
    r"""Scaled ELU :math:`\lambda\, \mathrm{elu}(x, \alpha)` with the self-normalizing constants
    :math:`\alpha \approx 1.6733`, :math:`\lambda \approx 1.0507`."""
    return _SELU_SCALE * elu(_operand("selu", x), _SELU_ALPHA)


def gelu(x, approximate: bool = True):
    r"""Gaussian error linear unit :math:`x \Phi(x)`.

    `approximate=True` uses the tanh form
    :math:`x/2 \cdot (1 + \tanh(\sqrt{2/\pi}(x + 0.044715 x^3)))`; `approximate=False` the exact
    :math:`x/2 \cdot \mathrm{erfc}(-x/\sqrt2)` (erfc, unlike 1 + erf, keeps its relative accuracy
    for very negative `x`). The constants have `x`'s dtype, so a Python scalar input gives a
    strongly typed result, as in JAX.
    """
    x = _operand("gelu", x)
    (x,) = promote_args_inexact("gelu", x)
    dtype = x.dtype
    if approximate:
        sqrt_2_over_pi = np.asarray(np.sqrt(2 / np.pi), dtype=dtype)
        cdf = 0.5 * (1.0 + tanh(sqrt_2_over_pi * (x + 0.044715 * (x**3))))
        return x * cdf
    sqrt_half = np.asarray(np.sqrt(0.5), dtype=dtype)
    return array(0.5 * x * lax_special.erfc(-x * sqrt_half), dtype=dtype)


def mish(x):
    r"""Mish :math:`x \tanh(\mathrm{softplus}(x))`."""
    x = _operand("mish", x)
    return x * tanh(softplus(x))


@custom_jvp
def _log1mexp(x):
    return jnp_where(x > np.log(2), log1p(-exp(-x)), log(-expm1(-x)))


# d/dx log(1 - e^-x) = 1 / (e^x - 1). Differentiating the `where` instead would give NaN at 0,
# where the unused branch's infinite slope meets a zero cotangent.
_log1mexp.defjvps(lambda g, ans, x: g / expm1(x))


def log1mexp(x):
    r""":math:`\log(1 - e^{-x})` for :math:`x \ge 0`, accurate at both ends.

    For :math:`x > \log 2`, `log1p(-exp(-x))` (1 - e^-x near 1); below, `log(-expm1(-x))`
    (1 - e^-x near 0, where `1 - exp` would cancel). -inf at 0 (slope +inf), NaN for x < 0.
    """
    return _log1mexp(_operand("log1mexp", x))


@jnp_jit(static_argnames=("axis",))
def glu(x, axis: int = -1):
    r"""Gated linear unit: `x` split in halves `a, b` along `axis`, then :math:`a\,\sigma(b)`."""
    x = _operand("glu", x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"axis size must be divisible by 2, got {size}")
    x1, x2 = split(x, 2, axis)
    return x1 * sigmoid(x2)


def identity(x):
    """The identity, `x` as an array (activation placeholder)."""
    return asarray(_operand("identity", x))


# --------------------------------------------------------------------------------------------
# Normalizing exponentials


def _promote_inexact(name, *args):
    return promote_args_inexact(name, *[_operand(name, a) for a in args])


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    r""":math:`\log \sum_i b_i e^{a_i}` over `axis`, without overflow.

    The inputs are shifted by their (masked) maximum, held constant for differentiation (the
    result does not depend on it); an infinite maximum is replaced by 0 so that all -inf inputs
    give -inf, not NaN. With `b`, the sum may be negative: `return_sign=True` returns
    `(log|sum|, sign(sum))`, otherwise a negative sum gives NaN; entries whose b is 0 count as
    -inf, as in JAX (so they neither set the shift nor send NaN into the gradient). `where`
    masks entries out. Complex `a` is shifted by its largest real part; the result is the
    complex log of the sum (with `return_sign`, log|sum| and sum / |sum|), as JAX's.
    """
    if b is not None:
        a, b = _promote_inexact("logsumexp", a, b)
    else:
        (a,) = _promote_inexact("logsumexp", a)
    if where is not None:
        a = jnp_where(where, a, 0)
    if b is not None:
        a = jnp_where(b != 0, a, -np.inf)
    ndim = a.ndim
    axes = tuple(range(ndim)) if axis is None else normalize_axis_tuple(axis, ndim)
    is_complex = dtypes.is_complex(a.dtype)
    shift_by = jnp_ufuncs.real(a) if is_complex else a
    amax = jnp_max(shift_by, axis=axes, keepdims=keepdims, where=where, initial=-np.inf)
    finite = lax_elementwise.is_finite(amax)
    amax = stop_gradient(lax_selection.select(finite, amax, lax_arrays.full_like(amax, 0)))
    exp_a = exp(a - (amax if keepdims else expand_dims(amax, axes)))
    if b is not None:
        exp_a = exp_a * b
    sumexp = jnp_sum(exp_a, axis=axes, keepdims=keepdims, where=where)
    if is_complex:
        if not return_sign:
            return log(sumexp) + amax
        magnitude = jnp_ufuncs.abs(sumexp)
        return log(magnitude) + amax, sumexp / magnitude
    sign = jnp_ufuncs.sign(sumexp)
    sumexp = jnp_ufuncs.abs(sumexp)
    out = log(sumexp) + amax
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp_where(sign < 0, np.asarray(np.nan, out.dtype), out)
    return out


def logmeanexp(x, axis=None, where=None, keepdims=False):
    r""":math:`\log(\frac{1}{n} \sum_i e^{x_i})` over `axis` (n counts the unmasked entries)."""
    (x,) = _promote_inexact("logmeanexp", x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    if where is None:
        axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
        count = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
        return lse - np.log(np.asarray(count, dtype=x.dtype))
    mask = broadcast_to(asarray(where, dtype=bool), x.shape)
    count = jnp_sum(mask, axis=axis, keepdims=keepdims, dtype=x.dtype)
    return lse - log(count)


def _not_bool(name: str, x):
    """`x`, not a boolean array: JAX's softmaxes subtract the maximum from booleans, a
    TypeError (a scalar fails the axis first)."""
    if np.ndim(x) and np.result_type(x) == np.bool_:
        raise TypeError(
            f"{name}: sub does not accept dtype bool at position 0. Accepted dtypes at position "
            "0 are subtypes of integer, floating, complexfloating."
        )
    return x


def _max_for_shift(x, axis, where):
    """The (masked) maximum along `axis`, kept as a dimension, held constant for gradients."""
    x_max = jnp_max(x, axis, keepdims=True, where=where, initial=-np.inf)
    return stop_gradient(x_max)


def softmax(x, axis=-1, where=None):
    r"""Softmax :math:`e^{x_i} / \sum_j e^{x_j}` along `axis`.

    Shifted by the maximum (held constant: softmax is shift-invariant) so that `exp` cannot
    overflow. Entries masked out by `where` are 0 and get no gradient. A slice whose entries are
    all -inf (or masked) has no distribution: its result is NaN, as in JAX.
    """
    (x,) = _promote_inexact("softmax", _not_bool("softmax", x))
    if where is not None:
        x = jnp_where(where, x, -np.inf)
    x_max = _max_for_shift(x, axis, where)
    unnormalized = exp(x - x_max)
    if where is not None:
        unnormalized = jnp_where(where, unnormalized, 0.0)
    result = unnormalized / jnp_sum(unnormalized, axis, keepdims=True)
    if where is not None:
        result = jnp_where(where, result, 0)
    return result


@jnp_jit(static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
    r"""Log-softmax :math:`x_i - \log \sum_j e^{x_j}` along `axis`, computed from the shifted
    `x` (never `log(softmax(x))`, which underflows to -inf). Masked entries are -inf, and they
    are replaced by -inf before anything else, so that they get no gradient (a slice masked
    whole has NaNs inside, which that replacement's transpose drops), as in JAX."""
    (x,) = _promote_inexact("log_softmax", _not_bool("log_softmax", x))
    x_max = jnp_max(x, axis, keepdims=True, where=where, initial=-np.inf)
    if where is not None:
        x = jnp_where(where, x, -np.inf)
    shifted = x - stop_gradient(x_max)
    shifted_lse = log(jnp_sum(exp(shifted), axis, keepdims=True, where=where))
    result = shifted - shifted_lse
    if where is not None:
        result = jnp_where(where, result, -np.inf)
    return result


# --------------------------------------------------------------------------------------------
# Encodings and normalization


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    r"""One-hot encoding: a new axis of length `num_classes` (at position `axis` of the result)
    holding 1 where its index equals `x`. Out-of-range classes give all zeros.

    `dtype` defaults to the default float type (float32, float64 with x64).
    """
    try:
        num_classes = int(num_classes)
    except TypeError as e:
        raise TypeError(
            "one_hot: num_classes must be a concrete Python integer (it is the size of the new "
            f"axis), got {num_classes!r}"
        ) from e
    dtype = dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)
    x = _operand("one_hot", x)
    return _one_hot(x, num_classes, dtype=dtype, axis=normalize_axis(axis, x.ndim + 1))


@jnp_jit(static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes, *, dtype, axis):
    lhs = expand_dims(x, axis)
    shape = [1] * (x.ndim + 1)
    shape[axis] = num_classes
    return asarray(lhs == broadcasted_iota(x.dtype, tuple(shape), axis), dtype=dtype)


@jnp_jit(static_argnames=("axis", "algorithm"))
def standardize(
    x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"
):
    r"""Zero mean and unit variance along `axis`: :math:`(x - \mu) / \sqrt{\sigma^2 +
    \epsilon}`.

    `mean` and `variance` default to the (masked) statistics of `x`. `algorithm="fast"` computes
    the variance as :math:`E[x^2] - \mu^2`, clipped at 0 (one pass, but cancels when the mean
    dominates);
    `"stable"` as :math:`E[(x - \mu)^2]`. `where` masks the statistics only, not the output.
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: algorithm must be 'fast' or 'stable', got {algorithm!r}")
    (x,) = _promote_inexact("standardize", x)
    if mean is None:
        mean = jnp_mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "fast":
            variance = jnp_mean(jnp_ufuncs.square(x), axis, keepdims=True, where=where)
            # Rounding can make the difference slightly negative; clipped, so rsqrt sees >= eps.
            variance = jnp_ufuncs.clip(variance - jnp_ufuncs.square(mean), 0)
        else:
            centered = x - mean
            variance = jnp_mean(jnp_ufuncs.square(centered), axis, keepdims=True, where=where)
    return (x - mean) * lax_elementwise.rsqrt(variance + epsilon)


__all__ = [
    "celu",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]
