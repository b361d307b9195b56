"""The `tracejit.nn` calls whose jaxprs `test_jaxprs.py` compares with JAX's (recorded by
`make_jax_reference_jaxprs.py`): JAX stages most activations as a `jit` of their own (`relu` as
a `custom_jvp_call` around `jit[name=relu ...]`), others inline. Written against a module `jax`
passed in, so that the recording script runs them on JAX and the test on tracejit; each case is
a function and its arguments."""

import numpy as np

X = np.linspace(-0.9, 0.9, 6).astype(np.float32).reshape(2, 3)
CLASSES = np.array([0, 2, 1], np.int32)


def jaxpr_cases(jax) -> dict:
    nn = jax.nn
    return {
        "relu": (nn.relu, (X,)),
        "relu_int": (nn.relu, (3,)),
        "relu6": (nn.relu6, (X,)),
        "gelu": (nn.gelu, (X,)),
        "gelu_exact": (lambda a: nn.gelu(a, approximate=False), (X,)),
        "gelu_exact_scalar": (lambda a: nn.gelu(a, approximate=False), (2.0,)),
        "silu": (nn.silu, (X,)),
        "swish": (nn.swish, (X,)),
        "sigmoid": (nn.sigmoid, (X,)),
        "softplus": (nn.softplus, (X,)),
        "log_sigmoid": (nn.log_sigmoid, (X,)),
        "elu": (nn.elu, (X,)),
        "elu_alpha": (lambda a: nn.elu(a, 0.5), (X,)),
        "celu": (nn.celu, (X,)),
        "selu": (nn.selu, (X,)),
        "leaky_relu": (nn.leaky_relu, (X,)),
        "hard_tanh": (nn.hard_tanh, (X,)),
        "softmax": (nn.softmax, (X,)),
        "softmax_axis0": (lambda a: nn.softmax(a, axis=0), (X,)),
        "log_softmax": (nn.log_softmax, (X,)),
        "log_softmax_where": (lambda a: nn.log_softmax(a, axis=0, where=a > 0), (X,)),
        "logsumexp": (nn.logsumexp, (X,)),
        "one_hot": (lambda c: nn.one_hot(c, 3), (CLASSES,)),
        "one_hot_axis0_int8": (
            lambda c: nn.one_hot(c.astype(np.int8), 4, axis=0, dtype=np.int32),
            (CLASSES,),
        ),
        "standardize": (nn.standardize, (X,)),
        "standardize_stable": (
            lambda a: nn.standardize(a, axis=0, epsilon=1e-3, algorithm="stable"),
            (X,),
        ),
        "glu": (lambda a: nn.glu(a[:, :2]), (X,)),
        "dot_product_attention": (
            lambda a: nn.dot_product_attention(a, a, a),
            (np.linspace(-1, 1, 48).astype(np.float32).reshape(2, 3, 2, 4),),
        ),
    }
