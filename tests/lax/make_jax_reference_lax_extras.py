"""Records JAX's results for lax names whose values NumPy cannot give: `reduce_precision`'s bits,
`top_k`'s order of NaNs, signed zeros and ties, `approx_max_k`/`approx_min_k` on CPU, XLA's
`rng_bit_generator` bits, and the dtypes and weak types of `full`/`full_like`. The tests (`tests/lax/test_lax_extras_reference.py`)
never import JAX; they compare with `tests/lax/data/lax_extras.npz`. To regenerate it, in a
virtualenv with `jax==0.10.2` (CPU), from the repository's root:

    python tools/jax_reference.py tests/lax/make_jax_reference_lax_extras.py

`CASES` is also the tests' table: each entry is `name -> (fun(lax, np, *args), args, x64)`,
called with `jax.lax` here and `tracejit.lax` there (x64: run with 64-bit types enabled); a
result is an
array or a tuple of arrays, stored as `<name>/<i>` (bfloat16 as its uint16 bits), with
`<name>/<i>/dtype` and `<name>/<i>/weak`.
"""

from __future__ import annotations

import pathlib

import ml_dtypes
import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "lax_extras.npz"


def _bit_patterns(uint, count: int, seed: int) -> np.ndarray:
    """Random bit patterns (every class of value: NaN payloads, infinities, subnormals) and the
    edges: zeros, the largest and smallest values of each sign."""
    info = np.iinfo(uint)
    rng = np.random.default_rng(seed)
    random = rng.integers(0, info.max, count, dtype=uint, endpoint=True)
    bits = 8 * np.dtype(uint).itemsize
    sign = uint(1) << uint(bits - 1)
    edges = np.array([0, 1, sign, sign | uint(1), info.max, info.max ^ sign], dtype=uint)
    return np.concatenate([edges, random])


def _floats(dtype, count=2000, seed=0):
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    return _bit_patterns(uint, count, seed).view(dtype)


_TIES = np.array(
    [[3.0, np.nan, -np.nan, np.inf, -0.0, 0.0, 3.0, -np.inf, 1.0, -1.0]], dtype=np.float32
)
_TIES_NO_NAN = np.array([[3.0, -0.0, 0.0, 3.0, -np.inf, np.inf, 1.0, -1.0, 1.0]], np.float32)
_INTS = np.array([[-128, 127, 0, 5, 5, -128, 3]], dtype=np.int8)

_PRECISIONS = {
    "f32": (np.float32, [(5, 10), (8, 7), (2, 1), (4, 3), (8, 23), (11, 30), (1, 0), (6, 22)]),
    "f16": (np.float16, [(4, 3), (5, 2), (3, 9), (5, 10), (2, 0)]),
    "bf16": (ml_dtypes.bfloat16, [(5, 10), (4, 3), (8, 0), (3, 6)]),
}

