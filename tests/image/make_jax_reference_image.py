"""Records JAX 0.10.2's `jax.image.resize`/`scale_and_translate` results for tests/image.

Run by hand with real JAX (never imported by the package or the tests):

    python tools/jax_reference.py tests/image/make_jax_reference_image.py

It writes `data/image_reference.npz` next to this file: for each case of `CASES` (method,
shapes, antialias), the input and JAX's output, and the dtype JAX gives.
"""

import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent

# name -> (input shape, input dtype, function, arguments)
CASES = {
    "linear_up": ((5, 7), "float32", "resize", ((9, 11), "linear", True)),
    "linear_down_antialias": ((12, 10), "float32", "resize", ((5, 4), "linear", True)),
    "linear_down_no_antialias": ((12, 10), "float32", "resize", ((5, 4), "linear", False)),
    "cubic_up": ((6, 5), "float32", "resize", ((10, 9), "bicubic", True)),
    "cubic_down": ((11, 9), "float32", "resize", ((4, 5), "cubic", True)),
    "cubic_pytorch_edges": ((6, 5), "float32", "resize", ((9, 3), "cubic-pytorch", False)),
    "lanczos3": ((8, 6), "float32", "resize", ((5, 9), "lanczos3", True)),
    "lanczos5": ((8, 6), "float32", "resize", ((13, 4), "lanczos5", True)),
    "area_down": ((12, 9), "float32", "resize", ((5, 4), "area", True)),
    "area_up": ((4, 3), "float32", "resize", ((7, 8), "area", True)),
    "nearest": ((5, 7), "float32", "resize", ((8, 3), "nearest", True)),
    "nearest_int": ((5, 7), "int32", "resize", ((8, 3), "nearest", True)),
    "linear_int_input": ((5, 7), "int32", "resize", ((9, 4), "linear", True)),
    "batch_channels": ((2, 6, 5, 3), "float32", "resize", ((2, 9, 4, 3), "linear", True)),
    "scale_translate": (
        (6, 7),
        "float32",
        "scale_and_translate",
        ((8, 9), (0, 1), (1.4, 1.2), (0.5, -1.0), "linear", True),
    ),
    "scale_translate_cubic": (
        (6, 7),
        "float32",
        "scale_and_translate",
        ((5, 9), (0, 1), (0.8, 1.3), (-0.25, 0.75), "cubic", False),
    ),
}


def inputs(shape, dtype, seed):
    values = np.random.default_rng(seed).normal(size=shape) * 4
    return values.astype(dtype)


def arguments(function, args):
    """scale_and_translate takes its scale and translation as float32 arrays."""
    if function != "scale_and_translate":
        return args
    shape, dims, scale, translation, *rest = args
    return (shape, dims, np.float32(scale), np.float32(translation), *rest)


def main(jax):

    arrays, dtypes = {}, {}
    for seed, (name, (shape, dtype, function, args)) in enumerate(CASES.items()):
        x = inputs(shape, dtype, seed)
        out = getattr(jax.image, function)(x, *arguments(function, args))
        arrays[f"{name}_in"] = x
        arrays[f"{name}_out"] = np.asarray(out)
        dtypes[name] = str(out.dtype)
    np.savez(HERE / "data" / "image_reference.npz", **arrays)
    (HERE / "data" / "image_reference_dtypes.json").write_text(json.dumps(dtypes, indent=1))
