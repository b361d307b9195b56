"""The seed's Table 2 convnet: one jitted SGD step of an All-CNN-C-style network, tracejit next to
real JAX (and PyTorch, where installed), single-threaded and on all cores, NCHW and NHWC.

    python bench/convnet.py [--jax-python /path/to/python] [--out bench/results/convnet.json]
                            [--rounds 20] [--xla-dump DIR]

The network (issue 17), at a third of All-CNN-C's width: 32x32x3 images, batch 32; 3x3
convolutions (padding 1) with ReLU of 32, 32, 32 (stride 2), 64, 64, 64 (stride 2) channels,
then 3x3 'VALID' 64, 1x1 64, 1x1 10 (ReLU after each, as in All-CNN-C), global average pooling
(a mean) and softmax cross-entropy. One step is `jit(params, x, y -> params - lr * grad)`.

Each framework and thread setting runs in its own process: single-threaded under
`taskset -c 0` with XLA's `--xla_cpu_multi_thread_eigen=false` (newer XLA builds ignore the
flag, so the pin is what counts), all cores unpinned. JAX runs in the interpreter `--jax-python`
names (tracejit never imports it), PyTorch in this interpreter if it imports. `--xla-dump DIR`
passes `--xla_dump_to` so that the optimized HLO of both can be compared. Prints a table and
writes JSON: per step the median and best wall-clock milliseconds and the median CPU
milliseconds of the process (on a shared machine, what single-threaded runs compare best; on
all cores it adds up the threads), and the first call's seconds (tracing and compiling, with
tracejit's persistent cache in a fresh folder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

LAYOUTS = {"NCHW": ("NCHW", "OIHW", "NCHW"), "NHWC": ("NHWC", "HWIO", "NHWC")}
# (output channels, kernel size, stride, padding) of each convolution
LAYERS = [
    (32, 3, 1, 1),
    (32, 3, 1, 1),
    (32, 3, 2, 1),
    (64, 3, 1, 1),
    (64, 3, 1, 1),
    (64, 3, 2, 1),
    (64, 3, 1, 0),
    (64, 1, 1, 0),
    (10, 1, 1, 0),
]
BATCH, SIZE, CHANNELS, CLASSES = 32, 32, 3, 10

# Run with `jax`, `jnp`, `lax` bound to one framework; LAYOUT, LAYERS, ROUNDS, ... given.
_STEP = """
import json, statistics, time
import numpy as np
lhs_spec, rhs_spec, out_spec = LAYOUT
rng = np.random.default_rng(0)
params, channels = [], CHANNELS
for out_channels, k, stride, pad in LAYERS:
    shape = {"O": out_channels, "I": channels, "H": k, "W": k}
    w = rng.standard_normal([shape[c] for c in rhs_spec]) * np.sqrt(2.0 / (k * k * channels))
    params.append((jnp.asarray(w, jnp.float32), jnp.zeros((out_channels,), jnp.float32)))
    channels = out_channels
image = {"N": BATCH, "C": CHANNELS, "H": SIZE, "W": SIZE}
x = jnp.asarray(rng.standard_normal([image[c] for c in lhs_spec]), jnp.float32)
labels = jnp.asarray(rng.integers(0, CLASSES, BATCH))
feature_axis, spatial_axes = out_spec.index("C"), tuple(out_spec.index(c) for c in "HW")
bias_shape = [CLASSES if c == "C" else 1 for c in out_spec]

def loss(params, x, labels):
    for (w, b), (_, k, stride, pad) in zip(params, LAYERS):
        x = lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad)] * 2,
                                     dimension_numbers=LAYOUT)
        shape = [w.shape[rhs_spec.index("O")] if c == "C" else 1 for c in out_spec]
        x = jax.nn.relu(x + b.reshape(shape))
    logits = jnp.mean(x, axis=spatial_axes)
    if feature_axis == 0:
        logits = logits.T
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

@jax.jit
def step(params, x, labels):
    value, grads = jax.value_and_grad(loss)(params, x, labels)
    new = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return new, value

def run():
    jax.block_until_ready(step(params, x, labels))
