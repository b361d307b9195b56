"""Collectives whose members span several processes: XLA within a process, MPI between them.

A `pmap` over the devices of every process (`distributed.py`) compiles, in each process, a
program of as many replicas as the process has devices; its mapped axis has the global size
(process count x local devices), member p * L + r being replica r of process p. Each collective
over that axis is lowered in two parts (`parallel.cross_process_rules`):

1. its part among the process's replicas, by the rule of one process (an `all_reduce` of the L
   local values, an `all_gather` of the L local blocks, ...): XLA's own collectives;
2. an *exchange*: a `stablehlo.custom_call` into Python (`runtime/ffi.py`) taking the local
   result and the replica's id. The L replica threads meet at a rendezvous; the last to arrive
   exchanges the process's part with the other processes over MPI, once for the process, and
   each replica takes its result from that (a process of one replica goes straight to MPI,
   without the rendezvous or the replica id):

    %l = "stablehlo.all_reduce"(%x) {replica_groups = dense<[[0, 1]]> ...}
    %r = "stablehlo.replica_id"() : () -> tensor<ui32>
    %s, %q1 = "stablehlo.custom_call"(%l, %r, %q0) {call_target_name = "tracejit_host_callback",
                                                    has_side_effect = true, ...}

Matching the processes' MPI calls. XLA runs a program's independent operations in whatever
order its threads take them, not the same in every process; MPI's collectives must be entered
in the same order everywhere and cannot be told apart. So each exchange is a *site* (its
position in its program) whose messages are point-to-point, tagged with the site: an
all-reduce by recursive doubling (log2 P rounds of pairwise exchange), an all-gather by one
message to every other process. And the exchanges of a block are chained by a sequence value
(`%q0` -> `%q1`), so that they run in program order everywhere and no thread waits in an
exchange that the other processes cannot reach yet.

The first call of each exchange compares what every process brings to it (collective, shape,
dtype) and fails in all of them, naming each process's shapes, if they differ: the cheap check
that catches processes running different programs. Gradients need nothing here: the transposes
of the collectives are collectives, lowered the same way.

Memory. An exchange writes its result into the buffer XLA hands it, fresh on every call; a
large one is first given huge pages (see `advise_huge_pages`). An all-reduce of a donated
operand that nothing else reads writes its result over the operand instead
(`overwritable`), and XLA then allocates no result at all.
"""

from __future__ import annotations

import math
import sys
import threading
import weakref
from collections import Counter
from dataclasses import dataclass

import numpy as np

from tracejit._src import distributed, dtypes, runtime
from tracejit._src.core import ShapedArray
from tracejit._src.jaxpr import Var
from tracejit._src.lax import parallel, parallel_exchanges, shapes
from tracejit._src.lowering import stablehlo as hlo
from tracejit._src.lowering.lower import LoweringContext


@dataclass(frozen=True)
class ProcessSpan:
    """A named axis of `size` members spread over `process_count` processes, `local_size` in
    each: this process (`process_index`) holds members `process_index * local_size + r`.
    `overwritable`: the variables of the program's body whose buffers its exchanges may write
    their results into (see `overwritable`)."""

    name: object
    local_size: int
    process_count: int
    process_index: int
    overwritable: frozenset = frozenset()

    @property
    def size(self) -> int:
        return self.local_size * self.process_count

    @property
    def first(self) -> int:
        return self.process_index * self.local_size


def span_of(name, local_size: int, overwritable: frozenset = frozenset()) -> ProcessSpan:
    return ProcessSpan(
        name, local_size, distributed.process_count(), distributed.process_index(), overwritable
    )


_RESHAPES = (shapes.squeeze_p, shapes.reshape_p)


def overwritable(jaxpr, aliased_inputs) -> frozenset:
    """The variables of a pmapped body that an exchange may overwrite with its result: an
    input whose buffer the caller donated and an output reuses (`aliased_inputs`, positions),
    or a squeeze or reshape of one (pmap squeezes each member's block), read by nothing else.

    An exchange of such an operand declares its result an alias of it
    (`output_operand_aliases`): XLA then gives the result the donated buffer instead of a
    fresh one, and the exchange runs in place. Any other operand XLA would first copy (an
    argument the caller keeps, or a value read again later), which costs more than the fresh
    buffer it spares."""
    uses = Counter(v for eqn in jaxpr.eqns for v in eqn.invars if isinstance(v, Var))
    uses.update(v for v in jaxpr.outvars if isinstance(v, Var))
    free = {jaxpr.invars[i] for i in aliased_inputs if uses[jaxpr.invars[i]] == 1}
    for eqn in jaxpr.eqns:
        if eqn.primitive in _RESHAPES and eqn.invars[0] in free and uses[eqn.outvars[0]] == 1:
            free.add(eqn.outvars[0])
    return frozenset(free)


