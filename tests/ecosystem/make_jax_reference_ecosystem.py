"""Records what the programs in `programs/` print on real JAX 0.10.2, into `data/<program>.json`,
for `test_ecosystem.py` to compare tracejit's output with.

Run by hand, with the Python of a virtualenv holding jax==0.10.2, jaxlib, optax==0.2.8,
chex==0.1.92 and equinox==0.13.8 (never from tracejit's own environment):

    python tools/jax_reference.py tests/ecosystem/make_jax_reference_ecosystem.py
"""

import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main(jax):

    assert jax.__version__ == "0.10.2", jax.__version__
    for program in sorted((HERE / "programs").glob("*.py")):
        out = subprocess.run(
            [sys.executable, str(program)], capture_output=True, text=True, check=True
        ).stdout
        results = json.loads(out)
        (HERE / "data" / f"{program.stem}.json").write_text(json.dumps(results, indent=1) + "\n")
        print(program.stem, len(results), "cases")
