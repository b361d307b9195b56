"""The teaching file agrees with the real system.

`docs/tracejit_in_one_file.py` is run as a script. Each case below is written once against an
API (`jvp`, `vmap`, `grad`, `make_jaxpr`, `sin`, `reduce_sum`, `func1`) and run twice: on the
teaching file's names and on tracejit's, which must agree. The jaxprs the file prints must be
the ones tracejit prints."""

import contextlib
import io
import pathlib
import runpy
from types import SimpleNamespace

import numpy as np
import pytest

import tracejit
import tracejit.numpy as jnp
from tracejit import lax

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def real_func1(first, second):
    return jnp.sum(first + jnp.sin(second) * 3.0)


REAL = SimpleNamespace(
    jvp=tracejit.jvp,
    vmap=tracejit.vmap,
    grad=tracejit.grad,
    make_jaxpr=tracejit.make_jaxpr,
    sin=jnp.sin,
    reduce_sum=lax.reduce_sum,
    func1=real_func1,
)


@pytest.fixture(scope="module")
def teaching():
    """The teaching file's namespace, and what it printed when run as a script."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        namespace = runpy.run_path(str(DOCS / "tracejit_in_one_file.py"), run_name="__main__")
    return SimpleNamespace(**namespace), out.getvalue()


# The values the file prints, in the order it prints them (`d` holds the file's inputs).
PRINTED_VALUES = {
    "eval": lambda t, d: t.func1(d.first, d.second),
    "jvp": lambda t, d: t.jvp(t.func1, (d.first, d.second), (d.zeros, d.ones))[1],
    "jvp of jvp": lambda t, d: t.jvp(lambda x: t.jvp(t.sin, (x,), (d.ones,))[1], (d.x,), (d.ones,))[
        1
    ],
    "vmap": lambda t, d: t.vmap(t.func1, in_axes=(1, None))(d.columns, d.second),
    "grad": lambda t, d: t.grad(t.func1, argnums=1)(d.first, d.second),
    "vmap of grad": lambda t, d: t.vmap(t.grad(t.func1, argnums=1), in_axes=(None, 1))(
        d.first, d.columns
    ),
    "grad of grad": lambda t, d: t.grad(t.grad(t.sin))(np.float32(0.5)),
}

# Compositions the file does not print, which reach the rest of its rules: the transposes of
# transpose and broadcast_in_dim, unbroadcasting, the batching of neg, add_any, transpose,
# broadcast_in_dim and of scalars among arrays, the JVP of add_any.
MORE_VALUES = {
    "grad of vmap": lambda t, d: t.grad(
        lambda c, s: t.reduce_sum(t.vmap(t.func1, in_axes=(1, None))(c, s), (0,)), argnums=0
    )(d.columns, d.x),
    "grad of vmap, unbatched argument": lambda t, d: t.grad(
        lambda c, s: t.reduce_sum(t.vmap(t.func1, in_axes=(1, None))(c, s), (0,)), argnums=1
    )(d.columns, d.x),
    "jvp of vmap": lambda t, d: t.jvp(
        t.vmap(t.func1, in_axes=(1, None)), (d.columns, d.x), (d.columns, d.ones)
    )[1],
    "vmap of jvp": lambda t, d: t.vmap(
        lambda c: t.jvp(t.func1, (c, d.x), (c, d.ones))[1], in_axes=(1,)
    )(d.columns),
    "vmap of grad, two uses of the argument": lambda t, d: t.vmap(
        t.grad(lambda v: t.func1(v, v)), in_axes=(1,)
    )(d.columns),
    "vmap over scalars": lambda t, d: t.vmap(lambda s, v: s * t.sin(v), in_axes=(0, None))(
        d.x, d.columns
    ),
    "grad through a scalar broadcast": lambda t, d: t.grad(
        lambda s, v: t.func1(v, s * v), argnums=0
    )(np.float32(0.5), d.x),
    "grad with respect to first": lambda t, d: t.grad(t.func1)(d.x, d.x),
    "vmap of vmap": lambda t, d: t.vmap(t.vmap(t.func1, in_axes=(1, None)), in_axes=(2, 0))(
        d.columns[:, :, None] * d.x[:3], d.columns.T[:3]
    ),
    "vmap of jvp of jvp": lambda t, d: t.vmap(
        lambda v: t.jvp(lambda y: t.jvp(t.sin, (y,), (d.one,))[1], (v,), (d.one,))[1],
        in_axes=(0,),
    )(d.x),
    "jvp of grad": lambda t, d: t.jvp(t.grad(lambda v: t.func1(v, v)), (d.x,), (d.ones,))[1],
}


def _inputs(ns):
    ones, zeros = np.ones(8, np.float32), np.zeros(8, np.float32)
    return SimpleNamespace(
        first=ns.first,
        second=ns.second,
        columns=ns.columns,
        x=ns.x,
        ones=ones,
        zeros=zeros,
        one=np.float32(1.0),
    )


@pytest.mark.parametrize("name", [*PRINTED_VALUES, *MORE_VALUES])
def test_computes_what_tracejit_computes(teaching, name):
    ns, _ = teaching
    case = {**PRINTED_VALUES, **MORE_VALUES}[name]
    got, want = np.asarray(case(ns, _inputs(ns))), np.asarray(case(REAL, _inputs(ns)))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_prints_the_values_it_computes(teaching):
    ns, printed = teaching
    for case in PRINTED_VALUES.values():
        assert str(case(ns, _inputs(ns))) in printed


def test_prints_the_jaxprs_tracejit_prints(teaching):
    ns, printed = teaching
    first, second, columns = ns.first, ns.second, ns.columns
    _, func1_jvp = tracejit.linearize(real_func1, first, second)
    staged = tracejit.make_jaxpr(real_func1)(first, second)
    batched = tracejit.make_jaxpr(tracejit.vmap(real_func1, in_axes=(1, None)))(columns, second)
    linear = tracejit.make_jaxpr(func1_jvp)(first, second)  # consts become constvars
    assert str(ns.make_jaxpr(ns.func1)(first, second)) == str(staged)
    assert str(ns.make_jaxpr(ns.vmap(ns.func1, in_axes=(1, None)))(columns, second)) == str(batched)
    assert str(ns.linearize_flat(ns.func1, (first, second))[1]) == str(linear)
    for jaxpr in (staged, batched, linear):
        assert str(jaxpr) in printed
