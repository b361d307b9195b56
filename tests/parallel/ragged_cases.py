"""`lax.ragged_all_to_all` cases shared by the tests and the script recording JAX's answers
(`make_jax_reference_ragged.py`), and the NumPy reference its values are checked against.

`run_all(jax, jnp, lax, P)` gives per case the jaxpr printout of a shard_map using it, or the
error's class and message. JAX 0.10.2 gives no values here: its CPU backend cannot compile a
ragged all-to-all (`UNIMPLEMENTED: HLO opcode ragged-all-to-all is not supported by XLA:CPU`),
so the values are checked against `reference`, the semantics its docstring states.
"""

import numpy as np

DOCSTRING_EXAMPLE = {  # per member: operand, output, input_offsets, send_sizes, ...
    "operand": [[1, 2, 2], [3, 4, 0]],
    "output": [[0, 0, 0, 0], [0, 0, 0, 0]],
    "input_offsets": [[0, 1], [0, 1]],
    "send_sizes": [[1, 2], [1, 1]],
    "output_offsets": [[0, 0], [1, 2]],
    "recv_sizes": [[1, 1], [2, 1]],
    "result": [[1, 3, 0, 0], [2, 2, 4, 0]],
}


def reference(operands, outputs, input_offsets, send_sizes, output_offsets, recv_sizes,
              groups=None):  # fmt: skip
    """The members' results, as JAX's docstring defines them: receiver r writes, for each
    entry i = s * (K / members) + t of its own in order, `recv_sizes[i]` rows of sender s's
    operand (from that sender's `input_offsets[r * (K / members) + t]`) at the offset the
    sender gave in `output_offsets`."""
    del send_sizes  # equal to the receivers' recv_sizes, exchanged (the caller's promise)
    results = [np.array(o, copy=True) for o in outputs]
    groups = groups or [list(range(len(operands)))]
    for group in groups:
        per_member = len(input_offsets[0]) // len(group)
        for r_pos, r in enumerate(group):
            for s_pos, s in enumerate(group):
                for t in range(per_member):
                    sent, received = r_pos * per_member + t, s_pos * per_member + t
                    start, at = input_offsets[s][sent], output_offsets[s][sent]
                    size = recv_sizes[r][received]
                    results[r][at : at + size] = operands[s][start : start + size]
    return results


