"""`einsum` and `einsum_path`: Einstein summation as JAX computes it.

opt_einsum parses the subscripts (explicit or implicit output, ellipses, the interleaved
`einsum(x, [0, 1], y, [1, 2])` form) and orders the work into contractions of one or two
operands (`optimize`: 'auto', True (= 'optimal'), False (left to right), any opt_einsum
strategy, or an explicit path). Each contraction is then staged with lax:

- a letter only one operand has and the result lacks is summed away (`reduce_sum`;
  `reduce_or` for booleans);
- a letter repeated within one operand is a diagonal: the operand is masked to the entries
  where those axes' indices agree (`select` against an `iota` equality) and summed over all
  but one of them (all of them when the letter is contracted away), a trace for 'ii->';
- two operands meet in one `dot_general`: shared letters the result keeps are batch
  dimensions, the others are contracted; a size-1 axis facing a larger one is squeezed first
  (einsum broadcasts such axes);
- a final `transpose` puts the letters in the result's order.

The dtype is the operands' promoted dtype (or `preferred_element_type`), weak only when
every operand is weakly typed, as in JAX.
"""

from __future__ import annotations

import collections

import numpy as np
import opt_einsum

from tracejit._src import dtypes
from tracejit._src.lax import bitwise as lax_bitwise
from tracejit._src.lax import comparison as lax_comparison
from tracejit._src.lax import dot as lax_dot
from tracejit._src.lax import reductions as lax_reductions
from tracejit._src.lax import selection as lax_selection
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import promotion
from tracejit._src.numpy.promotion import asarray_operand


class _Unoptimized(opt_einsum.paths.PathOptimizer):
    """`optimize=False`: contract the operands left to right, as they come."""

    def __call__(self, inputs, *args, **kwargs):
        return [(0, 1)] * (len(inputs) - 1)


def _path_type(optimize):
    if optimize is True:
        return "optimal"
    if optimize is False:
        return _Unoptimized()
    return optimize


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """opt_einsum's contraction path for the einsum (`optimize` as in `einsum`): the path,
    which `einsum(..., optimize=path)` accepts, and a printable description of it."""
    return opt_einsum.contract_path(subscripts, *operands, optimize=_path_type(optimize))


