"""Records JAX's results for the convolutions whose conventions NumPy cannot give: the gradients
of `conv_general_dilated` (both operands, a grid of dimension numbers, strides, paddings,
dilations and group counts), `conv_transpose`'s paddings (strings, explicit pairs,
`use_consistent_padding`, `transpose_kernel`, kernel dilation), and the feature order of
`conv_general_dilated_patches` and `conv_general_dilated_local`. The tests
(`tests/lax/test_convolution_reference.py`) never import JAX; they compare with
`tests/lax/data/convolution.npz`. To regenerate it, in a virtualenv with `jax==0.10.2` (CPU),
from the repository's root:

    python tools/jax_reference.py tests/lax/make_jax_reference_convolution.py

`CASES` is also the tests' table: `name -> (fun(jax, *args), args)`, called with `jax` here and
`tracejit` there, with 64-bit types on; a result is a tuple of arrays, stored as `<name>/<i>`.
"""

from __future__ import annotations

import itertools
import pathlib

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "convolution.npz"


def _normal(seed, *shapes):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(shape) for shape in shapes)


def _value_and_grads(jax, x, w, ct, **params):
    out, vjp = jax.vjp(lambda x, w: jax.lax.conv_general_dilated(x, w, **params), x, w)
    return (out, *vjp(ct))


# (lhs shape, rhs shape, params) of the gradient grid; the cotangent has the result's shape.
_GRAD_GRID = [
    ((2, 3, 7), (4, 3, 3), {"window_strides": (2,), "padding": [(1, 2)]}),
    ((2, 3, 7), (4, 3, 2), {"window_strides": (1,), "padding": "SAME", "rhs_dilation": (3,)}),
    ((2, 3, 5), (4, 3, 3), {"window_strides": (3,), "padding": [(-1, 2)], "lhs_dilation": (2,)}),
    ((2, 4, 6), (6, 2, 3), {"window_strides": (1,), "padding": "VALID", "feature_group_count": 2}),
    ((4, 3, 6), (6, 3, 2), {"window_strides": (2,), "padding": [(0, 1)], "batch_group_count": 2}),
    (
        (2, 6, 5, 6),
        (3, 3, 2, 6),
        {
            "window_strides": (2, 1),
            "padding": "SAME",
            "dimension_numbers": ("NHWC", "HWIO", "NHWC"),
            "feature_group_count": 3,
        },
    ),
    (
        (6, 5, 2, 4),
        (4, 2, 3, 2),
        {
            "window_strides": (1, 2),
            "padding": [(1, 1), (0, 2)],
            "lhs_dilation": (1, 2),
            "rhs_dilation": (2, 1),
            "dimension_numbers": ("HWCN", "OIHW", "CNHW"),
            "batch_group_count": 2,
        },
    ),
    ((1, 2, 4, 4, 3), (2, 2, 2, 3, 2), {"window_strides": (1, 2, 1), "padding": "SAME_LOWER"}),
]


def _grad_cases():
    cases = {}
    for i, (lhs_shape, rhs_shape, params) in enumerate(_GRAD_GRID):
        x, w = _normal(i, lhs_shape, rhs_shape)
        out_shape = _out_shape(x, w, params)
        (ct,) = _normal(100 + i, out_shape)
        cases[f"grad_{i}"] = (
            lambda jax, x, w, ct, params=params: _value_and_grads(jax, x, w, ct, **params),
            (x, w, ct),
        )
    return cases


def _out_shape(x, w, params):
    """The result shape, from NumPy alone (the grid's params through tracejit's shape rule
    would make the reference depend on the code it checks): a direct count of windows."""
    from_strings = (
        params.get("dimension_numbers")
        or (("NCH", "OIH", "NCH"), ("NCHW", "OIHW", "NCHW"), ("NCHWD", "OIHWD", "NCHWD"))[
            x.ndim - 3
        ]
    )
    lhs, rhs, out = from_strings
    spatial = [c for c in rhs if c not in "OI"]
    n = x.shape[lhs.index("N")] // params.get("batch_group_count", 1)
    sizes = {"N": n, "C": w.shape[rhs.index("O")]}
    strides = params["window_strides"]
    lhs_dilation = params.get("lhs_dilation") or (1,) * len(spatial)
    rhs_dilation = params.get("rhs_dilation") or (1,) * len(spatial)
    for i, c in enumerate(spatial):
        size = (x.shape[lhs.index(c)] - 1) * lhs_dilation[i] + 1
        window = (w.shape[rhs.index(c)] - 1) * rhs_dilation[i] + 1
        if isinstance(params["padding"], str):
            if params["padding"] == "VALID":
                sizes[c] = (size - window) // strides[i] + 1
            else:
                sizes[c] = -(-size // strides[i])
        else:
            lo, hi = params["padding"][i]
            sizes[c] = (size + lo + hi - window) // strides[i] + 1
    return tuple(sizes[c] for c in out)


def _transpose_cases():
    cases = {}
    paddings = ["SAME", "VALID", [(1, 2)], [(0, 0)]]
    grid = itertools.product(paddings, (False, True), (False, True), (1, 2, 3), (2, 3, 4), (1, 2))
    # other strings are the padding of the convolution itself (JAX refuses them with strides)
    others = itertools.product(
        ["SAME_LOWER", "same", "valid"], (False,), (False,), (1,), (2, 3), (1,)
    )
    for i, (padding, consistent, flip, stride, k, dilation) in enumerate((*grid, *others)):
        x, w = _normal(1000 + i, (2, 5, 3), (k, 3, 3) if flip else (k, 3, 2))
        cases[f"transpose_{i}"] = (
            lambda jax, x, w, p=padding, c=consistent, f=flip, s=stride, d=dilation: (
                jax.lax.conv_transpose(
                    x, w, (s,), p, rhs_dilation=(d,), transpose_kernel=f, use_consistent_padding=c
                ),
            ),
            (x, w),
        )
    x, w = _normal(7, (2, 3, 5, 4), (3, 2, 3, 4))
    cases["transpose_2d_nchw"] = (
        lambda jax, x, w: (
            jax.lax.conv_transpose(
                x, w, (2, 1), "SAME", dimension_numbers=("NCHW", "IOHW", "NCHW")
            ),
        ),
        (x, w),
    )
    return cases


def _patch_cases():
    (x,) = _normal(11, (2, 3, 6, 5))
    (y,) = _normal(12, (5, 6, 2, 3))
    (w,) = _normal(13, (4, 3 * 2 * 3, 5, 2))
    return {
        "patches_nchw": (
            lambda jax, x: (jax.lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "SAME"),),
            (x,),
        ),
        "patches_strings": (
            lambda jax, y: (
                jax.lax.conv_general_dilated_patches(
                    y, (3, 2), (2, 1), "VALID", dimension_numbers=("HWNC", "OIWH", "CWNH")
                ),
            ),
            (y,),
        ),
        "local_nchw": (
            lambda jax, x, w: (jax.lax.conv_general_dilated_local(x, w, (1, 2), "VALID", (2, 3)),),
            (x, w),
        ),
    }


CASES = {**_grad_cases(), **_transpose_cases(), **_patch_cases()}


def main(jax):

    jax.config.update("jax_enable_x64", True)
    arrays = {}
    for name, (fun, args) in CASES.items():
        for i, result in enumerate(fun(jax, *args)):
            arrays[f"{name}/{i}"] = np.asarray(result)
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **arrays)
    print(f"wrote {len(arrays)} arrays to {DATA}")