# --- MPI on host arrays ---------------------------------------------------------------------
# An exchange is identified by its site: its position among the exchanges of its program, the
# same in every process. Its MPI messages are point-to-point ones tagged with the site (and
# the round within the exchange), so that they pair up whatever order the processes run the
# program's exchanges in (XLA may run independent ones in any order, and MPI's collectives
# have no tags to tell them apart); between two processes, MPI delivers messages of one tag
# in the order sent, which keeps the rounds of a loop and consecutive programs apart.

_ROUNDS = 32  # tags per site: one per round of recursive doubling, the last for the check
_REDUCERS = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def _tag(site: int, round_: int) -> int:
    return site * _ROUNDS + round_


def _bytes(array: np.ndarray) -> np.ndarray:
    return array.reshape(-1).view(np.uint8)


def allreduce(data: np.ndarray, op: str, site: int, what: str, out: np.ndarray, in_place=None):
    """`out` = the elementwise `op` ('sum', 'max', 'min') of every process's `data`, the same
    bits in every process. With a power of 2 of processes: by recursive doubling (log2 P
    rounds, each pair combining the lower process's value with the higher's) for small
    messages, and for large ones (`_SCATTER_FROM` bytes) Rabenseifner's algorithm, which
    reduces each process's share only (recursive halving) and then gathers the shares
    (recursive doubling): half the arithmetic and memory traffic, as MPI's own all-reduce
    does. Otherwise over the gathered values, in process order. The first round receives
    straight into `out` and sends `data`: with 2 processes no copy and no second buffer.

    `in_place` (a `KeptScratch`): `out` is `data`'s memory (the result of a donated operand,
    see `overwritable`), and the rounds receive into the scratch buffer instead; the bits are
    the same."""
    group = distributed.group()
    count = group.process_count
    reduce = _REDUCERS[op]
    if count & (count - 1):
        out[...] = reduce.reduce(allgather(data, site, what), axis=0)
        return
    with group.watchdog.watching(what):
        if out.nbytes < _SCATTER_FROM or out.size < count:
            _recursive_doubling(group, data, out, reduce, site, in_place)
        else:
            data, out = data.reshape(-1), out.reshape(-1)
            _reduce_scatter_then_gather(group, data, out, reduce, site, in_place)


_SCATTER_FROM = 1 << 16


class KeptScratch:
    """The receive buffer of an in-place exchange, kept from call to call (a site runs one
    call at a time): a fresh one would have its pages faulted in, and zeroed, on every call,
    which is what donating the operand spares."""

    __slots__ = ("array",)

    def __init__(self):
        self.array = None

    def take(self, size: int, dtype) -> np.ndarray:
        if self.array is None or self.array.size < size:
            self.array = np.empty(size, dtype)
        return self.array[:size]


def _recursive_doubling(group, data, out, reduce, site: int, in_place) -> None:
    comm, me, mine = group.program_comm, group.process_index, data
    received = out if in_place is None else in_place.take(out.size, out.dtype).reshape(out.shape)
    for round_ in range(group.process_count.bit_length() - 1):
        partner = me ^ (1 << round_)
        tag = _tag(site, round_)
        if received is out and round_ == 1:
            received = np.empty_like(out)
        comm.Sendrecv(_bytes(mine), partner, tag, _bytes(received), partner, tag)
        if partner < me:
            reduce(received, mine, out=out)
        else:
            reduce(mine, received, out=out)
        mine = out


