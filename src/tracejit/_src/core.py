"""Abstract values, primitives, and the trace/tracer machinery every transformation is made of.

A transformed function runs on *tracers* instead of arrays. Every elementary operation is a
`Primitive`, and calling it (`sin_p.bind(x)`) asks the *current trace* to interpret it:

- the eval trace (the root, `interpreters/eval.py`) runs the primitive's NumPy implementation;
- the staging trace (`interpreters/staging.py`) records an equation into a jaxpr;
- later transformations (JVP, batching, ...) compute their own values by binding primitives
  again on their *parent* trace.

The current trace lives in a thread-local context, not a global stack: a transformation makes a
new trace whose `parent` is the trace that was current, installs it with `set_current_trace`
while the user's function runs, and invalidates it afterwards. A tracer whose trace is gone and
that shows up again (it escaped through a global, say) is caught and reported with the line
where it was made: `UnexpectedTracerError`.

A tracer stands for a value known only *abstractly*: its `aval`, a `ShapedArray(shape, dtype,
weak_type)`. Python may branch on shapes (`if x.ndim == 0`) but not on values: `bool(tracer)`
raises a `ConcretizationTypeError` unless the trace can provide the concrete value (as a JVP
trace can, when its primal is concrete).
"""

from __future__ import annotations

import functools
import gc
import math
import os
import sys
import threading
import types
import weakref
from contextlib import contextmanager

import numpy as np

from tracejit._src import dtypes
from tracejit._src.config import config
from tracejit._src.errors import (
    ConcretizationTypeError,
    JaxRuntimeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    describe_user_location,
)
from tracejit._src.sharding import AbstractMesh, NamedSharding, PartitionSpec, typed_sharding

# --------------------------------------------------------------------------------------------
# Abstract values

python_scalar_types = frozenset({bool, int, float, complex})


class ShapedArray:
    """What a tracer knows of its value: shape, dtype, and whether the dtype is *weak*.

    A weak type (from a Python scalar) yields to the other operand in promotion:
    `float32_array + 2.0` stays float32 because `2.0` is a weak float.

    On a mesh with `Explicit` axes the type also says how the value is sharded over them
    (`f32[8@i]`: split over axis `i`): `_sharding`, a `NamedSharding` of the abstract mesh whose
    spec names only Explicit axes, or None (no such mesh: JAX's unsharded type, and the only
    kind of aval that programs without meshes make, at the cost of one slot).

    In the body of a `shard_map(check_vma=True)`, `vma` names the manual mesh axes along which
    the value may differ from device to device (`f32[4]{V:i}`); empty everywhere else.
    """

    __slots__ = ("_sharding", "dtype", "shape", "vma", "weak_type")

    def __init__(self, shape, dtype, weak_type=False, *, sharding=None, vma=frozenset()):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._sharding = None if sharding is None else typed_sharding(sharding, len(self.shape))
        self.vma = vma

    @property
    def sharding(self):
        """The sharding the type carries (JAX's `typeof(x).sharding`): replicated over the empty
        abstract mesh when no Explicit mesh axis shards the value."""
        if self._sharding is not None:
            return self._sharding
        return NamedSharding(AbstractMesh((), ()), PartitionSpec(*([None] * len(self.shape))))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def update(
        self, shape=None, dtype=None, weak_type=None, sharding=None, vma=None
    ) -> ShapedArray:
        """A copy with the given fields replaced; the sharding carries over while the rank
        stays (a new rank drops it: the caller's sharding rule says what it becomes)."""
        shape = self.shape if shape is None else shape
        if sharding is None and self._sharding is not None and len(shape) == len(self.shape):
            sharding = self._sharding
        return ShapedArray(
            shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            sharding=sharding,
            vma=self.vma if vma is None else vma,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def to_tangent_aval(self) -> ShapedArray:
        """The aval of this value's tangents: inexact values have tangents of their own dtype,
        integers and booleans `float0` ones."""
        dtype = self.dtype if dtypes.is_inexact(self.dtype) else dtypes.float0
        return ShapedArray(self.shape, dtype, self.weak_type, sharding=self._sharding, vma=self.vma)

    def _dims_text(self) -> str:
        if self._sharding is None:
            return ",".join(map(str, self.shape))
        spec = self._sharding.spec
        return ",".join(
            f"{size}{_axes_suffix(spec.axes_of(dim))}" for dim, size in enumerate(self.shape)
        )

    def str_short(self, short_dtypes: bool = True) -> str:
        """The jaxpr printer's type: `f32[8,3]`, `f32[8@i,3]` when Explicit axis `i` shards it,
        `f32[8,3]{V:i}` when it varies along manual axis `i` (`float32[...]` if not
        `short_dtypes`)."""
        name = dtypes.short_dtype_name if short_dtypes else dtypes.dtype_name
        text = f"{name(self.dtype)}[{self._dims_text()}]"
        if not self.vma:
            return text
        names = sorted(self.vma, key=getattr(self.vma, "position", str))
        return text + "{V:" + (names[0] if len(names) == 1 else f"({','.join(names)})") + "}"

    def __eq__(self, other):
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
            and self._sharding == other._sharding
            and self.vma == other.vma
        )

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type, self._sharding, self.vma))

    def __str__(self):
        """JAX's: `float32[8@i]`, `~float32[]` for a weak type."""
        weak = "~" if self.weak_type else ""
        return f"{weak}{dtypes.dtype_name(self.dtype)}[{self._dims_text()}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({dtypes.dtype_name(self.dtype)}[{self._dims_text()}]{weak})"


