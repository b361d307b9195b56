"""Micro-benchmarks of the PJRT runtime's per-call costs (not collected by pytest).

    python bench/runtime.py [--out bench/results/runtime.json]

Each figure is the best of 5 rounds of many calls (a floor: this is about fixed costs). "raw" rows drive the C API with one prebuilt
argument struct and no Python objects per call: the floor that the runtime's own rows are
compared with.
"""

import json
import os
import sys
import time

import numpy as np

from tracejit._src.runtime import get_client

ADD_ONE = """
module @add_one {
  func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %k = "stablehlo.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
    %0 = "stablehlo.add"(%a, %k) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


def best_of(function, calls: int = 20_000, rounds: int = 5) -> float:
    for _ in range(min(calls, 1000)):
        function()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main() -> None:
    client = get_client()
    plugin = client.plugin
    executable = client.compile(ADD_ONE)
    x = client.buffer_from_numpy(np.arange(4, dtype=np.float32))
    small = np.arange(4, dtype=np.float32)
    big = np.ones((1024, 1024), np.float32)
    ready = executable.execute_one([x])[0].block_until_ready()
    big_buffer = client.buffer_from_numpy(big).block_until_ready()

    slot = executable._take_slot(1)
    slot.argument_arrays[0][0] = x._ptr
    slot.args.num_args = 1
    execute, destroy = executable._execute, plugin.destroy_buffer
    outputs = slot.output_arrays[0]

    def raw_execute():
        plugin.check(execute(slot.args))
        destroy(outputs[0])

    rows = [
        ("raw C API: execute + destroy output", raw_execute, 20_000),
        ("execute_one, output dropped", lambda: executable.execute_one([x]), 20_000),
        (
            "execute_one + block_until_ready",
            lambda: executable.execute_one([x])[0].block_until_ready(),
            20_000,
        ),
        (
            "execute (per-device lists) + block_until_ready",
            lambda: executable.execute([[x]])[0][0].block_until_ready(),
            20_000,
        ),
        ("execute_one + to_numpy", lambda: executable.execute_one([x])[0].to_numpy(), 20_000),
        (
            "execute_one + np.asarray (zero-copy)",
            lambda: np.asarray(executable.execute_one([x])[0]),
            20_000,
        ),
        ("buffer_from_numpy, 4 x f32", lambda: client.buffer_from_numpy(small), 20_000),
        ("to_numpy of a ready 4 x f32 buffer", ready.to_numpy, 20_000),
        ("numpy_view of a ready 4 x f32 buffer", ready.numpy_view, 20_000),
        (
            "buffer_from_numpy, 4 MB, until ready",
            lambda: client.buffer_from_numpy(big).block_until_ready(),
            200,
        ),
        ("to_numpy, 4 MB", big_buffer.to_numpy, 200),
    ]
    results = {}
    for name, function, calls in rows:
        results[name] = best_of(function, calls) * 1e6
        print(f"{name:50s} {results[name]:8.2f} us")
    out = (
        sys.argv[sys.argv.index("--out") + 1]
        if "--out" in sys.argv
        else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "runtime.json")
    )
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"best_us": results}, f, indent=2)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
