"""Records how JAX 0.10.2 prints the jaxprs of the `jnp.linalg` and indexing calls of
`linalg_indexing_jaxpr_cases.py` for `test_linalg_indexing_jaxprs.py`, which never imports JAX.
To regenerate, in a virtualenv with `jax==0.10.2` (CPU), from a directory outside the
repository:

    python /path/to/tests/numpy/make_jax_reference_linalg_indexing_jaxprs.py
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
DATA = HERE / "data" / "linalg_indexing_jaxprs.json"


def main():
    import jax

    sys.path.insert(0, str(HERE))
    from linalg_indexing_jaxpr_cases import indexing_cases, linalg_cases

    printed = {
        topic: {case: str(jax.make_jaxpr(fun)(*args)) for case, (fun, args) in cases.items()}
        for topic, cases in (("linalg", linalg_cases(jax)), ("indexing", indexing_cases(jax)))
    }
    DATA.write_text(json.dumps(printed, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