class MeshAxes(frozenset):
    """Names of mesh axes (a `vma`) that print in the mesh's order (`position`: name -> place)."""

    def __new__(cls, names, mesh_names: tuple):
        axes = super().__new__(cls, names)
        axes.position = {n: p for p, n in enumerate(mesh_names)}.__getitem__
        return axes


def _axes_suffix(axes: tuple) -> str:
    if not axes:
        return ""
    return f"@{axes[0]}" if len(axes) == 1 else f"@({','.join(axes)})"


def mapped_aval(size: int, axis, aval: ShapedArray) -> ShapedArray:
    """`aval` without its mapped axis `axis` (of length `size`; its sharding with it); None:
    not mapped."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped axis {axis} of {aval.str_short()} does not have size {size}")
    entries = _spec_entries(aval)
    if entries is not None:
        del entries[axis]
    return _with_entries(aval, aval.shape[:axis] + aval.shape[axis + 1 :], entries)


def unmapped_aval(size: int, axis, aval: ShapedArray, explicit_mesh_axis=None) -> ShapedArray:
    """`aval` with a new axis of length `size` inserted at `axis` (whole on every device);
    None: not mapped."""
    if explicit_mesh_axis is not None:
        raise NotImplementedError("unmapped_aval(explicit_mesh_axis=...) is not built yet")
    if axis is None:
        return aval
    axis = axis % (len(aval.shape) + 1)
    entries = _spec_entries(aval)
    if entries is not None:
        entries.insert(axis, None)
    return _with_entries(aval, aval.shape[:axis] + (size,) + aval.shape[axis:], entries)


def _spec_entries(aval: ShapedArray):
    if aval._sharding is None:
        return None
    spec = aval._sharding.spec
    return [spec[d] if d < len(spec) else None for d in range(aval.ndim)]


def _with_entries(aval: ShapedArray, shape, entries) -> ShapedArray:
    sharding = None
    if entries is not None:
        sharding = NamedSharding(aval._sharding.mesh, PartitionSpec(*entries))
    return ShapedArray(shape, aval.dtype, aval.weak_type, sharding=sharding, vma=aval.vma)


def get_aval(x) -> ShapedArray:
    """The abstract value of anything a primitive accepts: a tracer, an Array, NumPy values and
    Python scalars (weakly typed, but for bool). Dtypes are canonicalized (no 64-bit types unless x64 is on)."""
    if isinstance(x, Tracer):
        return x.aval
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if type(x) in python_scalar_types:
        return ShapedArray((), dtypes.python_scalar_dtype(x), weak_type=type(x) is not bool)
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind in "OUSMm":  # objects, strings, dates: no array type holds them
            raise TypeError(
                f"Value of type {type(x).__name__} with dtype {x.dtype} is not a valid tracejit "
                "type: only arrays of numeric types are supported."
            )
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid tracejit type")


_INT64_MAX = 2**63 - 1


def check_result_sizes(primitive, avals, max_bytes: int = _INT64_MAX) -> None:
    """Results no array can hold raise a ValueError here, at trace time: more elements or
    bytes than an int64 counts (XLA would abort the process compiling them). Eager evaluation
    also passes the memory it may allocate (`max_bytes`): more raises at once, as XLA's
    RESOURCE_EXHAUSTED does, where NumPy would make a lazy view that later computations spin
    on for hours."""
    for aval in avals:
        size = math.prod(aval.shape)
        nbytes = size * aval.dtype.itemsize
        if nbytes > _INT64_MAX:
            raise ValueError(
                f"{primitive.name}: a result of shape {aval.shape} and dtype {aval.dtype.name} "
                f"would hold {size} elements ({nbytes} bytes), more than an int64 can count."
            )
        if nbytes > max_bytes:
            raise JaxRuntimeError(
                f"RESOURCE_EXHAUSTED: {primitive.name}: a result of shape {aval.shape} and "
                f"dtype {aval.dtype.name} needs {nbytes} bytes, more than the {max_bytes} "
                "bytes an array may take (config option tracejit_max_array_bytes)."
            )


def shape_of(x) -> tuple:
    """The shape of an operand a wrapper or rule received: an array, a tracer or a Python
    scalar (cheaper than `get_aval(x).shape`)."""
    shape = getattr(x, "shape", None)
    return np.shape(x) if shape is None else shape


# --------------------------------------------------------------------------------------------
# Primitives

primitives: dict[str, Primitive] = {}
"""Every primitive ever made, by name: the rule-coverage tests walk this registry."""


def never_weak(weak_types: list, params: dict) -> bool:
    return False


def weak_if_all_weak(weak_types: list, params: dict) -> bool:
    """Elementwise results are weak only when every operand is (`2. * 3.` is weak)."""
    return all(weak_types)


class Primitive:
    """An elementary operation that every interpreter knows how to handle.

    Its rules are attached where the primitive is defined (see `lax/`): `impl` (NumPy),
    `abstract_eval` (avals in, avals out), `weak_type_rule` (used by both, so eager and traced
    results agree on weak types), and the rules of each transformation in that transformation's
    own registry.
    """

    call_jaxpr_param = None
    """For call primitives (`jit`): the param holding the closed jaxpr the equation calls,
    whose inputs and outputs are the equation's; jaxpr printouts name them alike."""

    def __init__(self, name: str, *, multiple_results: bool = False):
        if name in primitives:
            raise ValueError(f"a primitive named {name!r} already exists")
        self.name = name
        self.multiple_results = multiple_results
        self.weak_type_rule = never_weak
        self.defined_at = _caller_location()
        primitives[name] = self

    def bind(self, *args, **params):
        return _context.trace.process_primitive(self, args, params)

    def def_impl(self, impl):
        self.impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        self.abstract_eval = abstract_eval
        return abstract_eval

    def def_weak_type_rule(self, weak_type_rule):
        """`weak_type_rule(weak_types: list[bool], params: dict) -> bool`: the result's weak
        type from each operand's."""
        self.weak_type_rule = weak_type_rule
        return weak_type_rule

    def impl(self, *args, **params):
        raise NotImplementedError(f"primitive {self.name} has no NumPy implementation")

    def abstract_eval(self, *avals, **params):
        raise NotImplementedError(f"primitive {self.name} has no abstract evaluation rule")

    def params_to_print(self, params: dict) -> dict:
        """The params a jaxpr printout shows; a primitive may hide defaults as JAX does."""
        return params

    def __repr__(self):
        return self.name


