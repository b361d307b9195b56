"""Records how JAX 0.10.2 prints the jaxprs of the `jax.scipy` calls of `jaxpr_cases.py` for
`test_jaxprs.py`, which never imports JAX. To regenerate, in a virtualenv with `jax==0.10.2`
(CPU), from a directory outside the repository:

    python /path/to/tests/scipy/make_jax_reference_jaxprs.py
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
DATA = HERE / "data" / "jaxprs.json"


def main():
    import jax

    sys.path.insert(0, str(HERE))
    from jaxpr_cases import jaxpr_cases

    printed = {
        case: str(jax.make_jaxpr(fun)(*args)) for case, (fun, args) in jaxpr_cases(jax).items()
    }
    DATA.write_text(json.dumps(printed, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
