"""A tour of tracejit: `python -m tracejit.demo`.

The seed examples, end to end: the jaxprs that tracing produces, Python control flow on shapes,
the errors for control flow on values and `lax.cond`, which stages it, eager NumPy-backed
evaluation, per-example gradients, and the JAX paper's Table 1: a Truncated Newton-CG optimizer
written with `lax.while_loop` (and `lax.scan` inside an HMM likelihood), jitted whole, against
the same algorithm run op by op in NumPy.

`bench/control_flow.py` times the same problems more carefully; they are defined here (the demo
is installed, the benchmarks are not).
"""

import dataclasses
import itertools
import os
import statistics
import sys
import time

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


def f_cond(x):
    return lax.cond(x > 0, lambda x: 2 * x**3.0, lambda x: 3 * x, x)


# --- The JAX paper's Table 1: Truncated Newton-CG ----------------------------------------------
# The optimizer is written once against an array module `xp` and a `while_loop`: with
# `tracejit.numpy` and `lax.while_loop` it stages into one program (three nested while loops:
# Newton steps, conjugate gradient, backtracking line search) that `jit` compiles whole; with
# NumPy, `python_while_loop` and hand-written derivatives it is the op-by-op reference, like the
# paper's "Python" column (which ran Autograd, with more overhead per operation).


def python_while_loop(cond_fun, body_fun, state):
    """`lax.while_loop`'s contract as a plain Python loop."""
    while cond_fun(state):
        state = body_fun(state)
    return state


def newton_cg(fun, grad, hvp, x0, *, xp, while_loop, newton_steps, cg_steps, cg_tol=1e-3):
    """Minimize `fun` from `x0`: Newton steps whose direction solves `H p = -g` by at most
    `cg_steps` conjugate-gradient iterations (stopping at relative residual `cg_tol`, or at
    negative curvature), then a backtracking line search. `hvp(x, v)` is the Hessian-vector
    product. Returns `(x, fun(x), newton steps taken, Hessian-vector products used)`."""

    def conjugate_gradient(x, g):
        tolerance = cg_tol**2 * xp.sum(g * g)

        def keep_going(state):
            i, _, _, _, rr, negative = state
            return (i < cg_steps) & (rr > tolerance) & ~negative

        def step(state):
            i, p, r, d, rr, _ = state
            Hd = hvp(x, d)
            dHd = xp.sum(d * Hd)
            negative = dHd <= 0  # stop; on the first iteration, step along -g
            alpha = rr / xp.where(negative, 1.0, dHd)
            p = xp.where(negative, xp.where(i == 0, d, p), p + alpha * d)
            r = r - alpha * Hd
            rr_next = xp.sum(r * r)
            return i + 1, p, r, r + (rr_next / rr) * d, rr_next, negative

        r = -g
        init = (xp.asarray(0), xp.zeros_like(g), r, r, xp.sum(r * r), xp.asarray(False))
        iterations, p, *_ = while_loop(keep_going, step, init)
        return p, iterations

    def newton_step(state):
        k, x, g, fx, hvps = state
        p, iterations = conjugate_gradient(x, g)
        slope = xp.sum(g * p)

        def too_long(search):
            t, f_t = search
            return (f_t > fx + 1e-4 * t * slope) & (t > 1e-3)

        def halve(search):
            t = search[0] * 0.5
            return t, fun(x + t * p)

        t, f_t = while_loop(too_long, halve, (xp.ones((), x.dtype), fun(x + p)))
        better = f_t < fx
        x = xp.where(better, x + t * p, x)
        return k + 1, x, grad(x), xp.where(better, f_t, fx), hvps + iterations

    def keep_going(state):
        k, _, g, _, _ = state
        return (k < newton_steps) & (xp.sum(g * g) > 1e-12)

    init = (xp.asarray(0), x0, grad(x0), fun(x0), xp.asarray(0))
    k, x, _, fx, hvps = while_loop(keep_going, newton_step, init)
    return x, fx, k, hvps


@dataclasses.dataclass
class Problem:
    """One row of Table 1: `fun(x, data)` in `tracejit.numpy`, and its NumPy twin with
    hand-written gradient and Hessian-vector product, closed over the same data."""

    name: str
    fun: object
    data: object
    x0: np.ndarray
    np_fun: object
    np_grad: object
    np_hvp: object
    newton_steps: int
    cg_steps: int
    paper: tuple  # (Python s, JAX s, speedup) from the paper's Table 1


