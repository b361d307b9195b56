"""A text builder for StableHLO modules in MLIR's generic operation form.

Every operation is written the same way, regions included:

    %3 = "stablehlo.add"(%1, %2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %4 = "stablehlo.reduce"(%3, %0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %5 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%5) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<8xf32>, tensor<f32>) -> tensor<f32>

so one emitter (`Block.op`) serves all operations. The builder knows nothing of jaxprs: the
lowering interpreter (`lower.py`) drives it, and each primitive's lowering rule calls `op`.
"""

from __future__ import annotations

import re

import numpy as np

from tracejit._src import dtypes

_ELEMENT_TYPES = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(dtypes.bfloat16): "bf16",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>",
}


def element_type(dtype) -> str:
    try:
        return _ELEMENT_TYPES[np.dtype(dtype)]
    except KeyError:
        raise NotImplementedError(f"no StableHLO element type for dtype {dtype}") from None


def tensor_type(shape, dtype) -> str:
    """`tensor<2x3xf32>`, `tensor<f32>` for scalars."""
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{element_type(dtype)}>"


_DTYPES = {text: dtype for dtype, text in _ELEMENT_TYPES.items()}
_TENSOR_TYPE = re.compile(r"tensor<((?:\d+x)*)(.+)>")


def parse_tensor_type(type_: str) -> tuple:
    """(shape, dtype) of a `tensor_type`: the helpers below read them off their operands, so
    that rules emitting inside regions need no avals."""
    dims, element = _TENSOR_TYPE.fullmatch(type_).groups()
    return tuple(int(d) for d in dims.split("x")[:-1]), _DTYPES[element]


def compare_type(dtype) -> str:
    """The `comparison_type` of stablehlo.compare for operands of `dtype` (complex numbers
    compare as FLOAT, for EQ and NE only)."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    return "UNSIGNED" if dtype == np.bool_ or dtypes.is_unsigned(dtype) else "SIGNED"


def i64_array(values) -> str:
    """A dense i64 array attribute: `array<i64: 0, 2>` (`array<i64>` when empty)."""
    values = [int(v) for v in values]
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def bool_array(values) -> str:
    values = ["true" if v else "false" for v in values]
    return f"array<i1: {', '.join(values)}>" if values else "array<i1>"


def _scalar_literal(value, dtype) -> str:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "true" if value else "false"
    if dtypes.is_complex(dtype):
        return f"({_scalar_literal(value.real, np.float64)}, {_scalar_literal(value.imag, np.float64)})"
    if dtypes.is_float(dtype):
        value = float(value)
        if np.isnan(value):
            return "0x7FC00000" if dtype == np.float32 else _nan_hex(dtype)
        if np.isinf(value):
            return _inf_hex(dtype, value > 0)
        text = repr(value)  # MLIR's float literals need a point: 1e-16 must read 1.0e-16
        return text if "." in text else text.replace("e", ".0e")
    return str(int(value))


def _nan_hex(dtype) -> str:
    bits = np.array(np.nan, dtype).view(f"u{np.dtype(dtype).itemsize}")
    return f"0x{int(bits):0{2 * np.dtype(dtype).itemsize}X}"


def _inf_hex(dtype, positive: bool) -> str:
    bits = np.array(np.inf if positive else -np.inf, dtype).view(f"u{np.dtype(dtype).itemsize}")
    return f"0x{int(bits):0{2 * np.dtype(dtype).itemsize}X}"


def dense_attribute(array: np.ndarray) -> str:
    """`dense<...> : tensor<...>`: a splat for uniform arrays, else hex bytes of the data."""
    array = np.asarray(array)
    type_ = tensor_type(array.shape, array.dtype)
    if array.size and (array == array.flat[0]).all() and not dtypes.is_complex(array.dtype):
        return f"dense<{_scalar_literal(array.flat[0], array.dtype)}> : {type_}"
    if array.size == 0:
        return f"dense<> : {type_}"
    if array.dtype == np.bool_:  # MLIR packs i1 elements eight to a byte, first in the low bit
        data = np.packbits(array.ravel(), bitorder="little").tobytes()
    else:
        data = np.ascontiguousarray(array).tobytes()
    return f'dense<"0x{data.hex().upper()}"> : {type_}'


class Value:
    """An SSA value: its name (`%3`) and type."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type_: str):
        self.name = name
        self.type = type_

    def __repr__(self):
        return self.name