CASES = {
    **{
        f"reduce_precision_{name}_{e}_{m}": (
            lambda lax, np_, x, e=e, m=m: lax.reduce_precision(x, e, m),
            (_floats(dtype),),
            False,
        )
        for name, (dtype, formats) in _PRECISIONS.items()
        for e, m in formats
    },
    **{
        f"reduce_precision_f64_{e}_{m}": (
            lambda lax, np_, x, e=e, m=m: lax.reduce_precision(x, e, m),
            (_floats(np.float64),),
            True,
        )
        for e, m in [(11, 52), (8, 23), (5, 10), (11, 30), (3, 50)]
    },
    "top_k_nan_order": (lambda lax, np_, x: lax.top_k(x, 10), (_TIES,), False),
    "top_k_nan_k3": (lambda lax, np_, x: lax.top_k(x, 3), (_TIES,), False),
    "top_k_axis0": (lambda lax, np_, x: lax.top_k(x, 4, axis=0), (_TIES.T,), False),
    "top_k_bf16": (
        lambda lax, np_, x: lax.top_k(x, 10),
        (_TIES.astype(ml_dtypes.bfloat16),),
        False,
    ),
    "top_k_int8": (lambda lax, np_, x: lax.top_k(x, 7), (_INTS,), False),
    "top_k_uint32": (
        lambda lax, np_, x: lax.top_k(x, 4),
        (np.array([7, 2**32 - 1, 0, 7], np.uint32),),
        False,
    ),
    "top_k_bool": (
        lambda lax, np_, x: lax.top_k(x, 3),
        (np.array([False, True, False, True]),),
        False,
    ),
    "top_k_f64": (lambda lax, np_, x: lax.top_k(x, 10), (_TIES.astype(np.float64),), True),
    "approx_max_k_ties": (lambda lax, np_, x: lax.approx_max_k(x, 9), (_TIES_NO_NAN,), False),
    "approx_min_k_ties": (lambda lax, np_, x: lax.approx_min_k(x, 9), (_TIES_NO_NAN,), False),
    "approx_min_k_unaggregated": (
        lambda lax, np_, x: lax.approx_min_k(x, 2, aggregate_to_topk=False),
        (_TIES_NO_NAN,),
        False,
    ),
    "full_python_float": (lambda lax, np_: lax.full((2,), 3.0), (), False),
    "full_python_int": (lambda lax, np_: lax.full((2,), 3), (), False),
    "full_python_bool": (lambda lax, np_: lax.full((), True), (), False),
    "full_dtype": (lambda lax, np_: lax.full((2,), 3.5, np.int32), (), False),
    "full_numpy_scalar": (lambda lax, np_: lax.full((2,), np.float64(2.5)), (), False),
    "full_array_fill": (lambda lax, np_: lax.full((2, 2), np_.asarray(1.5)), (), False),
    "full_traced_fill": (lambda lax, np_, x: lax.full((2, 2), x), (np.float32(1.5),), False),
    "full_like_int": (lambda lax, np_, x: lax.full_like(x, 3.5), (np.ones(2, np.int32),), False),
    "full_like_python": (lambda lax, np_: lax.full_like(2.0, 3), (), False),
    "full_like_dtype_shape": (
        lambda lax, np_, x: lax.full_like(x, 3, np.uint8, (3, 1)),
        (np.ones(2, np.float32),),
        False,
    ),
    "full_like_weak_array": (lambda lax, np_: lax.full_like(lax.full((2,), 1.0), 7), (), False),
    "full_x64": (lambda lax, np_: lax.full((2,), 3.0), (), True),
    "empty": (lambda lax, np_: lax.empty((2, 3), np.float32), (), False),
    "broadcast_like_python": (
        lambda lax, np_, y: lax.broadcast_like(1.0, y),
        (np.ones((2, 3), np.float32),),
        False,
    ),
    **{
        f"rng_bit_generator_{algorithm}_{dtype.__name__}": (
            lambda lax, np_, key, algorithm=algorithm, dtype=dtype: lax.rng_bit_generator(
                key, (2, 3), dtype, getattr(lax.RandomAlgorithm, algorithm)
            ),
            (np.array([1, 2, 3, 2**32 - 1], np.uint32),),
            False,
        )
        for algorithm in ("RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX")
        for dtype in (np.uint8, np.uint16, np.uint32)
    },
    "rng_bit_generator_x64": (
        lambda lax, np_, key: lax.rng_bit_generator(key, (3,), np.uint64),
        (np.array([5, 0, 0, 7], np.uint32),),
        True,
    ),
    "mulhi_int32": (
        lambda lax, np_, x, y: lax.mulhi(x, y),
        (
            np.array([2**31 - 1, -5, 7, -(2**31)], np.int32),
            np.array([3, 7, -9, -(2**31)], np.int32),
        ),
        False,
    ),
    "mulhi_int64": (
        lambda lax, np_, x, y: lax.mulhi(x, y),
        (
            np.array([2**63 - 1, -5, 7, -(2**63), 123456789123], np.int64),
            np.array([3, 7, -9, -(2**63), -987654321987], np.int64),
        ),
        True,
    ),
    "mulhi_uint64": (
        lambda lax, np_, x, y: lax.mulhi(x, y),
        (
            np.array([2**64 - 1, 5, 2**40 + 3], np.uint64),
            np.array([2**64 - 1, 7, 2**33 + 11], np.uint64),
        ),
        True,
    ),
}


def _leaves(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def main(jax):
    jnp = jax.numpy

    assert jax.__version__ == "0.10.2", jax.__version__
    out = {}
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        for name, (fun, args, needs_x64) in CASES.items():
            if needs_x64 != x64:
                continue
            for i, leaf in enumerate(_leaves(fun(jax.lax, jnp, *args))):
                value = np.asarray(leaf)
                bf16 = value.dtype == ml_dtypes.bfloat16
                out[f"{name}/{i}"] = value.view(np.uint16) if bf16 else value
                out[f"{name}/{i}/dtype"] = np.asarray(value.dtype.name)
                out[f"{name}/{i}/weak"] = np.asarray(bool(leaf.weak_type))
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **out)
    print(f"wrote {len(out)} arrays to {DATA}")
