"""`tracejit.nn.initializers`: not implemented. JAX's initializers draw from a PRNG key
(`jax.random`), and tracejit has no `tracejit.random` yet; every name raises."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"tracejit.nn.initializers.{name} is not implemented: initializers need PRNG keys from "
        "tracejit.random, which tracejit does not have yet"
    )
