"""Records JAX 0.10.2's answers to the `lax.ragged_all_to_all` cases of `ragged_cases.py`
(jaxpr printouts of shard_maps using it, and its errors) into data/ragged_all_to_all.json.
Run by hand, with JAX 0.10.2 installed, from the repository:

    XLA_FLAGS=--xla_force_host_platform_device_count=4 \
        python tools/jax_reference.py tests/parallel/make_jax_reference_ragged.py
"""

import json
import pathlib

from ragged_cases import run_all

DATA = pathlib.Path(__file__).parent / "data" / "ragged_all_to_all.json"


def main(jax):
    with open(DATA, "w") as file:
        json.dump(
            run_all(jax, jax.numpy, jax.lax, jax.sharding.PartitionSpec),
            file,
            indent=1,
            sort_keys=True,
        )
        file.write("\n")