# --------------------------------------------------------------------------------------------
# The rules of a primitive, as a reader finds them

rule_registries: dict[str, dict[Primitive, object]] = {}
"""Each transformation's rules by primitive, under the name `describe` lists them by ("jvp",
"transpose", ...). The interpreters add their registries here: core is below them and imports
none of them, so that the dependency points down."""

declarations: dict[str, dict[Primitive, object]] = {}
"""What a primitive's block declares about its rules, by primitive, under the declaration's name
("linear in operands", "not differentiable", ...): which operands, or why a rule is absent. The
rule-coverage test reads them; their owners add them here as they do their registries."""

trace_methods: dict[Primitive, str] = {}
declarations["processed by trace method"] = trace_methods


def processed_by_trace_method(primitive: Primitive, method: str) -> None:
    """Declares that every trace interprets `primitive` with its own method `method` (such as
    `Trace.process_custom_jvp_call`) instead of the rule registries: it needs no JVP or batching
    rule. A lowering rule it still needs: lowering is no trace."""
    trace_methods[primitive] = method


# The order of a primitive's block (docs/layout.md); registries not named here are listed last.
_BLOCK_ORDER = ("jvp", "partial eval", "transpose", "batching", "collective", "lowering")


def describe(primitive: Primitive) -> str:
    """Every rule of `primitive` with the file and line that defines it, and what its block
    declares instead of a rule: where to look when a transformation of it goes wrong.

        >>> print(describe(mul_p))
        mul, defined at tracejit/_src/lax/binary.py:178
          impl                numpy.multiply
          ...
          jvp                 defjvp.<locals>.rule  tracejit/_src/interpreters/ad.py:194
          partial eval        none
          transpose           _mul_transpose  tracejit/_src/lax/binary.py:193
          ...
          linear in operands  0, 1
    """
    own = vars(primitive)  # rules set by def_impl & co.; the class defaults only raise
    rows = [
        ("impl", _rule_location(own.get("impl"))),
        ("abstract eval", _rule_location(own.get("abstract_eval"))),
        ("weak type", _rule_location(own.get("weak_type_rule"))),
    ]
    for name in sorted(rule_registries, key=_block_position):
        rows.append((name, _rule_location(rule_registries[name].get(primitive))))
    for name, declared in declarations.items():
        if primitive in declared:
            rows.append((name, _declared_value(declared[primitive])))
    lines = [f"{primitive.name}, defined at {primitive.defined_at}"]
    width = max(len(name) for name, _ in rows)
    lines += [f"  {name:<{width}}  {text}" for name, text in rows]
    return "\n".join(lines)


