"""`jnp.vectorize`: a function of scalars (or of core-shaped blocks, given a gufunc signature
such as `'(n),(n)->()'`) mapped over the broadcast leading axes of its arguments.

The loop axes of all arguments are broadcast together and flattened into one, and a single
`vmap` maps the function over it; the outputs' flattened axis is then split back into the
loop shape. Arguments named in `excluded` (positions or keywords) are passed through as they are.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from tracejit._src import vmap
from tracejit._src.numpy import creation, manipulation, promotion
from tracejit._src.numpy.promotion import asarray_operand

_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature: str):
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
    signature = signature.replace(" ", "")
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    inputs, outputs = signature.split("->")

    def cores(part):
        return [tuple(d for d in core.split(",") if d) for core in re.findall(r"\((.*?)\)", part)]

    return cores(inputs), cores(outputs)


def _record_core_sizes(sizes: dict, core: tuple, shape: tuple) -> None:
    """Enter the sizes `shape` gives the dimensions named in `core` into `sizes`, checking them
    against the sizes already known."""
    for name, size in zip(core, shape, strict=True):
        if sizes.setdefault(name, size) != size:
            raise ValueError(
                f"inconsistent size for core dimension {name!r}: {size} vs {sizes[name]}"
            )


def _core_sizes(args, in_cores) -> dict:
    sizes: dict = {}
    for x, core in zip(args, in_cores, strict=True):
        if x.ndim < len(core):
            raise ValueError(
                f"input with shape {x.shape} does not have enough dimensions for its core "
                f"dimensions {core}"
            )
        _record_core_sizes(sizes, core, x.shape[x.ndim - len(core) :])
    return sizes


def _cores(parsed, count: int):
    """(in_cores, out_cores) of the signature (no core dimensions and unchecked outputs
    without one), for `count` mapped arguments."""
    if parsed is None:
        return [()] * count, None
    in_cores, out_cores = parsed
    if len(in_cores) != count:
        raise TypeError(
            f"wrong number of positional arguments: expected {len(in_cores)}, got {count}"
        )
    return in_cores, out_cores


def _flattened(operands, in_cores):
    """(loop shape, its size, the operands broadcast to it with the loop axes flattened)."""
    loop_shapes = [x.shape[: x.ndim - len(c)] for x, c in zip(operands, in_cores, strict=True)]
    loop = promotion.broadcast_shapes(*loop_shapes)
    count = int(np.prod(loop, dtype=np.int64))
    flat = []
    for x, core in zip(operands, in_cores, strict=True):
        core_shape = x.shape[x.ndim - len(core) :]
        wide = manipulation.broadcast_to(x, loop + core_shape)
        flat.append(manipulation.reshape(wide, (count,) + core_shape))
    return loop, count, flat


def _mapped(call, flat, count: int):
    """`call` vmapped over the leading axis of `flat`."""
    if count:
        return vmap.vmap(call)(*flat)
    # vmap needs an element to find the output shapes: map over one zero element and keep none
    # of the results.
    ones = [
        manipulation.concatenate([f, creation.zeros((1,) + f.shape[1:], f.dtype)]) for f in flat
    ]
    out = vmap.vmap(call)(*ones)
    return tuple(o[:0] for o in out) if isinstance(out, tuple) else out[:0]


def _check_outputs(outs, out_cores, sizes: dict) -> None:
    if len(out_cores) != len(outs):
        raise ValueError(
            f"wrong number of outputs from pyfunc: expected {len(out_cores)}, got {len(outs)}"
        )
    for o, core in zip(outs, out_cores, strict=True):
        if o.ndim - 1 != len(core):
            raise ValueError(f"output shape {o.shape[1:]} does not match core dimensions {core}")
        _record_core_sizes(sizes, core, o.shape[1:])


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """`pyfunc` made to map over the leading (loop) axes of its array arguments, built on
    `vmap`: without `signature` it sees scalars; with one, blocks of the core shapes."""
    excluded = frozenset(excluded)
    parsed = _parse_signature(signature) if signature is not None else None

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        positions = [i for i in range(len(args)) if i not in excluded]
        names = list(mapped_kw)
        operands = [asarray_operand("vectorize", args[i], i) for i in positions]
        operands += [asarray_operand("vectorize", mapped_kw[k]) for k in names]
        in_cores, out_cores = _cores(parsed, len(operands))
        sizes = _core_sizes(operands, in_cores)
        loop, count, flat = _flattened(operands, in_cores)

        def call(*values):
            full = list(args)
            for i, v in zip(positions, values, strict=False):
                full[i] = v
            kw = dict(static_kw)
            kw.update(zip(names, values[len(positions) :], strict=True))
            return pyfunc(*full, **kw)

        out = _mapped(call, flat, count)
        single = not isinstance(out, tuple)
        outs = [out] if single else list(out)
        if out_cores is not None:
            _check_outputs(outs, out_cores, sizes)
        outs = [manipulation.reshape(o, loop + o.shape[1:]) for o in outs]
        return outs[0] if single else tuple(outs)

    return wrapped
