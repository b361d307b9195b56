"""Products: dot, matmul, vdot, inner, outer, tensordot (einsum is in `einsum.py`).

Each stages one `dot_general` (plus the `squeeze`/`transpose`/`broadcast_in_dim` that NumPy's
shape rules need), as JAX does. Operands are not converted to a common dtype first: the
result's dtype is passed as `preferred_element_type` (`dot_general` multiplies an int32 and a
float32 array into float32), and the result's weak type is JAX's: weak only when both
operands are.

`matmul` follows NumPy: 1-D operands act as a row (left) or a column (right) that is removed
from the result, and leading (batch) dimensions broadcast. Equal batch dimensions become
`dot_general` batch dimensions; a batch dimension of size 1 facing a larger one is squeezed
away and the larger one becomes an ordinary free dimension of its operand, after which a
`transpose` puts the result's dimensions in NumPy's order.
"""

from __future__ import annotations

import contextlib
import operator

import numpy as np

from tracejit._src import dtypes
from tracejit._src.lax import dot as lax_dot
from tracejit._src.lax import shapes as lax_shapes
from tracejit._src.numpy import manipulation, promotion, ufuncs
from tracejit._src.numpy.promotion import asarray_operand
from tracejit._src.shard_map import reshard
from tracejit._src.sharding_types import suspended_sharding_rules


def _operands(name: str, a, b):
    return asarray_operand(name, a, 0), asarray_operand(name, b, 1)


def _result_type(a, b, preferred_element_type, name: str):
    if preferred_element_type is None:
        return promotion.result_dtype(a, b)
    return dtypes.check_user_dtype(preferred_element_type, name), False


def _dot_general(a, b, dimension_numbers, precision, dtype, weak, out_sharding=None):
    """(With an `out_sharding`, the product's type carries no sharding until `_placed` lays it
    out: the user's layout, where JAX's rule would refuse to choose one, as for split
    contracting dimensions.)"""
    with suspended_sharding_rules() if out_sharding is not None else contextlib.nullcontext():
        out = lax_dot.dot_general(
            a, b, dimension_numbers, precision=precision, preferred_element_type=dtype
        )
        return promotion.convert_element_type(out, dtype, weak)


def _placed(out, out_sharding):
    """The product laid out as `out_sharding` (a Sharding, or a PartitionSpec of the current
    mesh) says, as JAX places it: moved eagerly, a sharding constraint in a traced program."""
    return out if out_sharding is None else reshard(out, out_sharding)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's dot: the sum product over the last axis of `a` and the second-to-last of `b`
    (the only one for 1-D `b`); a scalar operand multiplies elementwise."""
    a, b = _operands("dot", a, b)
    dtype, weak = _result_type(a, b, preferred_element_type, "dot")
    if a.ndim == 0 or b.ndim == 0:
        contract = ((), ())
    else:
        contract = ((a.ndim - 1,), (b.ndim - 1 if b.ndim == 1 else b.ndim - 2,))
    out = _dot_general(a, b, (contract, ((), ())), precision, dtype, weak, out_sharding)
    return _placed(out, out_sharding)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's matmul (`a @ b`): matrix products broadcast over leading batch dimensions."""
    a, b = _operands("matmul", a, b)
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(
                f"matmul input operand {i} must have ndim at least 1, but it has ndim 0"
            )
    dtype, weak = _result_type(a, b, preferred_element_type, "matmul")
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    roles, batch_pairs, a_squeeze, b_squeeze = _batch_roles(a, b)
    a_axes = _renumber(a.ndim, a_squeeze)
    b_axes = _renumber(b.ndim, b_squeeze)
    if a_squeeze:
        a = lax_shapes.squeeze(a, tuple(a_squeeze))
    if b_squeeze:
        b = lax_shapes.squeeze(b, tuple(b_squeeze))
    a_contract = a.ndim - 1
    b_contract = 0 if b_vec else b.ndim - 2
    batch_a = tuple(a_axes[p] for p, _ in batch_pairs)
    batch_b = tuple(b_axes[q] for _, q in batch_pairs)
    dimension_numbers = (((a_contract,), (b_contract,)), (batch_a, batch_b))
    out = _dot_general(a, b, dimension_numbers, precision, dtype, weak, out_sharding)
    # dot_general's order: batch dims, a's free dims, b's free dims (each in axis order).
    a_free = [i for i in range(a.ndim) if i not in batch_a and i != a_contract]
    b_free = [i for i in range(b.ndim) if i not in batch_b and i != b_contract]
    position = {("batch", k): k for k in range(len(batch_pairs))}
    for k, axis in enumerate(a_free):
        position[("a", axis)] = len(batch_pairs) + k
    for k, axis in enumerate(b_free):
        position[("b", axis)] = len(batch_pairs) + len(a_free) + k
    order, ones = [], []
    for i, role in enumerate(roles):
        if role[0] == "one":
            ones.append(i)
        elif role[0] == "batch":
            order.append(position[role])
        else:
            squeezed = a_axes if role[0] == "a" else b_axes
            order.append(position[(role[0], squeezed[role[1]])])
    if not a_vec:
        order.append(position[("a", a.ndim - 2)])
    if not b_vec:
        order.append(position[("b", b.ndim - 1)])
    if order != list(range(len(order))):
        out = lax_shapes.transpose(out, tuple(order))
    return _placed(_with_unit_axes(out, ones), out_sharding)