def logsumexp(x, axis):
    top = lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    return jnp.squeeze(top, axis) + jnp.log(jnp.sum(jnp.exp(x - top), axis=axis))


def np_logsumexp(x, axis):
    top = np.max(x.real, axis=axis, keepdims=True)  # .real: also for the complex step below
    return np.squeeze(top, axis) + np.log(np.sum(np.exp(x - top), axis=axis))


def quadratic_problem(n=200, seed=0):
    """`x·Ax/2 - b·x` with A's eigenvalues spread over 1e-2..1e2, so that truncated CG needs
    several Newton steps."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = (Q * np.logspace(-2, 2, n)) @ Q.T
    A = ((A + A.T) / 2).astype(np.float32)
    b = rng.normal(size=n).astype(np.float32)

    def fun(x, data):
        A, b = data
        return 0.5 * jnp.dot(x, jnp.dot(A, x)) - jnp.dot(b, x)

    return Problem(
        "quadratic", fun, (A, b), np.zeros(n, np.float32),
        np_fun=lambda x: 0.5 * (x @ (A @ x)) - b @ x,
        np_grad=lambda x: A @ x - b,
        np_hvp=lambda x, v: A @ v,
        newton_steps=10, cg_steps=20, paper=(4.12, 0.036, 114),
    )  # fmt: skip


def hmm_problem(states=4, symbols=6, length=200, seed=0, reg=1e-2):
    """Fit a discrete HMM by maximum likelihood: the negative log marginal likelihood per
    observation (forward algorithm in log space, a `lax.scan`), parameters as softmax logits
    (initial, transition and emission), plus a small L2 term. Long because the NumPy
    reference (forward-backward and its hand-derived gradient) sits beside the traced
    objective it is checked against."""
    rng = np.random.default_rng(seed)
    K, M, T = states, symbols, length
    A = rng.dirichlet(np.full(K, 0.5), size=K)
    E = rng.dirichlet(np.full(M, 0.5), size=K)
    z, obs = rng.choice(K), []
    for _ in range(T):
        obs.append(rng.choice(M, p=E[z]))
        z = rng.choice(K, p=A[z])
    onehot = np.eye(M, dtype=np.float32)[obs]  # (T, M)

    def log_params(x, logsumexp):
        a, B, C = x[:K], x[K : K + K * K].reshape(K, K), x[K + K * K :].reshape(K, M)
        return a - logsumexp(a, 0), B - logsumexp(B, 1)[:, None], C - logsumexp(C, 1)[:, None]

    def fun(x, onehot):
        log_pi, log_A, log_E = log_params(x, logsumexp)
        emissions = jnp.dot(onehot, log_E.T)  # (T, K)

        def forward(log_alpha, e):
            return logsumexp(log_alpha[:, None] + log_A, 0) + e, None

        log_alpha, _ = lax.scan(forward, log_pi + emissions[0], emissions[1:])
        return -logsumexp(log_alpha, 0) / T + 0.5 * reg * jnp.sum(x * x)

    def forward_backward(x):
        log_pi, log_A, log_E = log_params(x, np_logsumexp)
        e = onehot @ log_E.T
        log_alpha, log_beta = np.empty_like(e), np.zeros_like(e)
        log_alpha[0] = log_pi + e[0]
        for t in range(1, T):
            log_alpha[t] = np_logsumexp(log_alpha[t - 1][:, None] + log_A, 0) + e[t]
        for t in range(T - 2, -1, -1):
            log_beta[t] = np_logsumexp(log_A + e[t + 1] + log_beta[t + 1], 1)
        return log_pi, log_A, log_E, e, log_alpha, log_beta

    def np_fun(x):
        log_alpha = forward_backward(x)[4]
        return -np_logsumexp(log_alpha[-1], 0) / T + 0.5 * reg * np.sum(x * x)

    def np_grad(x):
        """The gradient of log p(obs) in the logits: expected counts from forward-backward."""
        log_pi, log_A, log_E, e, log_alpha, log_beta = forward_backward(x)
        log_z = np_logsumexp(log_alpha[-1], 0)
        gamma = np.exp(log_alpha + log_beta - log_z)  # (T, K) state posteriors
        xi = np.zeros_like(log_A)  # expected transition counts
        for t in range(T - 1):
            xi = xi + np.exp(log_alpha[t][:, None] + log_A + e[t + 1] + log_beta[t + 1] - log_z)
        counts = gamma.T @ onehot
        g_pi = gamma[0] - np.exp(log_pi)
        g_A = xi - xi.sum(1, keepdims=True) * np.exp(log_A)
        g_E = counts - counts.sum(1, keepdims=True) * np.exp(log_E)
        return -np.concatenate([g_pi, g_A.ravel(), g_E.ravel()]) / T + reg * x

    def np_hvp(x, v, h=1e-20):
        """Complex step (forward mode in complex arithmetic): H v = Im grad(x + ihv) / h."""
        return (np_grad(x + 1j * h * v).imag / h).astype(x.dtype)

    x0 = (0.1 * rng.normal(size=K + K * K + K * M)).astype(np.float32)
    return Problem(
        "hmm", fun, onehot, x0, np_fun, np_grad, np_hvp,
        newton_steps=15, cg_steps=20, paper=(7.79, 0.057, 153),
    )  # fmt: skip


def logistic_problem(examples=20_000, features=100, seed=0, reg=1e-3):
    """L2-regularized logistic regression; the work is in matrix-vector products."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(examples, features)).astype(np.float32)
    y = rng.random(examples) < 1 / (1 + np.exp(-X @ rng.normal(size=features)))
    y = y.astype(np.float32)

    def fun(w, data):
        X, y = data
        z = jnp.dot(X, w)
        softplus = jnp.maximum(z, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(z)))
        return jnp.mean(softplus - y * z) + 0.5 * reg * jnp.sum(w * w)

    def np_fun(w):
        z = X @ w
        return np.mean(np.logaddexp(0, z) - y * z) + 0.5 * reg * np.sum(w * w)

    def np_grad(w):
        s = 1 / (1 + np.exp(-(X @ w)))
        return X.T @ (s - y) / examples + reg * w

    def np_hvp(w, v):
        s = 1 / (1 + np.exp(-(X @ w)))
        return X.T @ (s * (1 - s) * (X @ v)) / examples + reg * v

    return Problem(
        "logistic", fun, (X, y), np.zeros(features, np.float32), np_fun, np_grad, np_hvp,
        newton_steps=10, cg_steps=20, paper=(3.62, 1.19, 3),
    )  # fmt: skip


