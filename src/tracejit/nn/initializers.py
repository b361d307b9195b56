"""`tracejit.nn.initializers`: parameter initializers (`jax.nn.initializers`);
`orthogonal` and `delta_orthogonal` wait for QR and are absent."""

from tracejit._src.nn.initializers import (  # noqa: F401
    Initializer,
    constant,
    glorot_normal,
    glorot_uniform,
    he_normal,
    he_uniform,
    kaiming_normal,
    kaiming_uniform,
    lecun_normal,
    lecun_uniform,
    normal,
    ones,
    truncated_normal,
    uniform,
    variance_scaling,
    xavier_normal,
    xavier_uniform,
    zeros,
)
