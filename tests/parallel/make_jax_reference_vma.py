"""Records JAX 0.10.2's typing of the shard_map bodies in `vma_cases.py` into
data/vma.json. Run by hand, with JAX 0.10.2 installed, from the repository:

    XLA_FLAGS=--xla_force_host_platform_device_count=4 \
        python tools/jax_reference.py tests/parallel/make_jax_reference_vma.py
"""

import json
import pathlib

from vma_cases import run_all

DATA = pathlib.Path(__file__).parent / "data" / "vma.json"


def main(jax):
    with open(DATA, "w") as file:
        json.dump(
            run_all(jax, jax.numpy, jax.lax, jax.sharding.PartitionSpec),
            file,
            indent=1,
            sort_keys=True,
        )
        file.write("\n")
