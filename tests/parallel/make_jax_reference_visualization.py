"""Records JAX 0.10.2's drawings of `visualize_sharding` into data/visualize_sharding.txt.

JAX draws them with `rich` (install it beside JAX). Run by hand, from outside the repository:

    XLA_FLAGS=--xla_force_host_platform_device_count=4 \
        /work/jaxref/bin/python /work/wt-shard/tests/parallel/make_jax_reference_visualization.py
"""

import contextlib
import io
import os
import sys

import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from visualization_cases import draw_all

text = io.StringIO()
with contextlib.redirect_stdout(text):  # (not a terminal: rich draws no colours)
    draw_all(jax, NamedSharding, P)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "visualize_sharding.txt")
with open(out, "w") as file:
    file.write(text.getvalue())