def ragged_pattern(rng, members: int, per_member: int, trailing=(), dtype=np.float32,
                   max_size: int = 3):  # fmt: skip
    """Random consistent arguments, stacked over the members: each sender's slices for each
    destination (sizes 0 to `max_size`) lie in its operand in a shuffled order with gaps,
    and each receiver's incoming slices lie in its output in order with gaps."""
    sizes = rng.integers(0, max_size + 1, size=(members, members, per_member))  # [s, r, t]
    entries = members * per_member
    input_offsets = np.zeros((members, entries), np.int32)
    output_offsets = np.zeros((members, entries), np.int32)
    operand_rows, output_rows = [], []
    for s in range(members):
        position = 0
        for e in rng.permutation(entries):
            position += int(rng.integers(0, 2))
            input_offsets[s, e] = position
            position += sizes[s, e // per_member, e % per_member]
        operand_rows.append(position)
    for r in range(members):
        position = 0
        for s in range(members):
            for t in range(per_member):
                position += int(rng.integers(0, 2))
                output_offsets[s, r * per_member + t] = position
                position += sizes[s, r, t]
        output_rows.append(position)
    n, m = max(operand_rows) + 1, max(output_rows) + 1
    values = rng.normal(size=(members, n + m, *trailing)) * 10
    values = values.astype(dtype) if dtype != np.bool_ else values > 0
    send_sizes = sizes.reshape(members, entries).astype(np.int32)
    recv_sizes = sizes.transpose(1, 0, 2).reshape(members, entries).astype(np.int32)
    return (values[:, :n], values[:, n:], input_offsets, send_sizes, output_offsets,
            recv_sizes)  # fmt: skip


def grouped_pattern(rng):
    """Two independent 2-member patterns as the groups [[0, 2], [1, 3]] of 4 members (rows
    padded to the longer one's)."""
    first, second = ragged_pattern(rng, 2, 2), ragged_pattern(rng, 2, 2)
    args = []
    for a, b in zip(first, second, strict=True):
        rows = max(a.shape[1], b.shape[1])
        a, b = (np.pad(v, ((0, 0), (0, rows - v.shape[1]))) for v in (a, b))
        args.append(np.stack([a[0], b[0], a[1], b[1]]))
    return args, [[0, 2], [1, 3]]


def _example(jnp, dtype="float32", trailing=()):
    """The docstring's example, flattened over its two members (as shard_map takes it)."""
    names = ("operand", "output", "input_offsets", "send_sizes", "output_offsets", "recv_sizes")
    args = [np.asarray(DOCSTRING_EXAMPLE[name]).reshape(-1) for name in names]
    data = [np.broadcast_to(a[:, None], (a.shape[0], *trailing)) if trailing else a
            for a in args[:2]]  # fmt: skip
    return [jnp.asarray(a, dtype) for a in data] + [jnp.asarray(a, jnp.int32) for a in args[2:]]


def run_all(jax, jnp, lax, P) -> dict:
    auto = jax.sharding.AxisType.Auto
    line = jax.make_mesh((2,), ("x",), axis_types=(auto,))
    four = jax.make_mesh((4,), ("x",), axis_types=(auto,))
    square = jax.make_mesh((2, 2), ("x", "y"), axis_types=(auto, auto))

    def mapped(body, mesh=line, spec=None):
        spec = P("x") if spec is None else spec
        return jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec)

    def ragged(*args, axis_name="x", **params):
        return lax.ragged_all_to_all(*args, axis_name=axis_name, **params)

    def jvp_body(a, b, *indices):
        return jax.jvp(lambda u, v: ragged(u, v, *indices), (a, b), (a * 2, b))[1]

    def with_narrow_offsets(a, b, c, d, e, f):
        return ragged(a, b, c.astype(jnp.int16), d, e.astype(jnp.uint8), f)

    example = _example(jnp)
    doubled = [jnp.concatenate([a, a]) for a in example]  # (for four members)
    quadrupled = doubled[:2] + [jnp.zeros(16, jnp.int32)] * 4  # (four entries a member)
    cases = {
        "docstring_example": (mapped(ragged), example),
        "bfloat16_rows": (mapped(ragged), _example(jnp, "bfloat16", (3,))),
        "bool": (mapped(ragged), _example(jnp, "bool")),
        "narrow_offset_dtypes": (mapped(with_narrow_offsets), example),
        "groups": (
            mapped(lambda *a: ragged(*a, axis_index_groups=[[0, 1], [2, 3]]), four),
            doubled,
        ),
        "two_axes": (
            mapped(lambda *a: ragged(*a, axis_name=("x", "y")), square, P(("x", "y"))),
            quadrupled,
        ),
        "jvp": (mapped(jvp_body), example),
        # typed as JAX types it: varying where an operand varies, no pvary of its own
        "replicated_operands": (
            jax.shard_map(ragged, mesh=line, in_specs=P(), out_specs=P()),
            [a[: len(a) // 2] for a in example],
        ),
        "replicated_output": (
            jax.shard_map(
                ragged, mesh=line, in_specs=(P("x"), P(), *[P("x")] * 4), out_specs=P("x")
            ),
            [example[0], example[1][:4], *example[2:]],
        ),
        "float_input_offsets": (mapped(lambda a, b, c, *r: ragged(a, b, c * 1.0, *r)), example),
        "float_recv_sizes": (mapped(lambda *a: ragged(*a[:5], a[5] * 1.0)), example),
        "rank2_send_sizes": (
            mapped(lambda a, b, c, d, *r: ragged(a, b, c, d[None], *r)),
            example,
        ),
        "empty_output_offsets": (
            mapped(lambda a, b, c, d, e, f: ragged(a, b, c, d, e[:0], f)),
            example,
        ),
        "unbound_axis": (mapped(lambda *a: ragged(*a, axis_name="y")), example),
    }
    answers = {}
    for name, (fun, args) in cases.items():
        try:
            answers[name] = str(jax.make_jaxpr(fun)(*args))
        except Exception as error:  # noqa: BLE001 (the class is the answer)
            answers[name] = f"{type(error).__name__}: {error}"
    return answers
