"""Records JAX 0.10.2's answers to the `lax.ragged_all_to_all` cases of `ragged_cases.py`
(jaxpr printouts of shard_maps using it, and its errors) into data/ragged_all_to_all.json.
Run by hand, from outside the repository:

    XLA_FLAGS=--xla_force_host_platform_device_count=4 \
        /work/jaxref/bin/python /work/wt-ragged/tests/parallel/make_jax_reference_ragged.py
"""

import json
import os
import sys

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ragged_cases import run_all

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ragged_all_to_all.json")
with open(out, "w") as file:
    json.dump(run_all(jax, jnp, lax, P), file, indent=1, sort_keys=True)
    file.write("\n")
