"""Files and interchange: `.npy`/`.npz` files through NumPy, and DLPack.

`save` and `savez` are NumPy's (they read Arrays through `__array__`). `load` is NumPy's too, but
gives an Array for a `.npy` file and restores bfloat16, which NumPy writes as raw 2-byte
records (`V2`). `from_dlpack` takes any producer NumPy can read (a NumPy array, a torch CPU
tensor, another Array): the values are NumPy's view of the producer's memory, converted to the
canonical dtype, copied unless `copy=False` (which wraps the view, and fails where a dtype
conversion needs a copy). The producer side is `Array.__dlpack__` (`_src/array.py`).
"""

from __future__ import annotations

import numpy as np

from tracejit._src import dispatch, dtypes
from tracejit._src.array import make_array
from tracejit._src.numpy import creation

save = np.save
savez = np.savez


def load(file, *args, **kwargs):
    """`numpy.load`; an array read from a `.npy` file comes back as an Array (bfloat16 ones
    with their dtype), an `.npz` archive as NumPy's lazy mapping of NumPy arrays."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == "V2":  # bfloat16, which NumPy stores as unnamed 2-byte records
            out = out.view(dtypes.bfloat16)
        try:
            out = creation.asarray(out)
        except TypeError:  # a dtype Arrays cannot have (strings, objects): NumPy's array
            pass
    return out


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array of the DLPack producer `x` (anything with `__dlpack__` and
    `__dlpack_device__` on the CPU); `copy=False` shares its memory, which must then hold a
    canonical dtype; `device` commits the result to that device."""
    if not (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")):
        raise TypeError(
            "The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods."
        )
    value = np.from_dlpack(x) if copy is None else np.from_dlpack(x, copy=copy)
    if copy is False:
        if dtypes.canonicalize_dtype(value.dtype) != value.dtype:
            raise ValueError(
                f"Specified input of dtype {value.dtype}, which requires a copy to become "
                f"{dtypes.canonicalize_dtype(value.dtype)}. However copy=False. Set copy=True "
                "or copy=None to perform the requested operation."
            )
        view = value.view()
        view.flags.writeable = False
        array = make_array(view)
    else:
        array = creation.asarray(value)
    return array if device is None else dispatch.device_put(array, device)


_DLPACK_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
        np.uint64, np.float16, dtypes.bfloat16, np.float32, np.float64, np.complex64,
        np.complex128,
    )
)  # fmt: skip


def is_supported_dtype(dtype) -> bool:
    """Whether arrays of `dtype` pass through DLPack (`jax.dlpack.is_supported_dtype`)."""
    return np.dtype(dtype) in _DLPACK_DTYPES