def _block_position(registry_name: str) -> int:
    if registry_name in _BLOCK_ORDER:
        return _BLOCK_ORDER.index(registry_name)
    return len(_BLOCK_ORDER)


def _declared_value(value) -> str:
    """A declaration's value: a reason, or operand indices (none given: any operand)."""
    if isinstance(value, tuple):
        return ", ".join(map(str, value)) or "any"
    return str(value)


def _rule_location(rule) -> str:
    """`qualname  path:line` of a rule, through wrappers (`functools.partial`, `quiet`) to the
    function a reader wants; NumPy's by name."""
    if rule is None:
        return "none"
    while isinstance(rule, functools.partial) or hasattr(rule, "__wrapped__"):
        rule = rule.func if isinstance(rule, functools.partial) else rule.__wrapped__
    code = getattr(rule, "__code__", None)
    if code is None and not hasattr(rule, "__qualname__"):
        rule = type(rule).__call__  # a callable object
        code = getattr(rule, "__code__", None)
    if code is None:
        return f"{rule.__module__}.{rule.__qualname__}"
    return f"{rule.__qualname__}  {_short_path(code.co_filename)}:{code.co_firstlineno}"


_package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _short_path(filename: str) -> str:
    """Files of tracejit relative to the directory holding the package; others as they are."""
    path = os.path.abspath(filename)
    return os.path.relpath(path, _package_root) if path.startswith(_package_root + os.sep) else path


