"""Pure-data translations between Python and PJRT: element types and the compile-options proto.

Nothing here touches the plugin, so it imports without cffi and is testable anywhere.

Element types. PJRT names each element type by an enum constant `PJRT_Buffer_Type_<NAME>`;
`PJRT_TYPE_NAMES` maps NumPy dtypes (ml_dtypes' for bfloat16, the float8 family and the
sub-byte integers) to `<NAME>`. The runtime turns names into enum values with the header's own
enum, so no numbering is written here.

Compile options. `PJRT_Client_Compile` takes a serialized `xla.CompileOptionsProto`, and the
CPU plugin aborts the process (a failed CHECK) when it carries no replica count. Instead of
depending on protobuf and XLA's .proto files, the few fields we set are written directly in the
protobuf wire format: a field is a key varint `(field_number << 3) | wire_type` followed by a
varint (wire type 0) or a length-prefixed byte string (wire type 2, used for strings, packed
repeated integers and nested messages).

    CompileOptionsProto                       ExecutableBuildOptionsProto
      3: executable_build_options  ------>      4: num_replicas       5: num_partitions
      4: compile_portable_executable            6: use_spmd_partitioning
      7: env_option_overrides (map)             9: device_assignment (DeviceAssignmentProto)
                                               12: allow_spmd_sharding_propagation_to_output

Reading back. A partitioned executable's optimized program (`hlo_with_config`: 1, the
`HloModuleProto`) says how XLA laid out its results (field 12, `spmd_output_sharding`, an
`OpSharding`); `output_shardings` decodes that much of it.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

import ml_dtypes
import numpy as np

# NumPy dtype -> PJRT_Buffer_Type_<NAME>. Newer ml_dtypes types are included when present.
_TYPE_TABLE = [
    (np.bool_, "PRED"),
    (np.int8, "S8"),
    (np.int16, "S16"),
    (np.int32, "S32"),
    (np.int64, "S64"),
    (np.uint8, "U8"),
    (np.uint16, "U16"),
    (np.uint32, "U32"),
    (np.uint64, "U64"),
    (np.float16, "F16"),
    (np.float32, "F32"),
    (np.float64, "F64"),
    (np.complex64, "C64"),
    (np.complex128, "C128"),
    ("bfloat16", "BF16"),
    ("float8_e5m2", "F8E5M2"),
    ("float8_e4m3fn", "F8E4M3FN"),
    ("float8_e4m3b11fnuz", "F8E4M3B11FNUZ"),
    ("float8_e5m2fnuz", "F8E5M2FNUZ"),
    ("float8_e4m3fnuz", "F8E4M3FNUZ"),
    ("float8_e4m3", "F8E4M3"),
    ("float8_e3m4", "F8E3M4"),
    ("float8_e8m0fnu", "F8E8M0FNU"),
    ("float4_e2m1fn", "F4E2M1FN"),
    ("int4", "S4"),
    ("uint4", "U4"),
    ("int2", "S2"),
    ("uint2", "U2"),
]


def _build_type_names() -> dict[np.dtype, str]:
    names = {}
    for scalar_type, name in _TYPE_TABLE:
        if isinstance(scalar_type, str):
            scalar_type = getattr(ml_dtypes, scalar_type, None)
            if scalar_type is None:
                continue
        names[np.dtype(scalar_type)] = name
    return names


PJRT_TYPE_NAMES: dict[np.dtype, str] = _build_type_names()

# Types stored with fewer than 8 bits per element: NumPy (ml_dtypes) spends a byte on each,
# PJRT devices may pack them, so such buffers are never viewed zero-copy.
SUB_BYTE_TYPE_NAMES = frozenset({"S4", "U4", "S2", "U2", "F4E2M1FN"})


# ------------------------------------------------------------------------------------------------
# Protobuf wire format


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # int64 fields encode negatives as ten-byte two's complement
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(int(value))


def _bytes_field(number: int, data: bytes) -> bytes:
    return _varint((number << 3) | 2) + _varint(len(data)) + data


def _packed_ints_field(number: int, values: Sequence[int]) -> bytes:
    return _bytes_field(number, b"".join(_varint(int(v)) for v in values))


def _option_override(value: str | bool | float) -> bytes:
    """An `xla.OptionOverrideProto`: a oneof of string(1), bool(2), int64(3), double(4)."""
    if isinstance(value, bool):
        return _int_field(2, value)
    if isinstance(value, int):
        return _int_field(3, value)
    if isinstance(value, float):
        return _varint((4 << 3) | 1) + struct.pack("<d", value)
    return _bytes_field(1, str(value).encode())


def device_assignment_proto(assignment: Sequence[Sequence[int]]) -> bytes:
    """An `xla.DeviceAssignmentProto` from `assignment[replica][partition] = device id`.

    The proto stores it transposed: one `ComputationDevice` per partition, listing the device
    of each replica.
    """
    replicas = len(assignment)
    partitions = len(assignment[0]) if replicas else 0
    if any(len(row) != partitions for row in assignment):
        raise ValueError(f"device assignment rows differ in length: {assignment}")
    out = _int_field(1, replicas) + _int_field(2, partitions)
    for partition in range(partitions):
        devices = [assignment[replica][partition] for replica in range(replicas)]
        out += _bytes_field(3, _packed_ints_field(1, devices))
    return out


# XLA debug options every program is compiled with, where the plugin's defaults differ from
# what JAX 0.10.2 passes: with fast min/max (the plugin's default) `maximum`/`minimum` drop a
# NaN second operand; JAX turns it off, and so do we, so that they propagate NaNs as NumPy's.
DEBUG_OPTIONS = {"xla_cpu_enable_fast_min_max": False}


def compile_options_proto(
    num_replicas: int = 1,
    num_partitions: int = 1,
    *,
    device_assignment: Sequence[Sequence[int]] | None = None,
    use_spmd_partitioning: bool | None = None,
    portable: bool = False,
    env_option_overrides: Mapping[str, str | bool | int | float] | None = None,
    propagate_to_outputs: Sequence[bool] = (),
) -> bytes:
    """A serialized `xla.CompileOptionsProto`.

    `device_assignment[replica][partition]` pins the program to device ids; without it the
    client picks its default assignment. `use_spmd_partitioning` defaults to true when there are
    several partitions (programs sharded with `mhlo.sharding` annotations need it).
    `portable` compiles a single-device program that may run on any device.
    `env_option_overrides` are XLA debug options by name, e.g. `{"xla_cpu_enable_fast_math": True}`,
    on top of `DEBUG_OPTIONS`. `propagate_to_outputs` (one bool per result) lets XLA choose the
    sharding of the results whose entry is true (they carry no annotation).
    """
    if num_replicas < 1 or num_partitions < 1:
        raise ValueError(f"num_replicas={num_replicas}, num_partitions={num_partitions}")
    if use_spmd_partitioning is None:
        use_spmd_partitioning = num_partitions > 1
    build = _int_field(4, num_replicas) + _int_field(5, num_partitions)
    if use_spmd_partitioning:
        build += _int_field(6, 1)
    if device_assignment is not None:
        if len(device_assignment) != num_replicas or any(
            len(row) != num_partitions for row in device_assignment
        ):
            raise ValueError(
                f"device_assignment must be {num_replicas} x {num_partitions}, "
                f"got {device_assignment}"
            )
        build += _bytes_field(9, device_assignment_proto(device_assignment))
    if any(propagate_to_outputs):
        build += _packed_ints_field(12, [bool(p) for p in propagate_to_outputs])
    out = _bytes_field(3, build)
    if portable:
        out += _int_field(4, 1)
    for key, value in sorted({**DEBUG_OPTIONS, **(env_option_overrides or {})}.items()):
        entry = _bytes_field(1, key.encode()) + _bytes_field(2, _option_override(value))
        out += _bytes_field(7, entry)
    return out


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, object]]:
    """A message's (field number, value) pairs: an int, or the bytes of a length-delimited
    field (fixed-width fields are skipped: none that is read here has one)."""
    out, at = [], 0
    while at < len(data):
        key, at = _read_varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _read_varint(data, at)
        elif wire == 2:
            size, at = _read_varint(data, at)
            value, at = data[at : at + size], at + size
        elif wire in (1, 5):
            value, at = None, at + (8 if wire == 1 else 4)
        else:
            raise ValueError(f"unsupported protobuf wire type {wire} (field {number})")
        out.append((number, value))
    return out


def _repeated_ints(fields, number: int) -> list[int]:
    """A repeated integer field, packed or not."""
    values = []
    for n, value in fields:
        if n != number:
            continue
        if isinstance(value, int):
            values.append(value)
            continue
        at = 0
        while at < len(value):
            item, at = _read_varint(value, at)
            values.append(item)
    return values


_SHARDING_KINDS = {0: "replicated", 1: "maximal", 2: "tuple", 3: "tiled", 4: "manual"}


class OpSharding:
    """An `xla.OpSharding`: `kind` ("replicated", "maximal", "tiled", "manual", ...), the tile
    counts per dimension (`tile_dims`, the last one copies when `replicate_last`), and which
    partition holds each tile (`partitions`, row-major over `tile_dims`)."""

    def __init__(self, data: bytes):
        fields = _fields(data)
        kind = next((v for n, v in fields if n == 1), 0)
        self.kind = _SHARDING_KINDS.get(kind, f"type {kind}")
        self.tuple = [OpSharding(v) for n, v in fields if n == 5]
        self.tile_dims = tuple(_repeated_ints(fields, 3))
        self.replicate_last = bool(next((v for n, v in fields if n == 6), 0))
        self.last_tile_kinds = tuple(_repeated_ints(fields, 8))
        devices = _repeated_ints(fields, 4)
        if not devices and self.tile_dims:  # the iota form: arange, reshaped, transposed
            reshape = _repeated_ints(fields, 9)
            perm = _repeated_ints(fields, 10) or list(range(len(reshape)))
            devices = np.arange(int(np.prod(reshape))).reshape(reshape).transpose(perm).ravel()
        self.partitions = tuple(int(d) for d in devices)


def output_shardings(program_format: str, program: bytes) -> list[OpSharding]:
    """The sharding XLA chose for each result of an optimized program (as
    `Executable.optimized_program()` gives it)."""
    module = program
    if program_format == "hlo_with_config":
        module = next(v for n, v in _fields(program) if n == 1)
    data = next((v for n, v in _fields(module) if n == 12), b"")
    sharding = OpSharding(data)
    return sharding.tuple if sharding.kind == "tuple" else [sharding]