def _batch_roles(a, b):
    """How each of the result's batch dimensions arises from the batch dimensions of `a` and
    `b` (aligned at the right, as broadcasting aligns them).

    Returns `(roles, batch_pairs, a_squeeze, b_squeeze)`: a role per result batch position,
    `("batch", k)` for the k-th pair of equal dimensions in `batch_pairs` (axis in a, axis in
    b), `("a", axis)` or `("b", axis)` for a dimension only one operand has (the other's is
    missing or 1), `("one",)` where both are 1; and the size-1 axes of each operand that are
    squeezed away before `dot_general`."""
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    nbatch = max(len(a_batch), len(b_batch))
    a_off, b_off = nbatch - len(a_batch), nbatch - len(b_batch)
    roles, batch_pairs, a_squeeze, b_squeeze = [], [], [], []
    for i in range(nbatch):
        da = a_batch[i - a_off] if i >= a_off else None
        db = b_batch[i - b_off] if i >= b_off else None
        if da is not None and db is not None and da == db and da != 1:
            roles.append(("batch", len(batch_pairs)))
            batch_pairs.append((i - a_off, i - b_off))
        elif da is not None and db is not None and da == 1 and db == 1:
            a_squeeze.append(i - a_off)
            b_squeeze.append(i - b_off)
            roles.append(("one",))
        elif da is None or da == 1:
            if da is not None:
                a_squeeze.append(i - a_off)
            roles.append(("b", i - b_off))
        elif db is None or db == 1:
            if db is not None:
                b_squeeze.append(i - b_off)
            roles.append(("a", i - a_off))
        else:
            raise ValueError(
                "Incompatible types for matmul arguments: "
                f"{a.dtype.name}[{','.join(map(str, a.shape))}] and "
                f"{b.dtype.name}[{','.join(map(str, b.shape))}]"
            )
    return roles, batch_pairs, a_squeeze, b_squeeze


def _with_unit_axes(out, ones: list):
    """`out` with axes of length 1 inserted at the result positions `ones`."""
    if not ones:
        return out
    rank = out.ndim + len(ones)
    kept = tuple(i for i in range(rank) if i not in ones)
    shape = list(out.shape)
    for i in ones:
        shape.insert(i, 1)
    return lax_shapes.broadcast_in_dim(out, tuple(shape), kept)


def _renumber(ndim: int, removed) -> dict:
    """Old axis -> axis after removing the axes in `removed`."""
    mapping, k = {}, 0
    for i in range(ndim):
        if i not in removed:
            mapping[i] = k
            k += 1
    return mapping


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened arrays, conjugating `a` if complex."""
    a, b = _operands("vdot", a, b)
    if dtypes.is_complex(a.dtype):
        a = ufuncs.conj(a)
    return dot(
        manipulation.ravel(a),
        manipulation.ravel(b),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Conjugated dot product of vectors along `axis`, broadcast over the other axes."""
    a, b = _operands("vecdot", x1, x2)
    a = manipulation.moveaxis(a, axis, -1)
    b = manipulation.moveaxis(b, axis, -1)
    if dtypes.is_complex(a.dtype):
        a = ufuncs.conj(a)
    a = manipulation.expand_dims(a, -2)
    b = manipulation.expand_dims(b, -1)
    out = matmul(a, b, precision=precision, preferred_element_type=preferred_element_type)
    return manipulation.squeeze(out, (-2, -1))


def inner(a, b, *, precision=None, preferred_element_type=None):
    """The sum product over the last axes of `a` and `b`."""
    a, b = _operands("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        if preferred_element_type is not None:
            dtype = dtypes.check_user_dtype(preferred_element_type, "inner")
            a = promotion.convert_element_type(a, dtype)
            b = promotion.convert_element_type(b, dtype)
        return ufuncs.multiply(a, b)
    dtype, weak = _result_type(a, b, preferred_element_type, "inner")
    dimension_numbers = (((a.ndim - 1,), (b.ndim - 1,)), ((), ()))
    return _dot_general(a, b, dimension_numbers, precision, dtype, weak)


def outer(a, b, out=None):
    """`a.ravel()[:, None] * b.ravel()[None, :]`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = _operands("outer", a, b)
    a, b = manipulation.ravel(a), manipulation.ravel(b)
    column = lax_shapes.broadcast_in_dim(a, (a.shape[0], 1), (0,))
    row = lax_shapes.broadcast_in_dim(b, (1, b.shape[0]), (1,))
    return ufuncs.multiply(column, row)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None):
    """The sum product over the last `axes` axes of `a` and the first of `b`, or over the
    axes listed in the pair `axes`."""
    a, b = _operands("tensordot", a, b)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise TypeError(
                f"Number of tensordot axes (axes {n}) exceeds input ranks ({a.shape} and {b.shape})"
            )
        a_axes = tuple(range(a.ndim - n, a.ndim))
        b_axes = tuple(range(n))
    else:
        try:
            a_spec, b_spec = axes
        except (TypeError, ValueError):
            raise TypeError(
                "tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples "
                f"of ints, got {axes!r}"
            ) from None
        a_spec = (a_spec,) if np.ndim(a_spec) == 0 else tuple(a_spec)
        b_spec = (b_spec,) if np.ndim(b_spec) == 0 else tuple(b_spec)
        if len(a_spec) != len(b_spec):
            raise TypeError(
                f"tensordot requires axes lists to have equal length, got {a_spec} and {b_spec}."
            )
        a_axes = tuple(manipulation.normalize_axis(i, a.ndim) for i in a_spec)
        b_axes = tuple(manipulation.normalize_axis(i, b.ndim) for i in b_spec)
    dtype, weak = _result_type(a, b, preferred_element_type, "tensordot")
    out = _dot_general(a, b, ((a_axes, b_axes), ((), ())), precision, dtype, weak, out_sharding)
    return _placed(out, out_sharding)