def _caller_location() -> str:
    """`path:line` of the code making a primitive (past subclasses' `__init__`s)."""
    frame = sys._getframe(2)
    while frame.f_code.co_name == "__init__":
        frame = frame.f_back
    return f"{_short_path(frame.f_code.co_filename)}:{frame.f_lineno}"


# --------------------------------------------------------------------------------------------
# Traces and tracers


class Trace:
    """An interpreter of primitives. Subclasses implement `process_primitive`.

    `parent` is the trace that was current when this one was made: a transformation computes
    its own values by binding primitives on its parent.
    """

    checks_leaks = False
    """Whether `jax_check_tracer_leaks` looks for this trace's tracers when it ends (JAX looks
    for those of jit's and vmap's traces)."""

    def __init__(self, parent: Trace | None):
        self.parent = parent
        self.is_valid = True

    @property
    def main(self) -> Trace:
        """What identifies this transformation among others of its kind: the trace itself (JAX
        keeps `trace.main` for libraries that tell their own tracers apart by it)."""
        return self

    def process_primitive(self, primitive: Primitive, args, params):
        raise NotImplementedError

    def process_custom_jvp_call(self, primitive, call, args):
        """A function with a custom JVP rule (`custom_derivatives.CustomJVPCall`). Traces that
        do not differentiate or stage just run the function."""
        return call.fun(*args)

    def process_custom_vjp_call(self, primitive, call, args):
        """A function with custom forward/backward rules (`custom_derivatives.CustomVJPCall`)."""
        return call.fun(*args)

    def invalidate(self):
        self.is_valid = False

    def describe(self) -> str:
        """Says, for error messages, what this trace is doing (`tracing f for make_jaxpr`)."""
        return type(self).__name__

    def __repr__(self):
        return type(self).__name__


class Tracer:
    """A value being traced: stands for an array within one trace.

    Arithmetic operators and methods are attached by `tracejit.numpy` (they bind primitives);
    what is defined here is what every tracer shares: its aval-derived properties and the
    conversions to Python values, which need a concrete value the trace may not have.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return dtypes.user_dtype(self.aval.dtype)

    @property
    def ndim(self):
        return self.aval.ndim

    @property
    def size(self):
        return self.aval.size

    @property
    def weak_type(self):
        return self.aval.weak_type

    def to_concrete_value(self):
        """The NumPy value behind this tracer when the trace knows it (e.g. the primal of a JVP
        tracer under eager evaluation), else None."""
        return

    # A tracer that carries a derivative (a JVP tracer) has a concrete value under eager
    # evaluation, but converting it to a Python float or a NumPy array would silently drop
    # the derivative: those conversions raise on it. int(), __index__() and bool() don't (an
    # integer or a truth value has a zero derivative, so nothing is lost).
    carries_derivative = False

    def _concrete_or_raise(self, error_type, operation: str, keeps_derivative=True):
        value = (
            None if self.carries_derivative and not keeps_derivative else self.to_concrete_value()
        )
        if value is None:
            raise concretization_error(self, error_type, operation)
        return value

    def __bool__(self):
        return bool(self._concrete_or_raise(TracerBoolConversionError, "bool()"))

    def __int__(self):
        return int(self._concrete_or_raise(ConcretizationTypeError, "int()"))

    def __index__(self):
        return int(self._concrete_or_raise(TracerIntegerConversionError, "__index__()"))

    def __float__(self):
        return float(self._concrete_or_raise(ConcretizationTypeError, "float()", False))

    def __complex__(self):
        return complex(self._concrete_or_raise(ConcretizationTypeError, "complex()", False))

    def __array__(self, dtype=None, copy=None):
        value = self._concrete_or_raise(TracerArrayConversionError, "numpy.asarray()", False)
        return np.asarray(value, dtype=dtype)

    def item(self):
        """Raises on a JVP tracer too, where JAX returns the primal and drops the derivative."""
        return self._concrete_or_raise(ConcretizationTypeError, ".item()", False).item()

    def tolist(self):
        value = self._concrete_or_raise(ConcretizationTypeError, ".tolist()", False)
        return np.asarray(value).tolist()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def __setitem__(self, index, value):
        raise TypeError(
            f"{type(self).__name__!r} object does not support item assignment: tracejit arrays "
            "are immutable. Use x.at[idx].set(y) (or .add, .mul, .min, .max) for an updated copy."
        )

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{self._trace!r}>"


_ABSTRACT = "Abstract tracer value encountered where concrete value is expected"


def _conversion_message(operation: str, shape: str) -> str:
    """JAX 0.10.2's first lines for needing a concrete value (`shape` such as int32[3])."""
    if operation == "bool()":
        return f"Attempted boolean conversion of traced array with shape {shape}."
    if operation == "__index__()":
        return f"The __index__() method was called on traced array with shape {shape}"
    if operation == "numpy.asarray()":
        return (
            "The numpy.ndarray conversion method __array__() was called on traced array with "
            f"shape {shape}"
        )
    first = f"{_ABSTRACT}: traced array with shape {shape}\n"
    if operation == ".item()":
        return first + "This occurred in the item() method of jax.Array"
    if operation == ".tolist()":
        return first + f"The tolist() method was called on traced array with shape {shape}."
    function = operation.removesuffix("()")  # int, float, complex
    return first + (
        f"The problem arose with the `{function}` function. If trying to convert the data type "
        f"of a value, try using `x.astype({function})` or `jnp.array(x, {function})` instead."
    )