"""

_TORCH_STEP = """
import json, statistics, time
import numpy as np
import torch
torch.set_num_threads(THREADS)
channels_last = LAYOUT[0] == "NHWC"
rng = np.random.default_rng(0)
layers, channels = [], CHANNELS
for out_channels, k, stride, pad in LAYERS:
    layers += [torch.nn.Conv2d(channels, out_channels, k, stride, pad), torch.nn.ReLU()]
    channels = out_channels
model = torch.nn.Sequential(*layers)
x = torch.tensor(rng.standard_normal((BATCH, CHANNELS, SIZE, SIZE)), dtype=torch.float32)
labels = torch.tensor(rng.integers(0, CLASSES, BATCH))
if channels_last:
    model, x = model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

def step():
    optimizer.zero_grad()
    value = torch.nn.functional.cross_entropy(model(x).mean(dim=(2, 3)), labels)
    value.backward()
    optimizer.step()

run = step
"""

# Times `run()` (one step, finished): the first call, then ROUNDS calls.
_TIMING = """
start = time.perf_counter()
run()
compile_s = time.perf_counter() - start
times, cpu_times = [], []
for _ in range(ROUNDS):
    start, cpu_start = time.perf_counter(), time.process_time()
    run()
    times.append(time.perf_counter() - start)
    cpu_times.append(time.process_time() - cpu_start)
print(json.dumps({"step_ms": 1e3 * statistics.median(times), "best_ms": 1e3 * min(times),
                  "cpu_ms": 1e3 * statistics.median(cpu_times), "compile_s": compile_s}))
"""

FRAMEWORKS = {
    "tracejit": "import tracejit as jax\nimport tracejit.numpy as jnp\nfrom tracejit import lax\n",
    "jax": "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n",
}


def run_case(python, body, layout, single_thread, rounds, dump=None):
    constants = (
        f"LAYOUT = {LAYOUTS[layout]!r}\nLAYERS = {LAYERS!r}\nROUNDS = {rounds}\n"
        f"BATCH, SIZE, CHANNELS, CLASSES = {BATCH}, {SIZE}, {CHANNELS}, {CLASSES}\n"
        f"THREADS = {1 if single_thread else os.cpu_count()}\n"
    )
    env = dict(os.environ, TRACEJIT_CACHE_DIR=tempfile.mkdtemp(prefix="tracejit-bench-"))
    flags = [env.get("XLA_FLAGS", "")]
    command = [python, "-c", constants + body + _TIMING]
    if single_thread:
        flags.append("--xla_cpu_multi_thread_eigen=false")
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = "1"
        command = ["taskset", "-c", "0", *command]
    if dump:
        flags.append(f"--xla_dump_to={dump} --xla_dump_hlo_as_text")
    env["XLA_FLAGS"] = " ".join(f for f in flags if f)
    out = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(f"{python} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.splitlines()[-1])


def torch_available() -> bool:
    probe = subprocess.run([sys.executable, "-c", "import torch"], check=False, capture_output=True)
    return probe.returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax-python", help="an interpreter with jax installed")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--xla-dump", help="a folder for XLA's HLO dumps (one per run)")
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "convnet.json")
    )
    args = parser.parse_args()
    pythons = {"tracejit": sys.executable}
    if args.jax_python:
        pythons["jax"] = args.jax_python
    results = {}
    print(
        f"{'framework':<10}{'threads':>8}{'layout':>8}{'step ms':>10}{'best ms':>10}"
        f"{'cpu ms':>10}{'compile s':>11}"
    )
    for threads in ("1", "all"):
        for layout in LAYOUTS:
            runs = [(name, python, _STEP, FRAMEWORKS[name]) for name, python in pythons.items()]
            if torch_available():
                runs.append(("pytorch", sys.executable, _TORCH_STEP, ""))
            for name, python, body, imports in runs:
                dump = args.xla_dump and os.path.join(args.xla_dump, f"{name}-{threads}-{layout}")
                row = run_case(python, imports + body, layout, threads == "1", args.rounds, dump)
                results[f"{name}/{threads}/{layout}"] = row
                print(
                    f"{name:<10}{threads:>8}{layout:>8}{row['step_ms']:>10.2f}"
                    f"{row['best_ms']:>10.2f}{row['cpu_ms']:>10.2f}{row['compile_s']:>11.2f}"
                )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
