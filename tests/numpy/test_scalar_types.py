"""The scalar types JAX 0.10.2 added to jnp: the narrow floats (float4, float6, the newer
float8s) and narrow integers (int2/uint2, and int1/uint1 where ml_dtypes has them) are dtype
specifiers that make strongly typed Arrays when called, as `jnp.float32` does; `character`,
`flexible`, `object_` and `ComplexWarning` are NumPy's own."""

import numpy as np
import pytest

import tracejit.numpy as jnp
from tracejit._src import dtypes

NARROW = [
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e8m0fnu",
    "int2",
    "uint2",
    *[n for n in ["int1", "uint1"] if getattr(dtypes, n) is not None],
]


@pytest.mark.parametrize("name", NARROW)
def test_narrow_types_are_dtype_specifiers_that_make_arrays(name):
    scalar_type = getattr(jnp, name)
    dtype = np.dtype(getattr(dtypes, name))
    assert scalar_type.dtype == dtype and np.dtype(scalar_type) == dtype
    assert scalar_type == getattr(dtypes, name) and repr(scalar_type).endswith(f".{name}'>")
    value = 0 if name == "int1" else 1  # int1 holds -1 and 0
    x = scalar_type(value)
    assert x.dtype == dtype and not x.weak_type and x.shape == ()
    assert float(np.asarray(x, np.float32)) == value
    assert jnp.zeros(3, scalar_type).dtype == dtype
    assert isinstance(np.zeros((), dtype)[()], scalar_type)


def test_int2_wraps_out_of_range_values_as_ml_dtypes_does():
    assert np.asarray(jnp.asarray([1, 2], jnp.int2)).tolist() == [1, -2]


def test_numpy_owned_names_are_numpys():
    assert jnp.object_ is np.object_
    assert jnp.character is np.character and jnp.flexible is np.flexible
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning
    assert jnp.issubdtype(np.str_, jnp.character) and jnp.issubdtype(np.bytes_, jnp.flexible)
