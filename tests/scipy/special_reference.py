"""JAX 0.10.2's recorded answers for tracejit.scipy.special (`data/jax_special.json`, written by
`make_jax_reference_special.py`): edge values, and result dtypes and weak types."""

import json
import pathlib

import numpy as np

import tracejit.numpy as jnp

_DATA = json.loads((pathlib.Path(__file__).parent / "data" / "jax_special.json").read_text())


def edges(name) -> tuple:
    """(operands, JAX's float64 values) at the edges of `name`'s domain."""
    entry = _DATA["edges"][name]
    operands = [np.array([float(v) for v in column]) for column in entry["operands"]]
    return operands, np.array([float(v) for v in entry["values"]])


def _operand(kind, value):
    if kind == "int":
        return int(value)
    if kind == "float":
        return value
    return jnp.asarray(value, dtype=kind)


def dtype_cases(name) -> list:
    """[(operands, JAX's result dtype, its weak type)] for `name`."""
    return [
        ([_operand(kind, value) for kind, value in operands], dtype, weak)
        for operands, dtype, weak in _DATA["dtypes"][name]
    ]


def recorded(section) -> list:
    return sorted(_DATA[section])