def _reduce_scatter_then_gather(group, data, out, reduce, site: int, in_place) -> None:
    """Process p ends the halving owning block p of `out` (a P-th of it), fully reduced by
    itself alone; the doubling then copies every block everywhere, so the bits agree. The
    first round receives into the half of `out` it keeps, unless that is `data`'s memory
    (`in_place`); later rounds, into a scratch buffer of the size they first need."""
    comm, me, count = group.program_comm, group.process_index, group.process_count
    bounds = [out.size * b // count for b in range(count + 1)]  # block b: bounds[b:b + 2]

    def blocks(first: int, size: int) -> slice:
        return slice(bounds[first], bounds[first + size])

    first, size, mine, scratch, round_ = 0, count, data, None, 0
    while size > 1:  # recursive halving: keep the half of the blocks that holds block `me`
        size //= 2
        partner = me ^ size
        kept = first + size if me & size else first
        given = first if me & size else first + size
        held = out[blocks(kept, size)]
        if mine is data and in_place is None:
            received = held
        else:
            if scratch is None:
                scratch = (
                    np.empty(held.size, out.dtype)
                    if in_place is None
                    else in_place.take(held.size, out.dtype)
                )
            received = scratch[: held.size]
        tag = _tag(site, round_)
        sent = mine[blocks(given, size)]
        comm.Sendrecv(_bytes(sent), partner, tag, _bytes(received), partner, tag)
        reduce(mine[blocks(kept, size)], received, out=held)
        mine, first, round_ = out, kept, round_ + 1
    while size < count:  # recursive doubling: swap the blocks held with the partner's
        partner = me ^ size
        theirs = first ^ size
        tag = _tag(site, round_)
        ours, received = out[blocks(first, size)], out[blocks(theirs, size)]
        comm.Sendrecv(_bytes(ours), partner, tag, _bytes(received), partner, tag)
        first, size, round_ = min(first, theirs), size * 2, round_ + 1


def allgather(data: np.ndarray, site: int, what: str, out: np.ndarray | None = None):
    """Every process's `data` (all of one shape), stacked in process order (into `out`, of
    that size, when given); moved as bytes."""
    group = distributed.group()
    count, me = group.process_count, group.process_index
    if out is None:
        out = np.empty((count, *data.shape), data.dtype)
    send = _bytes(np.ascontiguousarray(data))
    received = out.reshape(count, -1).view(np.uint8)
    received[me] = send
    tag = _tag(site, 0)
    comm = group.program_comm
    requests = []
    for other in range(count):
        if other != me:
            requests += [comm.Isend(send, other, tag), comm.Irecv(received[other], other, tag)]
    with group.watchdog.watching(what):
        group.mpi.Request.Waitall(requests)
    return out


def check_same_everywhere(signature: str, site: int) -> None:
    """Raises in every process, naming each one's `signature`, unless all are equal."""
    group = distributed.group()
    comm, me, tag = group.program_comm, group.process_index, _tag(site, _ROUNDS - 1)
    others = [p for p in range(group.process_count) if p != me]
    with group.watchdog.watching(signature):
        sent = [comm.isend(signature, p, tag) for p in others]
        signatures = {p: comm.recv(source=p, tag=tag) for p in others}
        group.mpi.Request.waitall(sent)
    signatures[me] = signature
    if len(set(signatures.values())) > 1:
        listed = "; ".join(f"process {p}: {signatures[p]}" for p in sorted(signatures))
        raise ValueError(
            f"the processes entered a collective with different operands ({listed}): every "
            "process must run the same program on arrays of the same shapes"
        )


# --- result buffers in huge pages ------------------------------------------------------------
# XLA allocates each call's results afresh, in pages of 4 KiB that the kernel faults in, and
# zeroes, one at a time as MPI first writes them; MPI's shared-memory transport then copies
# such memory page by page too. At 64 MB that was three quarters of an all-reduce's time (a
# 32 MB message took 17 ms into a fresh XLA buffer, 1.7 ms between NumPy arrays). NumPy
# advises the kernel to back its own arrays of 4 MiB and more with transparent huge pages of
# 2 MiB (`madvise(MADV_HUGEPAGE)`, honoured where the system's THP mode is `always` or
# `madvise`); an exchange gives its result buffers the same advice before it writes them.
# The advice is a hint about memory XLA hands us to fill: the values are the same either way.

_HUGE_PAGE = 1 << 21
_ADVISED_FROM = 1 << 22  # bytes: NumPy's threshold for the same advice
_MADV_HUGEPAGE = 14  # Linux's <sys/mman.h>
_libc: list = []  # [(cffi FFI, the C library)], or [None] where there is no such advice
_libc_lock = threading.Lock()


def _the_libc():
    if not _libc:
        with _libc_lock:
            if not _libc:
                found = None
                if sys.platform == "linux":
                    import cffi  # (as the runtime does: ABI mode, no compiler)

                    ffi = cffi.FFI()
                    ffi.cdef("int madvise(void *addr, size_t length, int advice);")
                    found = ffi, ffi.dlopen(None)
                _libc.append(found)
    return _libc[0]


def advise_huge_pages(array: np.ndarray) -> None:
    """Asks for huge pages under the whole 2 MiB pages of `array`'s memory, before anything
    is written there: the kernel then faults it in 2 MiB at a time. (An exchange asks only
    for results of `_ADVISED_FROM` bytes or more: smaller ones are left the call.)"""
    libc = _the_libc()
    if libc is None:
        return
    ffi, c = libc
    start = array.__array_interface__["data"][0]
    first = -(-start // _HUGE_PAGE) * _HUGE_PAGE
    end = (start + array.nbytes) // _HUGE_PAGE * _HUGE_PAGE
    if end > first:
        c.madvise(ffi.cast("void *", first), end - first, _MADV_HUGEPAGE)  # (a hint: no check)


# --- the rendezvous of a process's replicas ---------------------------------------------------


class _Round:
    __slots__ = ("arrived", "done", "error", "outs")

    def __init__(self, local_size: int):
        self.arrived = 0
        self.done = False
        self.error = None
        self.outs = [None] * local_size  # each replica's result buffer


class Exchange:
    """One collective site of a compiled program (the function of its host callback).

    Each of the `local_size` replicas calls it with its operand, its replica id and its result
    buffer (`out`; the sequence values that order the exchanges never reach Python: the host
    callback is `sequenced`), once per execution of the site (a loop calls it again: calls are
    counted per replica, so the k-th calls of all replicas meet). The last to arrive runs
    `compute(operand, out, site)` for the process (after checking `signature` against the
    other processes' on the first round), which either writes the result of every replica
    into its own `out` or returns a list of one result per replica; it then fills the other
    replicas' buffers itself while they wait, so that each of them needs one wake-up.
    `large_results`: each replica's result buffer is asked for huge pages first."""

    def __init__(self, local_size: int, compute, signature: str, site: int, large_results: bool):
        self.local_size = local_size
        self.compute = compute
        self.signature = signature
        self.site = site
        self.large_results = large_results
        self.condition = threading.Condition()
        self.calls = [0] * local_size
        self.rounds: dict[int, _Round] = {}

    def alone(self, operand, *, out):
        """The call of a process's one replica: no rendezvous (and no replica id)."""
        (out,) = out
        if self.large_results:
            advise_huge_pages(out)
        if self.calls[0] == 0:
            check_same_everywhere(self.signature, self.site)
        self.calls[0] += 1
        results = self.compute(operand, out, self.site)
        if results is not None:
            np.copyto(out, results[0])

    def __call__(self, operand, replica, *, out):
        (out,) = out
        if self.large_results:
            advise_huge_pages(out)
        r = int(replica)
        with self.condition:
            k = self.calls[r]
            self.calls[r] += 1
            round_ = self.rounds.get(k)
            if round_ is None:
                round_ = self.rounds[k] = _Round(self.local_size)
            round_.outs[r] = out
            round_.arrived += 1
            if round_.arrived == self.local_size:
                del self.rounds[k]  # (the last to arrive leads, below)
            else:
                while not round_.done:
                    self.condition.wait()
                if round_.error is not None:
                    raise round_.error
                return
        self._lead(round_, k, operand, r)
        if round_.error is not None:
            raise round_.error

    def _lead(self, round_, k: int, operand, r: int) -> None:
        out = round_.outs[r]
        try:
            if k == 0:
                check_same_everywhere(self.signature, self.site)
            results = self.compute(operand, out, self.site)
            for q, other in enumerate(round_.outs):
                if q != r:
                    np.copyto(other, out if results is None else results[q])
            if results is not None:
                np.copyto(out, results[r])
        except BaseException as error:  # noqa: BLE001 (every replica raises it)
            round_.error = error
        with self.condition:
            round_.done = True
            self.condition.notify_all()


class _ModuleExchanges:
    """The exchanges lowered into one module so far: how many (the next one's site), and the
    sequence value each block's last one returned."""

    def __init__(self):
        self.sites = 0
        self.last_in_block: dict[int, object] = {}


_exchanges_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Module -> its exchanges
_SEQUENCE = ShapedArray((), np.dtype(np.uint32))


def _exchange(ctx, operand, operand_aval, result_aval, compute, what: str, in_place=False):
    """Emits the custom call through which the replicas of this process run `compute` once
    (see `Exchange`); returns its result Value. `in_place`: the result takes the operand's
    buffer (see `overwritable`).

    XLA may run a program's independent operations in any order, and in another order in
    another process. Each exchange therefore takes a sequence value that the one before it in
    the same block returned: the exchanges of a block run in program order everywhere, which
    spares threads blocked in exchanges that the other processes have not reached."""
    span = ctx.module.process_span
    if operand_aval.dtype == dtypes.key_fry:
        raise NotImplementedError(f"{what} across processes of {operand_aval.dtype} values")
    exchanges = _exchanges_of.setdefault(ctx.module, _ModuleExchanges())
    site = exchanges.sites
    exchanges.sites += 1
    if _tag(site, _ROUNDS - 1) > distributed.group().largest_tag:
        raise NotImplementedError(f"more than {site} collectives across processes in a program")
    signature = f"{what} of {operand_aval.dtype.name}{list(operand_aval.shape)}"
    large = math.prod(result_aval.shape) * np.dtype(result_aval.dtype).itemsize >= _ADVISED_FROM
    exchange = Exchange(span.local_size, compute, signature, site, large)
    block = ctx.block
    sequence = exchanges.last_in_block.get(id(block))
    if sequence is None:
        sequence = block.constant(np.uint32(0))
    if span.local_size == 1:
        function, operands, avals = exchange.alone, [operand, sequence], [operand_aval, _SEQUENCE]
    else:
        replica = block.op1("stablehlo.replica_id", [], hlo.tensor_type((), np.uint32))
        function, operands = exchange, [operand, replica, sequence]
        avals = [operand_aval, _SEQUENCE, _SEQUENCE]
    callback = runtime.HostCallback(
        function,
        [result_aval, _SEQUENCE],
        f"{what} across processes",
        avals,
        writes_results=True,
        sequenced=True,
    )
    ctx.module.keep_alive.append(callback)
    attributes = runtime.custom_call_attributes(callback, has_side_effect=True)
    if in_place:
        attributes["output_operand_aliases"] = _RESULT_IS_OPERAND
    out, exchanges.last_in_block[id(block)] = ctx.op_results(
        "stablehlo.custom_call",
        operands,
        attributes,
        result_avals=[result_aval, _SEQUENCE],
    )
    return out


_RESULT_IS_OPERAND = (
    "[#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, "
    "operand_tuple_indices = []>]"
)


def _local_ctx(ctx, avals_out) -> LoweringContext:
    return LoweringContext(ctx.block, ctx.avals_in, avals_out, ctx.module, ctx.eqn)


def _gather_locally(ctx, x, name):
    """Every local replica's `x`, stacked along a new leading axis (XLA's all_gather)."""
    aval = ctx.avals_in[0]
    local_size = ctx.module.process_span.local_size
    stacked = ShapedArray((local_size, *aval.shape), aval.dtype)
    rule = parallel.local_lowering_rules[parallel.all_gather_p]
    out = rule(
        _local_ctx(ctx, [stacked]),
        x,
        all_gather_dimension=0,
        axis_index_groups=None,
        axis_name=(name,),
        axis_size=local_size,
        tiled=False,
    )
    return out, stacked


# --- the rules ------------------------------------------------------------------------------


def _reduction_across(op: str):
    def rule(ctx, local_rule, x, *, axes, axis_index_groups):
        span = ctx.module.process_span
        alone = span.local_size == 1 and len(axes) == 1
        if span.name not in axes or not alone:
            local = local_rule(ctx, x, axes=axes, axis_index_groups=axis_index_groups)
        else:
            local = x  # (one replica: nothing to reduce within the process)
        if span.name not in axes:
            return local
        aval = ctx.avals_out[0]
        what = ctx.eqn.primitive.name
        in_place = KeptScratch() if alone and ctx.eqn.invars[0] in span.overwritable else None
        compute = lambda v, out, site: allreduce(v, op, site, what, out, in_place)
        return _exchange(ctx, local, aval, aval, compute, what, in_place is not None)

    return rule


parallel.cross_process_rules[parallel.psum_p] = _reduction_across("sum")
parallel.cross_process_rules[parallel.pmax_p] = _reduction_across("max")
parallel.cross_process_rules[parallel.pmin_p] = _reduction_across("min")


def _all_gather_across(ctx, local_rule, x, *, all_gather_dimension, axis_name, tiled, **params):
    span = ctx.module.process_span
    dim = all_gather_dimension
    if span.name not in axis_name:
        return local_rule(
            ctx, x, all_gather_dimension=dim, axis_name=axis_name, tiled=tiled, **params
        )
    shape = list(ctx.avals_in[0].shape)
    if tiled:
        shape[dim] *= span.local_size
    else:
        shape.insert(dim, span.local_size)
    local_aval = ShapedArray(tuple(shape), ctx.avals_in[0].dtype)
    params = {**params, "axis_size": span.local_size}
    local = local_rule(
        _local_ctx(ctx, [local_aval]), x, all_gather_dimension=dim, axis_name=axis_name,
        tiled=tiled, **params,
    )  # fmt: skip
    out_shape = ctx.avals_out[0].shape

    def gather(v, out, site):  # the processes' blocks, in order along `dim`
        if dim == 0:
            allgather(v, site, "all_gather", out)
        else:
            gathered = allgather(v, site, "all_gather")
            np.copyto(out, np.moveaxis(gathered, 0, dim).reshape(out_shape))

    return _exchange(ctx, local, local_aval, ctx.avals_out[0], gather, "all_gather")


parallel.cross_process_rules[parallel.all_gather_p] = _all_gather_across


def _reduce_scatter_across(ctx, local_rule, x, *, scatter_dimension, axis_name, **params):
    span = ctx.module.process_span
    if span.name not in axis_name:
        return local_rule(
            ctx, x, scatter_dimension=scatter_dimension, axis_name=axis_name, **params
        )
    aval = ctx.avals_in[0]
    psum_rule = parallel.local_lowering_rules[parallel.psum_p]
    local = psum_rule(_local_ctx(ctx, [aval]), x, axes=axis_name, axis_index_groups=None)
    dim = scatter_dimension
    cut = (*aval.shape[:dim], span.size, aval.shape[dim] // span.size, *aval.shape[dim + 1 :])

    def scatter(v, out, site):
        summed = np.empty_like(v)
        allreduce(v, "sum", site, "psum_scatter", summed)
        summed = summed.reshape(cut)
        return [
            np.ascontiguousarray(np.take(summed, span.first + r, axis=dim))
            for r in range(span.local_size)
        ]

    return _exchange(ctx, local, aval, ctx.avals_out[0], scatter, "psum_scatter")


parallel.cross_process_rules[parallel.reduce_scatter_p] = _reduce_scatter_across


def _all_to_all_across(ctx, local_rule, x, *, axis_name, split_axis, concat_axis, **params):
    span = ctx.module.process_span
    if span.name not in axis_name:
        return local_rule(
            ctx, x, axis_name=axis_name, split_axis=split_axis, concat_axis=concat_axis, **params
        )
    local, stacked = _gather_locally(ctx, x, span.name)
    shape = ctx.avals_in[0].shape
    size, block = span.size, shape[split_axis] // span.size
    cut = (size, *shape[:split_axis], size, block, *shape[split_axis + 1 :])
    out_shape = ctx.avals_out[0].shape

    def exchange(v, out, site):
        members = allgather(v, site, "all_to_all").reshape(
            cut
        )  # [sender, ..., receiver, block, ...]
        results = []
        for r in range(span.local_size):
            mine = np.take(members, span.first + r, axis=split_axis + 1)
            results.append(
                np.ascontiguousarray(np.moveaxis(mine, 0, concat_axis)).reshape(out_shape)
            )
        return results

    return _exchange(ctx, local, stacked, ctx.avals_out[0], exchange, "all_to_all")


parallel.cross_process_rules[parallel_exchanges.all_to_all_p] = _all_to_all_across


def _ppermute_across(ctx, local_rule, x, *, axis_name, perm):
    span = ctx.module.process_span
    if span.name not in axis_name:
        return local_rule(ctx, x, axis_name=axis_name, perm=perm)
    local, stacked = _gather_locally(ctx, x, span.name)
    source_of = {destination: source for source, destination in perm}
    aval = ctx.avals_in[0]

    def permute(v, out, site):
        members = allgather(v, site, "ppermute").reshape(span.size, *aval.shape)
        zeros = np.zeros(aval.shape, aval.dtype)
        return [
            np.ascontiguousarray(members[source_of[j]]) if j in source_of else zeros
            for j in range(span.first, span.first + span.local_size)
        ]

    return _exchange(ctx, local, stacked, aval, permute, "ppermute")


parallel.cross_process_rules[parallel_exchanges.ppermute_p] = _ppermute_across


def _axis_index_across(ctx, local_rule, *, axis_name):
    """The replica's position among the process's, plus the members of the processes before."""
    local = local_rule(ctx, axis_name=axis_name)
    span = ctx.module.process_span
    if axis_name != span.name or span.first == 0:
        return local
    offset = ctx.block.constant(np.int32(span.first))
    return ctx.block.op1("stablehlo.add", [local, offset], local.type)


parallel.cross_process_rules[parallel.axis_index_p] = _axis_index_across
