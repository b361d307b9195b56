"""Converting a traced value to a Python or NumPy value: allowed only where nothing is lost.

Under `grad` a value is known (eager evaluation computes it) but carries a derivative: turning
it into a float or a NumPy array would silently make it a constant, so those conversions raise
as JAX 0.10.2 raises (and `.item()` too, a deliberate step beyond JAX, which returns the value
there and drops the derivative). Integers and truth values have a zero derivative, so `int()`,
`__index__()` and `bool()` give the value. Under `vmap`, `jit` and staging nothing is concrete.
"""

import math
import operator

import numpy as np
import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src.core import Tracer
from tracejit.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
)

LOSSY = {
    "float": (lambda x: x * float(x), ConcretizationTypeError, "`float` function"),
    "complex": (lambda x: x * complex(x).real, ConcretizationTypeError, "`complex` function"),
    "np.asarray": (lambda x: x * np.asarray(x), TracerArrayConversionError, r"__array__\(\)"),
    "item": (lambda x: x * x.item(), ConcretizationTypeError, r"\.item\(\)"),
    "tolist": (lambda x: x * x.tolist(), ConcretizationTypeError, r"\.tolist\(\)"),
    "math.sqrt": (lambda x: x * math.sqrt(x), ConcretizationTypeError, "`float` function"),
    "%f": (lambda x: x * float("%f" % x), ConcretizationTypeError, "`float` function"),  # noqa: UP031
}


@pytest.mark.parametrize("name", LOSSY)
def test_under_grad_a_conversion_that_drops_the_derivative_raises(name):
    fun, error, operation = LOSSY[name]
    with pytest.raises(error, match=operation) as info:
        jax.grad(fun)(1.5)
    message = str(info.value)
    assert "test_tracer_conversions.py" in message  # the user's line
    assert "drop its derivative" in message


@pytest.mark.parametrize("name", LOSSY)
def test_under_jvp_too(name):
    fun, error, _ = LOSSY[name]
    with pytest.raises(error):
        jax.jvp(fun, (1.5,), (1.0,))


def test_integer_and_truth_conversions_give_the_value_under_grad():
    assert jax.grad(lambda x: x * int(x))(1.5) == 1.0
    assert jax.grad(lambda x: x * 2.0 if x > 0 else x)(1.5) == 2.0
    table = jnp.array([1.0, 2.0])
    assert jax.grad(lambda x: x * table[x.astype(jnp.int32).__index__()])(1.5) == 2.0


@pytest.mark.parametrize(
    ("convert", "error"),
    [
        (int, ConcretizationTypeError),  # as JAX 0.10.2: __index__ raises the integer error
        (operator.index, TracerIntegerConversionError),
        (bool, TracerBoolConversionError),
        (float, ConcretizationTypeError),
        (np.asarray, TracerArrayConversionError),
        (lambda x: x.item(), ConcretizationTypeError),
    ],
)
@pytest.mark.parametrize("transform", ["vmap", "jit", "make_jaxpr"])
def test_under_vmap_jit_and_staging_every_conversion_raises(convert, error, transform):
    def fun(x):
        convert(x)
        return x

    wrapped = {"vmap": jax.vmap, "jit": jax.jit, "make_jaxpr": jax.make_jaxpr}[transform](fun)
    with pytest.raises(error):
        wrapped(jnp.ones(1) if transform == "vmap" else 1.0)


def test_has_aux_outputs_come_back_as_values_not_tracers():
    g, aux = jax.grad(lambda x: (x * x, {"a": x, "b": 2 * x}), has_aux=True)(2.0)
    assert g == 4.0
    assert not isinstance(aux["a"], Tracer) and not isinstance(aux["b"], Tracer)
    np.testing.assert_allclose(np.asarray(aux["a"]), 2.0)  # a value: converts freely
    np.testing.assert_allclose(np.asarray(aux["b"]), 4.0)
    _, _, aux = jax.vjp(lambda x: (jnp.sin(x), x), 0.5, has_aux=True)
    assert float(aux) == 0.5
