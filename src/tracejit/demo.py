"""A tour of tracejit: `python -m tracejit.demo`.

The seed examples, end to end: the jaxprs that tracing produces, Python control flow on shapes,
the errors for control flow on values, and eager NumPy-backed evaluation.
"""

import numpy as np

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax


def func1(first, second):
    temp = first + jnp.sin(second) * 3.0
    return jnp.sum(temp)


def func2(inner, first, second):
    temp = first + inner(second) * 3.0
    return jnp.sum(temp)


def inner(second):
    if second.shape[0] > 4:
        return jnp.sin(second)
    else:
        assert False


def func3(first, second):
    return func2(inner, first, second)


def log2(x):
    ln_x = lax.log(x)
    ln_2 = lax.log(2.0)
    return ln_x / ln_2


def f(x):
    if x > 0:
        return 2 * x**3.0
    else:
        return 3 * x


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)
    return outputs


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return jnp.sum((preds - targets) ** 2)


def section(title):
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def main():
    section("make_jaxpr(func1)(zeros(8), ones(8))")
    print(jax.make_jaxpr(func1)(jnp.zeros(8), jnp.ones(8)))

    section("Python control flow on shapes: make_jaxpr(func3)")
    print(jax.make_jaxpr(func3)(jnp.zeros(8), jnp.ones(8)))

    section("everything is staged, even lax.log(2.)")
    print(jax.make_jaxpr(log2)(jnp.ones(3)))

    section("Python control flow on values cannot be staged")
    try:
        jax.make_jaxpr(f)(1.0)
    except jax.errors.TracerBoolConversionError as err:
        print(f"{type(err).__name__}: {str(err).splitlines()[0]}")

    section("eager evaluation of the seed's MLP loss")
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [
        (jnp.asarray(rng.normal(0, 0.05, (m, n))), jnp.asarray(np.zeros(n)))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]
    batch = (jnp.asarray(rng.normal(size=(128, 784))), jnp.asarray(rng.normal(size=(128, 10))))
    print("loss =", loss(params, batch))

    section("grad, and the seed's slide: Python control flow on values under grad")
    print("grad(f)(1.) =", jax.grad(f)(1.0), "  grad(f)(-1.) =", jax.grad(f)(-1.0))
    print(jax.make_jaxpr(jax.grad(jnp.tanh))(1.0))

    section("per-example gradients: jit(vmap(grad(loss), (None, 0)))")
    small = [(W[:, :32] if i == 0 else W[:32, :32] if i == 1 else W[:32], b[: W.shape[1]])
             for i, (W, b) in enumerate(params)]  # fmt: skip
    small = [(W, jnp.zeros(W.shape[1])) for W, _ in small]
    examples = (batch[0][:8], batch[1][:8])
    perexample_grads = jax.jit(jax.vmap(jax.grad(loss), (None, 0)))
    grads = perexample_grads(small, examples)
    one_by_one = jax.grad(loss)(small, (examples[0][3:4], examples[1][3:4]))
    print("shapes:", [g[0].shape for g in grads])
    print("example 3 agrees with a separate grad call:",
          bool(jnp.allclose(grads[0][0][3], one_by_one[0][0], atol=1e-4)))  # fmt: skip

    section("jit(grad(loss)): traced once, compiled by XLA, called at native speed")
    import time

    gradient_fun = jax.jit(jax.grad(loss))
    start = time.perf_counter()
    jax.block_until_ready(gradient_fun(params, batch))
    compile_s = time.perf_counter() - start

    def median_seconds(fun, runs=5):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            jax.block_until_ready(fun(params, batch))
            times.append(time.perf_counter() - start)
        return sorted(times)[runs // 2]

    eager_s = median_seconds(jax.grad(loss))
    jit_s = median_seconds(gradient_fun)
    print(f"first call (trace + compile): {compile_s * 1e3:.1f} ms")
    print(f"grad(loss) eager: {eager_s * 1e3:.2f} ms   jit(grad(loss)): {jit_s * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
