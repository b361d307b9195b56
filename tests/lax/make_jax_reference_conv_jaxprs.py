"""Records how JAX 0.10.2 prints the jaxprs of the convolution and dot calls of
`conv_jaxpr_cases.py` for `test_conv_jaxprs.py`, which never imports JAX. To regenerate, in a
virtualenv with `jax==0.10.2` (CPU), from the repository's root:

    python tools/jax_reference.py tests/lax/make_jax_reference_conv_jaxprs.py
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent))  # (tests/, for recorded_jaxprs)

from recorded_jaxprs import record


def main(jax):
    record(jax, HERE / "conv_jaxpr_cases.py", HERE / "data" / "conv_jaxprs.json")