_ADVICE = {
    TracerBoolConversionError: (
        "Python control flow (`if`, `while`, `and`/`or`) cannot branch on a traced value. "
        "Use lax.cond or lax.select/jnp.where for value-dependent branches, lax.while_loop "
        "for loops, or mark the argument static with static_argnums/static_argnames"
    ),
    TracerIntegerConversionError: (
        "An integer Python value is needed (e.g. for a shape, an index or range()). "
        "Use lax.dynamic_slice/lax.fori_loop for value-dependent indexing and loops, or mark "
        "the argument static with static_argnums/static_argnames"
    ),
    TracerArrayConversionError: (
        "NumPy functions cannot operate on traced values: use tracejit.numpy (jnp) instead "
        "of numpy inside transformed functions"
    ),
    ConcretizationTypeError: (
        "Use lax.cond/lax.while_loop for value-dependent control flow, or mark the argument "
        "static with static_argnums/static_argnames"
    ),
}


def concretization_error(tracer: Tracer, error_type, operation: str) -> Exception:
    """The error for needing a concrete value from `tracer`: JAX's first lines, then the
    user's line and what to do instead."""
    aval = tracer.aval
    what = _conversion_message(operation, aval.str_short(short_dtypes=False))
    if tracer.carries_derivative:
        why = "converting it to a Python or NumPy value would silently drop its derivative"
    else:
        why = f"the value is only known abstractly there ({aval.str_short()}), not as a concrete Python value"
    return error_type(
        f"{what}\nThe error occurred at {describe_user_location()}, {tracer._trace.describe()}: "
        f"{why}.\n{_ADVICE[error_type]}."
    )


def escaped_tracer_error(tracer: Tracer) -> UnexpectedTracerError:
    created = getattr(tracer, "creation_site", None)
    made = f" It was created at {created}." if created else ""
    return UnexpectedTracerError(
        f"Encountered an unexpected tracer: {tracer!r}, from a transformation that has already "
        f"finished ({tracer._trace.describe()}).{made} A traced value escaped its function "
        "(through a global, an attribute or a closure) and was used later at "
        f"{describe_user_location()}. Return traced values from the transformed function "
        "instead of storing them."
    )


# --------------------------------------------------------------------------------------------
# The current trace


class _TraceContext(threading.local):
    trace: Trace = None  # the root eval trace, installed as a class default by interpreters/eval


_context = _TraceContext()


def current_trace() -> Trace:
    return _context.trace


def find_top_trace(xs) -> Trace:
    """The trace an operation on the values `xs` runs on: that of the innermost tracer among
    them (the one whose trace descends from all the others'), else the current trace."""
    traces = {x._trace for x in xs if isinstance(x, Tracer)}
    if not traces:
        return current_trace()

    def depth(trace):
        return 0 if trace is None else 1 + depth(trace.parent)

    return max(traces, key=depth)


