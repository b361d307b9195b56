"""Records JAX 0.10.2's drawings of `visualize_sharding` into data/visualize_sharding.txt.

JAX draws them with `rich` (install it beside JAX). Run by hand, with JAX 0.10.2 installed, from the repository:

    XLA_FLAGS=--xla_force_host_platform_device_count=4 \
        python tools/jax_reference.py tests/parallel/make_jax_reference_visualization.py
"""

import contextlib
import io
import pathlib

from visualization_cases import draw_all

DATA = pathlib.Path(__file__).parent / "data" / "visualize_sharding.txt"


def main(jax):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):  # (not a terminal: rich draws no colours)
        draw_all(jax, jax.sharding.NamedSharding, jax.sharding.PartitionSpec)
    DATA.write_text(text.getvalue())
