"""The build of tracejit's optional C accelerator; everything else is in pyproject.toml.

`tracejit._src._accel` holds the few hot paths where Python's per-call cost dominates (the
Threefry cipher on small arrays, ...). It is optional: where no C compiler exists the build
goes on without it (`optional=True`) and tracejit runs the same code paths in Python, with the
same results (`tracejit._src.accel` says which is in use).
"""

from glob import glob

import numpy as np
from setuptools import Extension, setup

accelerator = Extension(
    "tracejit._src._accel",
    sources=sorted(glob("csrc/accel/*.c")),
    depends=sorted(glob("csrc/accel/*.h")),
    # (src/tracejit/_src/runtime: xla_ffi.h, the XLA FFI declarations cffi reads too)
    include_dirs=[np.get_include(), "src/tracejit/_src/runtime"],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_23_API_VERSION")],
    extra_compile_args=["-O3", "-std=c11"],
    optional=True,
)

setup(ext_modules=[accelerator])