class OpaqueTraceState:
    """Which trace is current, for a library to compare later (flax checks that a module's
    variables are used under the trace they were made in): equal while the same trace is."""

    __slots__ = ("_hash", "_trace")

    def __init__(self, trace: Trace):
        self._trace = weakref.ref(trace)  # (a trace that ended equals only itself)
        self._hash = hash(self._trace)

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace == other._trace

    def __hash__(self):
        return self._hash


def get_opaque_trace_state(convention=None) -> OpaqueTraceState:
    """JAX's `jax.extend.core.get_opaque_trace_state`; `convention` names the caller (JAX
    accepts "flax") and changes nothing here."""
    return OpaqueTraceState(current_trace())


def set_root_trace(trace: Trace) -> None:
    """Installs the trace every thread starts with (the eval trace)."""
    _TraceContext.trace = trace


@contextmanager
def set_current_trace(trace: Trace):
    """Makes `trace` interpret primitives within the block: how a trace binds on its parent."""
    previous = _context.trace
    _context.trace = trace
    try:
        yield trace
    finally:
        _context.trace = previous


@contextmanager
def new_trace(trace: Trace):
    """Runs the block under a freshly made trace, then invalidates it so that its tracers can
    no longer be used: the scope of one transformation."""
    previous = _context.trace
    _context.trace = trace
    try:
        yield trace
    finally:
        _context.trace = previous
        trace.invalidate()
    if config.check_tracer_leaks and trace.checks_leaks:
        check_leaks(trace)


# --------------------------------------------------------------------------------------------
# jax_check_tracer_leaks


def check_leaks(trace: Trace) -> None:
    """Raises JAX's `Exception("Leaked trace ...")` if a tracer of `trace`, which has ended, is
    still held by anything but the functions running now: a global, or an object a global
    holds. Followed back through referrers to a module's namespace; frames are not followed
    (the transformation's own locals still hold its tracers while it returns)."""
    gc.collect()
    referrers = gc.get_referrers(trace)
    leaked = []
    for tracer in referrers:
        if isinstance(tracer, Tracer):
            chain = _global_holder(tracer, {id(referrers), id(leaked)})
            if chain is not None:
                leaked.append(f"{tracer!r}\n{chain}")
    if leaked:  # JAX raises a plain Exception
        message = f"Leaked trace {trace!r}. Leaked tracer(s):\n\n" + "\n".join(leaked)
        raise Exception(message)  # noqa: TRY002


def _global_holder(obj, ignored: set, max_objects: int = 10_000) -> str | None:
    """How a module's namespace holds `obj` ("<list 1> is referred to by __main__.leaked"), or
    None; the objects whose ids are `ignored` (the checker's own lists) are not followed."""
    namespaces = {id(vars(m)): name for name, m in list(sys.modules.items()) if m is not None}
    held = {id(obj): None}  # id of a referrer -> the object it refers to, towards obj
    queue = [obj]
    ignored = ignored | {id(held), id(queue)}
    while queue and len(held) < max_objects:
        current = queue.pop(0)
        referrers = gc.get_referrers(current)
        ignored.add(id(referrers))
        for referrer in referrers:
            if id(referrer) in held or id(referrer) in ignored:
                continue
            if isinstance(referrer, types.FrameType):
                continue
            if id(referrer) in namespaces:
                names = [k for k, v in referrer.items() if v is current] or ["?"]
                where = f"{namespaces[id(referrer)]}.{names[0]}"
                return _chain(current, where, held)
            held[id(referrer)] = current
            queue.append(referrer)
    return None


def _chain(holder, where: str, held: dict) -> str:
    lines = [f"<{type(holder).__name__} {id(holder)}> is referred to by {where}"]
    child = held[id(holder)]
    while child is not None:
        lines.insert(
            0,
            f"<{type(child).__name__} {id(child)}> is referred to by "
            f"<{type(holder).__name__} {id(holder)}>",
        )
        holder, child = child, held[id(child)]
    return "\n".join(lines)
