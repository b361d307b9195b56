"""The teaching file agrees with the real system."""

import contextlib
import io
import pathlib
import runpy

import tracejit
import tracejit.numpy as jnp

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def test_tracejit_in_one_file_prints_what_tracejit_prints():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        namespace = runpy.run_path(str(DOCS / "tracejit_in_one_file.py"), run_name="__main__")
    printed_value, printed_jaxpr = out.getvalue().split("\n", 1)

    def func1(first, second):
        return jnp.sum(first + jnp.sin(second) * 3.0)

    real_value = func1(jnp.zeros(8), jnp.ones(8))
    assert abs(float(printed_value) - float(real_value)) < 1e-5
    assert printed_jaxpr.strip() == str(tracejit.make_jaxpr(func1)(jnp.zeros(8), jnp.ones(8)))
    assert "make_jaxpr" in namespace