def table1_problems():
    return [quadratic_problem(), hmm_problem(), logistic_problem()]


def staged_newton_cg(problem):
    """`newton_cg(problem)` as a function of `(x0, data)`, Hessian-vector products by
    forward-over-reverse `jvp(grad(f))`: `jit` it, or call it eagerly."""

    def solve(x0, data):
        f = lambda x: problem.fun(x, data)
        grad = jax.grad(f)
        hvp = lambda x, v: jax.jvp(grad, (x,), (v,))[1]
        return newton_cg(f, grad, hvp, x0, xp=jnp, while_loop=lax.while_loop,
                         newton_steps=problem.newton_steps, cg_steps=problem.cg_steps)  # fmt: skip

    return solve


def numpy_newton_cg(problem):
    return newton_cg(problem.np_fun, problem.np_grad, problem.np_hvp, problem.x0, xp=np,
                     while_loop=python_while_loop, newton_steps=problem.newton_steps,
                     cg_steps=problem.cg_steps)  # fmt: skip


class ProgressBar:
    """`[#####     ] quadratic 3/5`, redrawn in place on a terminal; elsewhere (a pipe, a log
    file) only the finished bar is printed, once."""

    def __init__(self, label, total, width=20, stream=None):
        self.label, self.total, self.width, self.done = label, total, width, 0
        self.stream = stream or sys.stdout
        self.live = getattr(self.stream, "isatty", lambda: False)()
        if self.live:
            self._draw("")

    def _draw(self, end):
        filled = self.width * self.done // self.total
        bar = "#" * filled + " " * (self.width - filled)
        self.stream.write(f"\r[{bar}] {self.label} {self.done}/{self.total}{end}")
        self.stream.flush()

    def advance(self, phase=""):
        self.done = min(self.done + 1, self.total)
        if self.live:
            self._draw(f" {phase:<8}")

    def close(self):
        self.done = self.total
        self._draw(" " * 9 + "\n" if self.live else "\n")


