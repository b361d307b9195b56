"""Records JAX 0.10.2's types of the functions in `sharding_in_types_cases.py` (arrays on a
2x2 mesh of Explicit axes) into data/sharding_in_types.json. Run by hand, from outside the
repository:

    XLA_FLAGS=--xla_force_host_platform_device_count=4 \
        python tools/jax_reference.py tests/parallel/make_jax_reference_sharding_in_types.py
"""

import json
import pathlib

from sharding_in_types_cases import run_all

DATA = pathlib.Path(__file__).parent / "data" / "sharding_in_types.json"


def main(jax):
    with open(DATA, "w") as file:
        json.dump(
            run_all(
                jax, jax.numpy, jax.lax, jax.sharding.NamedSharding, jax.sharding.PartitionSpec
            ),
            file,
            indent=1,
            sort_keys=True,
        )
        file.write("\n")
