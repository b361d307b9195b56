"""Records how JAX 0.10.2 prints the jaxprs of the `jnp` functions it jits
(`jitted_jaxpr_cases.py`) for `test_jitted_jaxprs.py`, which never imports JAX. To regenerate,
in a virtualenv with `jax==0.10.2` (CPU), from a directory outside the repository:

    python /path/to/tests/numpy/make_jax_reference_jitted_jaxprs.py
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
DATA = HERE / "data" / "jitted_jaxprs.json"


def main():
    import jax

    sys.path.insert(0, str(HERE))
    from jitted_jaxpr_cases import OPERAND, jitted_calls

    printed = {case: str(jax.make_jaxpr(call)(OPERAND)) for case, call in jitted_calls(jax).items()}
    DATA.write_text(json.dumps(printed, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