def time_newton_cg(problem, numpy_runs=3, jit_runs=3, numpy_budget_s=1.0, bar=None):
    """Median seconds of the NumPy runs (no more once `numpy_budget_s` is spent) and of the
    jitted runs, the first jitted call (trace, lower, compile, run), and both results."""
    advance = bar.advance if bar else lambda phase: None
    numpy_times = []
    for _ in range(numpy_runs):
        if sum(numpy_times) <= numpy_budget_s:
            start = time.perf_counter()
            reference = numpy_newton_cg(problem)
            numpy_times.append(time.perf_counter() - start)
        advance("numpy")
    solve = jax.jit(staged_newton_cg(problem))
    x0 = jax.device_put(problem.x0)
    data = jax.tree_util.tree_map(jax.device_put, problem.data)
    start = time.perf_counter()
    result = jax.block_until_ready(solve(x0, data))
    first = time.perf_counter() - start
    advance("compile")
    jit_times = []
    for _ in range(jit_runs):
        start = time.perf_counter()
        result = jax.block_until_ready(solve(x0, data))
        jit_times.append(time.perf_counter() - start)
        advance("jit")
    return {
        "numpy_s": statistics.median(numpy_times),
        "numpy_runs": len(numpy_times),
        "jit_s": statistics.median(jit_times),
        "jit_first_call_s": first,
        "compile_s": first - statistics.median(jit_times),
        "numpy_objective": float(reference[1]),
        "jit_objective": float(result[1]),
        "numpy_newton_steps": int(reference[2]),
        "jit_newton_steps": int(result[2]),
        "numpy_hvps": int(reference[3]),
        "jit_hvps": int(result[3]),
    }


def objectives_agree(row, rtol=1e-4):
    a, b = row["numpy_objective"], row["jit_objective"]
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1.0)


def section(title):
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def tour_staging():
    """What tracing stages, and what it cannot."""
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

    section("lax.cond stages both branches; one runs")
    print(jax.make_jaxpr(f_cond)(1.0))
    print("f_cond(1.) =", f_cond(1.0), "  jit(f_cond)(-1.) =", jax.jit(f_cond)(-1.0))
    print("grad(f_cond)(1.) =", jax.grad(f_cond)(1.0), "  grad(f_cond)(-1.) =",
          jax.grad(f_cond)(-1.0))  # fmt: skip


def tour_transformations():
    """grad, vmap and jit on the seed's MLP; returns its parameters and a batch."""
    section("eager evaluation of the seed's MLP loss")
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = [
        (jnp.asarray(rng.normal(0, 0.05, (m, n))), jnp.asarray(np.zeros(n)))
        for m, n in itertools.pairwise(sizes)
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
    return params, batch


def tour_speed(params, batch):
    """jit(grad(loss)) against eager grad(loss)."""
    section("jit(grad(loss)): traced once, compiled by XLA, called at native speed")
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


def tour_table1():
    """The JAX paper's Table 1, timed against NumPy."""
    section("the JAX paper's Table 1: Truncated Newton-CG, jitted whole (float32)")
    print("Newton steps in lax.while_loop, conjugate gradient in lax.while_loop with")
    print("Hessian-vector products jvp(grad(f)), the HMM's forward algorithm in lax.scan;")
    print("against the same algorithm op by op in NumPy with hand-written derivatives (the")
    print("paper's Python column ran Autograd, with more overhead per operation).")
    print(f"Medians of 3 runs; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(on a busy machine,\n`NPROC=1 python bench/control_flow.py` is steadier).")  # fmt: skip
    rows = []
    for problem in table1_problems():
        bar = ProgressBar(f"{problem.name:<9}", total=3 + 1 + 3)  # NumPy, compile, jit
        rows.append((problem, time_newton_cg(problem, numpy_runs=3, jit_runs=3, bar=bar)))
        bar.close()
    print(f"{'problem':<10} {'NumPy s':>8} {'jit s':>8} {'first call s':>12} {'speedup':>8} "
          f"{'paper':>6}  objectives agree")  # fmt: skip
    for problem, row in rows:
        print(f"{problem.name:<10} {row['numpy_s']:>8.3f} {row['jit_s']:>8.4f} "
              f"{row['jit_first_call_s']:>12.2f} {row['numpy_s'] / row['jit_s']:>7.1f}x "
              f"{problem.paper[2]:>5}x  {objectives_agree(row)} "
              f"({row['numpy_objective']:.6g} vs {row['jit_objective']:.6g})")  # fmt: skip
    print("first call: trace, lower and compile (or load from the persistent cache) and run")
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        print("the machine is busy: NumPy's BLAS threads and XLA's wait for cores, and the NumPy")
        print("times above may be several times what they are on an idle machine")


def main():
    tour_staging()
    tour_speed(*tour_transformations())
    tour_table1()


if __name__ == "__main__":
    main()
