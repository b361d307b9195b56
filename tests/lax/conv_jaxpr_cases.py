"""The convolution and dot calls whose jaxprs `test_conv_jaxprs.py` compares with JAX's
(recorded by `make_jax_reference_conv_jaxprs.py`): every param printed as JAX 0.10.2 prints it
(`out_sharding=None` included), in the forward pass and in the transposed convolutions of a
gradient. Written against a module `jax` passed in; each case is a function and its
arguments."""

import numpy as np

IMAGE = np.linspace(-0.9, 0.9, 100).astype(np.float32).reshape(2, 2, 5, 5)
KERNEL = np.linspace(-1.0, 1.0, 72).astype(np.float32).reshape(4, 2, 3, 3)


def jaxpr_cases(jax) -> dict:
    lax, jnp = jax.lax, jax.numpy
    hwio = KERNEL.transpose(2, 3, 1, 0)
    return {
        "conv": (lambda a, k: lax.conv(a, k, (1, 1), "SAME"), (IMAGE, KERNEL)),
        "conv_general_dilated": (
            lambda a, k: lax.conv_general_dilated(a, k, (1, 1), "VALID", (1, 1), (2, 1)),
            (IMAGE, KERNEL),
        ),
        "conv_general_dilated_nhwc": (
            lambda a, k: lax.conv_general_dilated(
                a.transpose(0, 2, 3, 1),
                k,
                (2, 2),
                [(1, 1), (0, 1)],
                dimension_numbers=("NHWC", "HWIO", "NHWC"),
                precision="highest",
                preferred_element_type=np.float32,
            ),
            (IMAGE, hwio),
        ),
        "conv_feature_groups": (
            lambda a, k: lax.conv_general_dilated(
                a, k[:, :1], (1, 1), "SAME", feature_group_count=2
            ),
            (IMAGE, KERNEL),
        ),
        "conv_with_general_padding": (
            lambda a, k: lax.conv_with_general_padding(a, k, (1, 1), [(1, 1), (1, 1)], None, None),
            (IMAGE, KERNEL),
        ),
        "conv_transpose": (
            lambda a, k: lax.conv_transpose(
                a, k, (2, 2), "SAME", dimension_numbers=("NCHW", "HWIO", "NCHW")
            ),
            (IMAGE, hwio),
        ),
        "conv_grad": (
            jax.grad(lambda a, k: lax.conv(a, k, (1, 1), "SAME").sum(), argnums=(0, 1)),
            (IMAGE, KERNEL),
        ),
        "dot_general": (
            lambda a: lax.dot_general(a, a, (((3,), (3,)), ((0,), (0,)))),
            (IMAGE,),
        ),
        "dot": (lambda a: lax.dot(a[0, 0], a[0, 0].T), (IMAGE,)),
        "jnp_dot": (lambda a: jnp.dot(a[0, 0], a[0, 0].T), (IMAGE,)),
        "matmul": (lambda a: a[0, 0] @ a[0, 0].T, (IMAGE,)),
        "einsum": (lambda a: jnp.einsum("ij,kj->ik", a[0, 0], a[0, 0]), (IMAGE,)),
    }
