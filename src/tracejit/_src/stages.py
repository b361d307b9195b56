"""The stages of ahead-of-time compilation, as `jax.stages` names them: a jitted function
traced for one signature (`jit(f).trace(...)`: `Traced`, its jaxpr), lowered (`.lower()`:
`Lowered`, its StableHLO) and compiled (`.compile()`: `Compiled`, callable).

Every stage describes the same signature the same way, as JAX does: the dynamic arguments as
the user's pytree `(args, kwargs)` (`in_tree`), their types (`in_avals`) and donation
(`args_info`, of `ArgInfo`s), and the results (`out_info`, of `ShapeDtypeStruct`s). Static
arguments are part of the signature, so they are given to `trace`/`lower` and not to the
`Compiled` program.
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dispatch, dtypes
from tracejit._src.api_util import ShapeDtypeStruct
from tracejit._src.jaxpr import ClosedJaxpr
from tracejit._src.lowering.lower import lower_jaxpr_to_module
from tracejit._src.tree_util import tree_flatten, tree_unflatten


class ArgInfo:
    """One argument of a staged function: its type and whether its buffer is donated."""

    __slots__ = ("_aval", "donated")

    def __init__(self, aval, donated: bool):
        self._aval = aval
        self.donated = donated

    @property
    def shape(self) -> tuple:
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype

    def __repr__(self):
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"

    def __eq__(self, other):
        return isinstance(other, ArgInfo) and (self._aval, self.donated) == (
            other._aval,
            other.donated,
        )

    def __hash__(self):
        return hash((self._aval, self.donated))


class Signature:
    """What `jit` traced for one call: the closed jaxpr of the flat function and how its flat
    inputs and outputs are the user's pytrees; `donated`: a flag per flat input, or None;
    `donate_argnums`: the positions given to `jit` (static ones left out)."""

    def __init__(self, jaxpr: ClosedJaxpr, fun_name: str, in_tree, out_tree, donated, **options):
        self.jaxpr = jaxpr
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.donated = donated
        self.donate_argnums = options["donate_argnums"]
        self.keep_unused = options["keep_unused"]
        self.compiler_options = options["compiler_options"]  # sorted (name, value) pairs


class _Stage:
    """The description of the signature that every stage gives."""

    def __init__(self, signature: Signature):
        self._signature = signature

    @property
    def fun_name(self) -> str:
        return self._signature.fun_name

    @property
    def in_tree(self):
        return self._signature.in_tree

    @property
    def out_tree(self):
        return self._signature.out_tree

    @property
    def donate_argnums(self) -> tuple:
        return self._signature.donate_argnums

    @property
    def in_avals(self):
        return tree_unflatten(self.in_tree, self._signature.jaxpr.in_avals)

    @property
    def out_avals(self):
        return tree_unflatten(self.out_tree, self._signature.jaxpr.out_avals)

    @property
    def args_info(self):
        avals = self._signature.jaxpr.in_avals
        donated = self._signature.donated or (False,) * len(avals)
        infos = [ArgInfo(a, d) for a, d in zip(avals, donated, strict=True)]
        return tree_unflatten(self.in_tree, infos)

    @property
    def out_info(self):
        structs = [ShapeDtypeStruct(a.shape, a.dtype) for a in self._signature.jaxpr.out_avals]
        return tree_unflatten(self.out_tree, structs)


class Traced(_Stage):
    """A jitted function traced for one signature: `jaxpr` is what it computes."""

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._signature.jaxpr

    def lower(self, *, lowering_platforms=None) -> Lowered:
        if lowering_platforms not in (None, ("cpu",), ["cpu"]):
            raise NotImplementedError(
                f"lowering for platforms {lowering_platforms}: tracejit lowers for the CPU only"
            )
        return Lowered(self._signature)


class Lowered(_Stage):
    """A jitted function lowered for one signature: its StableHLO module."""

    def as_text(self) -> str:
        signature = self._signature
        kept, aliases = dispatch.plan_parameters(
            signature.jaxpr, signature.donated, signature.keep_unused, stacklevel=3
        )
        return lower_jaxpr_to_module(
            signature.jaxpr, f"jit_{signature.fun_name}", kept_inputs=kept, aliases=aliases
        )

    def compile(self, compiler_options=None) -> Compiled:
        """The program compiled; `compiler_options` (XLA debug options by name) are added to
        those `jit` was given."""
        signature = self._signature
        options = dict(signature.compiler_options)
        options.update(compiler_options or {})
        program = dispatch.compile_program(
            signature.jaxpr,
            signature.fun_name,
            signature.donated,
            signature.keep_unused,
            compiler_options_key(options),
        )
        return Compiled(signature, program)


class Compiled(_Stage):
    """A jitted function compiled for one signature: call it with arguments of that signature
    (static arguments left out: they are compiled in)."""

    def __init__(self, signature: Signature, program):
        super().__init__(signature)
        self._program = program

    def as_text(self) -> str:
        return self._program.as_text()

    def cost_analysis(self):
        return self._program.cost_analysis()

    def __call__(self, *args, **kwargs):
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != self.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was "
                f"called with: compiled for {self.in_tree}, called with {in_tree}"
            )
        avals = self._signature.jaxpr.in_avals
        mismatches = [
            f"Argument {i} compiled with {_spelled(aval.dtype, aval.shape)} and called with "
            f"{_spelled(dtypes.dtype_of(leaf), np.shape(leaf))}"
            for i, (leaf, aval) in enumerate(zip(leaves, avals, strict=True))
            if not _fits(leaf, aval)
        ]
        if mismatches:
            raise TypeError(
                "Argument types differ from the types for which this computation was compiled. "
                "The mismatches are:\n" + "\n".join(mismatches)
            )
        return tree_unflatten(self.out_tree, self._program(leaves))


def _fits(leaf, aval) -> bool:
    """An argument of the shape and dtype compiled for (a Python scalar's dtype is its default
    one; weak types do not matter), as JAX checks."""
    return np.shape(leaf) == aval.shape and dtypes.dtype_of(leaf) == aval.dtype


def _spelled(dtype, shape) -> str:
    return f"{dtype}{list(shape)}"


def compiler_options_key(options) -> tuple:
    """`compiler_options` as sorted (name, value) pairs: hashable, for the compile caches."""
    if options is None:
        return ()
    if not isinstance(options, dict):
        raise TypeError(f"compiler_options must be a dict, got {type(options).__name__}")
    return tuple(sorted(options.items()))