def einsum(
    subscripts,
    /,
    *operands,
    out=None,
    optimize="auto",
    precision=None,
    preferred_element_type=None,
    _dot_general=lax_dot.dot_general,
    out_sharding=None,
):
    """Einstein summation: the sum of products of the operands' elements over the letters
    the result lacks, e.g. `einsum('ij,jk->ik', a, b)` is `a @ b`, `einsum('ii', a)` the
    trace of `a`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if out_sharding is not None:
        raise NotImplementedError("jnp.einsum's out_sharding needs sharding, not built yet.")
    args = (subscripts, *operands)
    operands, contractions = opt_einsum.contract_path(
        *args, einsum_call=True, use_blas=True, optimize=_path_type(optimize)
    )
    operands = [asarray_operand("einsum", x, i) for i, x in enumerate(operands)]
    if preferred_element_type is None:
        dtype, weak = dtypes.result_type(*operands, return_weak_type_flag=True)
    else:
        dtype, weak = dtypes.check_user_dtype(preferred_element_type, "einsum"), False
    contract = _Contraction(dtype, precision, _dot_general)
    for positions, contracted, spec, *_ in contractions:
        inputs, result_names = spec.split("->")
        names = inputs.split(",")
        contracted = sorted(contracted)
        if len(positions) == 1:
            operand = operands.pop(positions[0])
            operand, got = contract.one(operand, names[0], contracted, result_names)
        elif len(positions) == 2:
            lhs, rhs = map(operands.pop, positions)
            operand, got = contract.two(lhs, rhs, *names, contracted, result_names)
        else:
            raise NotImplementedError(
                "jax.numpy.einsum does not support simultaneous contraction of 3 or more "
                "operands. Typically this means you've passed an unsupported path to the "
                "einsum optimize parameter."
            )
        if got != result_names:
            operand = lax_shapes.transpose(operand, tuple(got.index(n) for n in result_names))
        operands.append(operand)
    return promotion.convert_element_type(operands[0], dtype, weak)


def _removechars(s: str, chars) -> str:
    return s.translate(str.maketrans(dict.fromkeys(chars)))


class _Contraction:
    """The steps of one einsum, each returning `(operand, its letters)`; sums are taken in
    the result's dtype when the operand's is narrower."""

    def __init__(self, dtype, precision, dot_general):
        self.dtype, self.precision, self.dot_general = dtype, precision, dot_general

    def sum(self, x, axes):
        if dtypes.result_type(x.dtype, self.dtype) != x.dtype:
            x = promotion.convert_element_type(x, self.dtype, False)
        axes = tuple(axes)
        if x.dtype == np.dtype(bool):
            return lax_reductions.reduce_or(x, axes)
        return lax_reductions.reduce_sum(x, axes)

    def sum_uniques(self, x, names: str, uniques):
        if uniques:
            x = self.sum(x, [names.index(n) for n in uniques])
            names = _removechars(names, uniques)
        return x, names

    def sum_repeats(self, x, names: str, counts, keep_names: str):
        """Diagonals: each letter repeated in `names` reduced to one axis (or none)."""
        for name, count in counts.items():
            if count > 1:
                axes = [i for i, n in enumerate(names) if n == name]
                x = lax_selection.select(_diagonal_mask(x.shape, axes), x, _zeros_like(x))
                if name not in keep_names:
                    x = self.sum(x, axes)
                    names = names.replace(name, "")
                else:
                    x = self.sum(x, axes[:-1])
                    names = names.replace(name, "", count - 1)
        return x, names

    def one(self, x, names: str, contracted, result_names: str):
        counts = collections.Counter(names)
        x, names = self.sum_uniques(x, names, [n for n in contracted if counts[n] == 1])
        return self.sum_repeats(x, names, counts, result_names)

    def two(self, lhs, rhs, lhs_names, rhs_names, contracted, result_names):
        lhs, lhs_names = _squeeze_broadcast(lhs, lhs_names, rhs.shape, rhs_names)
        rhs, rhs_names = _squeeze_broadcast(rhs, rhs_names, lhs.shape, lhs_names)
        lhs_counts = collections.Counter(lhs_names)
        rhs_counts = collections.Counter(rhs_names)
        lhs_uniques = [n for n in contracted if lhs_counts[n] == 1 and rhs_counts[n] == 0]
        lhs, lhs_names = self.sum_uniques(lhs, lhs_names, lhs_uniques)
        rhs_uniques = [n for n in contracted if rhs_counts[n] == 1 and lhs_counts[n] == 0]
        rhs, rhs_names = self.sum_uniques(rhs, rhs_names, rhs_uniques)
        lhs, lhs_names = self.sum_repeats(lhs, lhs_names, lhs_counts, result_names + rhs_names)
        rhs, rhs_names = self.sum_repeats(rhs, rhs_names, rhs_counts, result_names + lhs_names)
        present = set(lhs_names) | set(rhs_names)
        contracted = [n for n in contracted if n in present]
        shared = set(lhs_names) & set(rhs_names)
        batch = "".join(n for n in result_names if n in shared)
        lhs_rest = _removechars(lhs_names, batch + "".join(contracted))
        rhs_rest = _removechars(rhs_names, batch + "".join(contracted))
        lhs_dims = tuple(lhs_names.index(n) for n in contracted), tuple(map(lhs_names.index, batch))
        rhs_dims = tuple(rhs_names.index(n) for n in contracted), tuple(map(rhs_names.index, batch))
        # dot_general's result: batch, then lhs's free axes, then rhs's: swap the operands
        # when that gives the result's order without a transpose.
        if batch + rhs_rest + lhs_rest == result_names:
            lhs, rhs, lhs_dims, rhs_dims = rhs, lhs, rhs_dims, lhs_dims
            names = batch + rhs_rest + lhs_rest
        else:
            names = batch + lhs_rest + rhs_rest
        dimension_numbers = ((lhs_dims[0], rhs_dims[0]), (lhs_dims[1], rhs_dims[1]))
        out = self.dot_general(
            lhs, rhs, dimension_numbers, self.precision, preferred_element_type=self.dtype
        )
        return out, names


def _squeeze_broadcast(x, names: str, other_shape, other_names: str):
    """`x` without its size-1 axes whose letter the other operand has with a larger size
    (einsum broadcasts them)."""
    squeezed = tuple(
        i
        for i, j in enumerate(map(other_names.find, names))
        if x.shape[i] == 1 and j != -1 and other_shape[j] != 1
    )
    if not squeezed:
        return x, names
    kept = "".join(n for i, n in enumerate(names) if i not in squeezed)
    return lax_shapes.squeeze(x, squeezed), kept


def _diagonal_mask(shape, axes):
    """True where the indices along all of `axes` are equal."""
    index_dtype = np.dtype(np.int32)
    first = lax_shapes.broadcasted_iota(index_dtype, shape, axes[0])
    mask = None
    for axis in axes[1:]:
        equal = lax_comparison.eq(first, lax_shapes.broadcasted_iota(index_dtype, shape, axis))
        mask = equal if mask is None else lax_bitwise.and_(mask, equal)
    return mask


def _zeros_like(x):
    zero = promotion.convert_element_type(0, x.dtype, False)
    return lax_shapes.broadcast_in_dim(zero, x.shape, ())
