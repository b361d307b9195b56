"""`tracejit.nn`: neural-network functions (activations, softmax, logsumexp, one_hot,
standardize), as in `jax.nn`. `nn.initializers` needs a PRNG, which tracejit lacks so far."""

from tracejit._src.nn.functions import (  # noqa: F401
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    log_softmax,
    logmeanexp,
    logsumexp,
    mish,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softmax,
    softplus,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    standardize,
    swish,
    tanh,
)
from tracejit.nn import initializers  # noqa: F401

# jax.nn names without an implementation here yet.
_MISSING = (
    "dot_product_attention",
    "scaled_dot_general",
    "scaled_matmul",
    "get_scaled_dot_general_config",
)


def __getattr__(name):
    if name in _MISSING:
        raise NotImplementedError(
            f"tracejit.nn.{name} is not implemented yet (attention and scaled matmuls are "
            "future work)"
        )
    raise AttributeError(f"module 'tracejit.nn' has no attribute {name!r}")
