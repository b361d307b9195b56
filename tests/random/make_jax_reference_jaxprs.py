"""Records how JAX 0.10.2 prints the jaxprs of its samplers (`sampler_jaxpr_cases.py`) for
`test_sampler_jaxprs.py`, which never imports JAX. To regenerate, in a virtualenv with
`jax==0.10.2` (CPU), from a directory outside the repository:

    python /path/to/tests/random/make_jax_reference_jaxprs.py
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
DATA = HERE / "data" / "sampler_jaxprs.json"


def main():
    import jax

    sys.path.insert(0, str(HERE))
    from sampler_jaxpr_cases import sampler_calls

    printed = {
        case: str(jax.make_jaxpr(call)(make_key()))
        for case, (call, make_key) in sampler_calls(jax).items()
    }
    DATA.write_text(json.dumps(printed, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
