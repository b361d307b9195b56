"""Records how JAX 0.10.2 prints the jaxprs of the convolution and dot calls of
`conv_jaxpr_cases.py` for `test_conv_jaxprs.py`, which never imports JAX. To regenerate, in a
virtualenv with `jax==0.10.2` (CPU), from a directory outside the repository:

    python /path/to/tests/lax/make_jax_reference_conv_jaxprs.py
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
DATA = HERE / "data" / "conv_jaxprs.json"


def main():
    import jax

    sys.path.insert(0, str(HERE))
    from conv_jaxpr_cases import jaxpr_cases

    printed = {
        case: str(jax.make_jaxpr(fun)(*args)) for case, (fun, args) in jaxpr_cases(jax).items()
    }
    DATA.write_text(json.dumps(printed, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
