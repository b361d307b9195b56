"""The two array operations the interpreters need for themselves.

Autodiff turns a symbolic `Zero` into an array by broadcasting a scalar, and vmap lines batch
dimensions up by transposing and broadcasting. `broadcast_in_dim` and `transpose` are
primitives of `lax/shapes.py`, a layer above the interpreters, so each primitive's block hands
its wrapper over here (`provide_broadcast_in_dim`, `provide_transpose`) and the interpreters
call `structural.broadcast_in_dim(...)`/`structural.transpose(...)`.
"""

from __future__ import annotations

broadcast_in_dim = None  # (operand, shape, broadcast_dimensions) -> array
transpose = None  # (operand, permutation) -> array


def provide_broadcast_in_dim(wrapper) -> None:
    global broadcast_in_dim
    broadcast_in_dim = wrapper


def provide_transpose(wrapper) -> None:
    global transpose
    transpose = wrapper