class Block:
    """A list of operations with its arguments; a function body or a region's single block."""

    def __init__(self, function: Function, arg_types, arg_prefix: str):
        self.function = function
        self.args = [Value(f"%{arg_prefix}{i}", t) for i, t in enumerate(arg_types)]
        self.lines: list[str] = []

    def op(self, name, operands, result_types, attributes=None, regions=()) -> list[Value]:
        """Appends `"name"(operands) (regions) {attributes} : (types) -> results`."""
        results = [self.function.new_value(t) for t in result_types]
        lhs = f"{', '.join(r.name for r in results)} = " if results else ""
        regions_text = ""
        if regions:
            regions_text = " (" + ", ".join(r.text(self.function.indent_of(self)) for r in regions)
            regions_text += ")"
        attrs = ""
        if attributes:
            attrs = " {" + ", ".join(f"{k} = {v}" for k, v in attributes.items()) + "}"
        operand_types = ", ".join(o.type for o in operands)
        if len(result_types) == 1:
            result_text = result_types[0]
        else:
            result_text = f"({', '.join(result_types)})"
        location = self.function.location
        loc = f" loc({_quote(location)})" if location else ""
        self.lines.append(
            f'{lhs}"{name}"({", ".join(o.name for o in operands)}){regions_text}{attrs} : '
            f"({operand_types}) -> {result_text}{loc}"
        )
        return results

    def op1(self, name, operands, result_type, attributes=None, regions=()) -> Value:
        return self.op(name, operands, [result_type], attributes, regions)[0]

    def constant(self, value, dtype=None) -> Value:
        array = np.asarray(value, dtype=dtype)
        return self.op1(
            "stablehlo.constant",
            [],
            tensor_type(array.shape, array.dtype),
            {"value": dense_attribute(array)},
        )

    def full_like(self, x: Value, value) -> Value:
        """A constant of `x`'s type, every element `value`."""
        shape, dtype = parse_tensor_type(x.type)
        return self.constant(np.full(shape, value, dtype))

    def compare(self, x: Value, y: Value, direction: str) -> Value:
        """`x <direction> y` (EQ, NE, LT, LE, GT, GE) elementwise, as booleans of `x`'s shape."""
        shape, dtype = parse_tensor_type(x.type)
        attributes = {
            "comparison_direction": f"#stablehlo<comparison_direction {direction}>",
            "compare_type": f"#stablehlo<comparison_type {compare_type(dtype)}>",
        }
        return self.op1("stablehlo.compare", [x, y], tensor_type(shape, np.bool_), attributes)

    def convert(self, x: Value, dtype) -> Value:
        """`x` converted to `dtype` as lax.convert_element_type converts: complex to real keeps
        the real part, to bool is `x != 0` (NaN is True); `x` itself where the dtypes agree."""
        shape, old = parse_tensor_type(x.type)
        dtype = np.dtype(dtype)
        if dtypes.is_complex(old) and not dtypes.is_complex(dtype):
            old = np.dtype(np.float32 if old == np.complex64 else np.float64)
            x = self.op1("stablehlo.real", [x], tensor_type(shape, old))
        if old == dtype:
            return x
        if dtype == np.bool_:
            return self.compare(x, self.full_like(x, 0), "NE")
        return self.op1("stablehlo.convert", [x], tensor_type(shape, dtype))

    def region(self, arg_types) -> Region:
        return Region(self.function, arg_types)

    def ret(self, values, op_name="stablehlo.return"):
        types = ", ".join(v.type for v in values)
        self.lines.append(f'"{op_name}"({", ".join(v.name for v in values)}) : ({types}) -> ()')


class Region(Block):
    """A region with one block, as reduce/sort/while/if/case take them."""

    def __init__(self, function: Function, arg_types):
        super().__init__(function, arg_types, arg_prefix=f"r{function.next_region_id()}_")

    def text(self, indent: int) -> str:
        pad = " " * (indent + 2)
        head = ""
        if self.args:
            head = f"\n{pad}^bb0({', '.join(f'{a.name}: {a.type}' for a in self.args)}):"
        body = "".join(f"\n{pad}  {line}" for line in self.lines)
        return "{" + head + body + f"\n{' ' * indent}" + "}"


def _attribute_dict(attributes) -> str:
    if not attributes:
        return ""
    return " {" + ", ".join(f"{k} = {v}" for k, v in attributes.items()) + "}"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Function:
    def __init__(self, name: str, arg_types, result_types, public: bool = True):
        self.location = None  # attached to the operations emitted next, for XLA's diagnostics
        self.name = name
        self.result_types = list(result_types)
        self.public = public
        self._counter = 0
        self._regions = 0
        self.body = Block(self, arg_types, arg_prefix="arg")
        # argument index -> {name: value}, e.g. {"tf.aliasing_output": "0 : i32"}: XLA reads
        # input/output aliasing (buffer donation) from these
        self.arg_attributes: dict[int, dict[str, str]] = {}
        # result index -> {name: value}, e.g. {"mhlo.sharding": '"{replicated}"'}
        self.result_attributes: dict[int, dict[str, str]] = {}

    def new_value(self, type_: str) -> Value:
        value = Value(f"%{self._counter}", type_)
        self._counter += 1
        return value

    def next_region_id(self) -> int:
        self._regions += 1
        return self._regions

    def indent_of(self, block: Block) -> int:
        return 4

    def text(self) -> str:
        args = ", ".join(
            f"{a.name}: {a.type}{_attribute_dict(self.arg_attributes.get(i))}"
            for i, a in enumerate(self.body.args)
        )
        results = ", ".join(
            f"{t}{_attribute_dict(self.result_attributes.get(i))}"
            for i, t in enumerate(self.result_types)
        )
        visibility = "public" if self.public else "private"
        lines = "".join(f"\n    {line}" for line in self.body.lines)
        return f"  func.func {visibility} @{self.name}({args}) -> ({results}) {{{lines}\n  }}"


class Module:
    def __init__(self, name: str, num_replicas: int = 1, num_partitions: int = 1):
        self.name = name
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.functions: list[Function] = []
        # objects the compiled program needs alive (host callbacks, whose ids the text holds)
        self.keep_alive: list = []
        # the named axes the replicas form, ((name, size), ...) in row-major order of replica
        # ids: what a collective's replica groups are made of (empty: one replica)
        self.replica_axes: tuple = ()
        # the replica axis whose members span several processes (`distributed.ProcessSpan`):
        # the replicas are this process's share of its members; None: one process
        self.process_span = None

    def function(self, name, arg_types, result_types, public=True) -> Function:
        function = Function(name, arg_types, result_types, public)
        self.functions.append(function)
        return function

    def text(self) -> str:
        attrs = (
            f"mhlo.num_partitions = {self.num_partitions} : i32, "
            f"mhlo.num_replicas = {self.num_replicas} : i32"
        )
        body = "\n".join(f.text() for f in self.functions)
        return f"module @{self.name} attributes {{{attrs}}} {{\n{body}\n}}\n"
