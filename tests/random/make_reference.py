"""Records JAX's random numbers as reference data for `tests/random/test_random.py`.

The tests never import JAX; they compare tracejit's values with the ones this script saved from
real JAX 0.10.2 into `tests/random/data/reference.npz`. To regenerate them, in a virtualenv
with `jax==0.10.2` (CPU) and NumPy:

    python tools/jax_reference.py tests/random/make_reference.py

The cases (`CASES`) are functions of a `random` module (jax.random or tracejit.random), a key
and a NumPy-like module, so that this file is also the tests' table of cases: they load it
without running `main`. Each case is recorded for every seed of `SEEDS`, in both settings of
`jax_threefry_partitionable` where `PARTITION_SENSITIVE`, and the x64 cases with
`jax_enable_x64` on. The array stored under `"<setting>/<case>"` stacks the seeds' results.
"""

from __future__ import annotations

import pathlib

import ml_dtypes
import numpy as np

SEEDS = (0, 1, 42, 2**31 - 1, -1)
DATA = pathlib.Path(__file__).parent / "data" / "reference.npz"

_COV = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
_COV3 = np.array([[1.0, 0.2, 0.1], [0.2, 2.0, -0.3], [0.1, -0.3, 0.5]], np.float32)

# name -> (fun(random, key), exact). `exact`: the sampler is exact arithmetic on the bits
# (bit-for-bit equal); otherwise it goes through a transcendental function (within 2 ulp).
CASES = {
    "split": (lambda r, k: r.split(k), True),
    "split_5": (lambda r, k: r.split(k, 5), True),
    "split_2x3": (lambda r, k: r.split(k, (2, 3)), True),
    "fold_in_7": (lambda r, k: r.fold_in(k, 7), True),
    "fold_in_max": (lambda r, k: r.fold_in(k, np.uint32(2**32 - 1)), True),
    "bits_u8": (lambda r, k: r.bits(k, (7,), np.uint8), True),
    "bits_u16": (lambda r, k: r.bits(k, (3, 3), np.uint16), True),
    "bits_u32": (lambda r, k: r.bits(k, (5,)), True),
    "bits_scalar": (lambda r, k: r.bits(k), True),
    "uniform": (lambda r, k: r.uniform(k, (6,)), True),
    "uniform_range": (lambda r, k: r.uniform(k, (2, 3), minval=-2.0, maxval=5.0), True),
    "uniform_f16": (lambda r, k: r.uniform(k, (5,), np.float16), True),
    "uniform_bf16": (lambda r, k: r.uniform(k, (5,), ml_dtypes.bfloat16), True),
    "uniform_array_bounds": (
        lambda r, k: r.uniform(k, (3,), minval=np.array([0.0, 1.0, 2.0]), maxval=3.0),
        True,
    ),
    "normal": (lambda r, k: r.normal(k, (6,)), False),
    "normal_c64": (lambda r, k: r.normal(k, (3,), np.complex64), False),
    "exponential": (lambda r, k: r.exponential(k, (6,)), False),
    "laplace": (lambda r, k: r.laplace(k, (6,)), False),
    "logistic": (lambda r, k: r.logistic(k, (6,)), False),
    "cauchy": (lambda r, k: r.cauchy(k, (6,)), False),
    "gumbel": (lambda r, k: r.gumbel(k, (6,)), False),
    "gumbel_high": (lambda r, k: r.gumbel(k, (6,), mode="high"), False),
    "truncated_normal": (lambda r, k: r.truncated_normal(k, -1.0, 2.0, (6,)), False),
    "bernoulli": (lambda r, k: r.bernoulli(k, 0.3, (8,)), True),
    "bernoulli_p_array": (lambda r, k: r.bernoulli(k, np.array([0.1, 0.5, 0.9])), True),
    "bernoulli_p_broadcast": (lambda r, k: r.bernoulli(k, np.array([0.2, 0.8]), (3, 2)), True),
    "bernoulli_high": (lambda r, k: r.bernoulli(k, 0.3, (8,), mode="high"), True),
    "rademacher": (lambda r, k: r.rademacher(k, (8,)), True),
    "randint": (lambda r, k: r.randint(k, (6,), 0, 10), True),
    "randint_negative": (lambda r, k: r.randint(k, (6,), -1000, 7), True),
    "randint_u8_wide": (lambda r, k: r.randint(k, (6,), -5, 300, np.uint8), True),
    "randint_empty_range": (lambda r, k: r.randint(k, (3,), 5, 2), True),
    "randint_array_bounds": (lambda r, k: r.randint(k, (4,), 0, np.array([2, 3, 100, 1000])), True),
    "permutation_int": (lambda r, k: r.permutation(k, 10), True),
    "permutation_array": (lambda r, k: r.permutation(k, np.arange(6.0) * 1.5), True),
    "permutation_2d": (lambda r, k: r.permutation(k, np.arange(12).reshape(3, 4), axis=1), True),
    "permutation_independent": (
        lambda r, k: r.permutation(k, np.arange(12).reshape(3, 4), axis=1, independent=True),
        True,
    ),
    "permutation_2000": (lambda r, k: r.permutation(k, 2000), True),
    "choice": (lambda r, k: r.choice(k, 10, (5,)), True),
    "choice_array": (lambda r, k: r.choice(k, np.arange(8.0).reshape(4, 2), (3,), axis=0), True),
    "choice_no_replace": (lambda r, k: r.choice(k, 10, (2, 3), replace=False), True),
    "choice_p": (lambda r, k: r.choice(k, 4, (7,), p=np.array([0.1, 0.2, 0.3, 0.4])), True),
    "choice_p_no_replace": (
        lambda r, k: r.choice(k, 5, (3,), replace=False, p=np.array([0.1, 0.2, 0.3, 0.2, 0.2])),
        True,
    ),
    "categorical": (lambda r, k: r.categorical(k, np.log(np.array([[0.2, 0.3, 0.5]] * 4))), True),
    "categorical_axis0_shape": (
        lambda r, k: r.categorical(k, np.linspace(-1.0, 1.0, 6).reshape(3, 2), 0, (5, 2)),
        True,
    ),
    "categorical_no_replace": (
        lambda r, k: r.categorical(k, np.zeros((2, 6)), shape=(3, 2), replace=False),
        True,
    ),
    "rayleigh": (lambda r, k: r.rayleigh(k, 2.0, (6,)), False),
    "rayleigh_array_scale": (lambda r, k: r.rayleigh(k, np.array([1.0, 2.0, 3.0])), False),
    "maxwell": (lambda r, k: r.maxwell(k, (6,)), False),
    "double_sided_maxwell": (lambda r, k: r.double_sided_maxwell(k, 1.0, 2.0, (6,)), False),
    "double_sided_maxwell_params": (
        lambda r, k: r.double_sided_maxwell(k, np.array([0.0, 1.0]), 2.0, (3,)),
        False,
    ),
    "pareto": (lambda r, k: r.pareto(k, 3.0, (6,)), False),
    "weibull_min": (lambda r, k: r.weibull_min(k, 2.0, 1.5, (6,)), False),
    "lognormal": (lambda r, k: r.lognormal(k, 0.5, (6,)), False),
    "triangular": (lambda r, k: r.triangular(k, -1.0, 0.5, 2.0, (6,)), False),
    "wald": (lambda r, k: r.wald(k, 1.5, (6,)), False),
    "geometric": (lambda r, k: r.geometric(k, 0.3, (6,)), False),
    "gamma": (lambda r, k: r.gamma(k, np.array([0.2, 0.5, 1.0, 2.5, 10.0])), False),
    "gamma_shape": (lambda r, k: r.gamma(k, 3.0, (2, 3)), False),
    "loggamma": (lambda r, k: r.loggamma(k, np.array([0.01, 0.5, 1.0, 2.5, 10.0])), False),
    "beta": (lambda r, k: r.beta(k, 2.0, np.array([0.5, 3.0]), (3, 2)), False),
    "dirichlet": (lambda r, k: r.dirichlet(k, np.array([0.5, 1.0, 2.0]), (2,)), False),
    "chisquare": (lambda r, k: r.chisquare(k, 3.0, (4,)), False),
    "t": (lambda r, k: r.t(k, 4.0, (4,)), False),
    "f": (lambda r, k: r.f(k, 3.0, 5.0, (4,)), False),
    "generalized_normal": (lambda r, k: r.generalized_normal(k, 1.5, (4,)), False),
    "ball": (lambda r, k: r.ball(k, 3, shape=(2,)), False),
    "multivariate_normal": (
        lambda r, k: r.multivariate_normal(k, np.array([1.0, -2.0]), _COV, (3,)),
        False,
    ),
    "multivariate_normal_eigh": (
        lambda r, k: r.multivariate_normal(k, np.zeros(3), _COV3, (2,), method="eigh"),
        False,
    ),
    "multivariate_normal_svd": (
        lambda r, k: r.multivariate_normal(k, np.zeros(3), _COV3, (2,), method="svd"),
        False,
    ),
    "orthogonal": (lambda r, k: r.orthogonal(k, 3, (2,)), False),
    "orthogonal_wide": (lambda r, k: r.orthogonal(k, 2, m=4), False),
    "orthogonal_tall": (lambda r, k: r.orthogonal(k, 4, m=2), False),
    "multivariate_normal_batch": (
        lambda r, k: r.multivariate_normal(k, np.zeros((2, 3)), np.stack([_COV3, 2 * _COV3])),
        False,
    ),
    "poisson": (lambda r, k: r.poisson(k, np.array([0.0, 0.5, 3.0, 9.9, 12.0, 100.0])), True),
    "poisson_shape": (lambda r, k: r.poisson(k, 4.0, (2, 3)), True),
    "binomial": (lambda r, k: r.binomial(k, np.array([5.0, 20.0, 100.0, 1000.0]), 0.3), True),
    "binomial_high_p": (lambda r, k: r.binomial(k, 50.0, np.array([0.7, 0.99, 0.5])), True),
    "binomial_invalid": (
        lambda r, k: r.binomial(k, np.array([-1.0, np.inf, 5.0]), np.array([0.5, 0.5, np.nan])),
        True,
    ),
    "multinomial": (lambda r, k: r.multinomial(k, 10.0, np.array([0.2, 0.3, 0.5])), True),
    "multinomial_batch": (
        lambda r, k: r.multinomial(k, np.array([5.0, 50.0]), np.array([[0.1, 0.9], [0.5, 0.5]])),
        True,
    ),
}

# The cases whose bits depend on jax_threefry_partitionable (recorded in both settings).
PARTITION_SENSITIVE = ("split_5", "split_2x3", "bits_u8", "bits_u16", "bits_u32", "uniform")

# x64 cases: 64-bit bits, floats and integers, and seeds of more than 32 bits.
CASES_X64 = {
    "bits_u64": (lambda r, k: r.bits(k, (5,), np.uint64), True),
    "uniform_f64": (lambda r, k: r.uniform(k, (5,), np.float64), True),
    "normal_f64": (lambda r, k: r.normal(k, (5,), np.float64), False),
    "randint_i64": (lambda r, k: r.randint(k, (5,), -(2**40), 2**40, np.int64), True),
}
PARTITION_SENSITIVE_X64 = ("bits_u64",)

# nn.initializers cases: name -> fun(initializers, key) (recorded with the default settings).
INIT_CASES = {
    "zeros": lambda i, k: i.zeros(k, (2, 3)),
    "orthogonal": lambda i, k: i.orthogonal()(k, (2, 3)),
    "orthogonal_columns": lambda i, k: i.orthogonal(scale=2.0, column_axis=0)(k, (3, 2, 2)),
    "delta_orthogonal": lambda i, k: i.delta_orthogonal()(k, (3, 3, 2, 4)),
    "ones": lambda i, k: i.ones(k, (2, 3), np.float16),
    "constant": lambda i, k: i.constant(-0.5)(k, (3,)),
    "uniform": lambda i, k: i.uniform(0.5)(k, (2, 3)),
    "normal": lambda i, k: i.normal(2.0)(k, (4,)),
    "truncated_normal": lambda i, k: i.truncated_normal(1.5, lower=-1.0)(k, (4,)),
    "glorot_uniform": lambda i, k: i.glorot_uniform()(k, (3, 4)),
    "glorot_normal": lambda i, k: i.glorot_normal()(k, (3, 4)),
    "xavier_uniform": lambda i, k: i.xavier_uniform()(k, (2, 5)),
    "lecun_uniform": lambda i, k: i.lecun_uniform()(k, (3, 4)),
    "lecun_normal": lambda i, k: i.lecun_normal()(k, (3, 4)),
    "he_uniform": lambda i, k: i.he_uniform()(k, (3, 3, 2, 4)),
    "he_normal": lambda i, k: i.he_normal()(k, (3, 3, 2, 4)),
    "kaiming_normal": lambda i, k: i.kaiming_normal(in_axis=0, out_axis=1)(k, (4, 2)),
    "fan_out_normal": lambda i, k: i.variance_scaling(2.0, "fan_out", "normal")(k, (3, 4)),
    "fan_geo_avg_uniform": lambda i, k: i.variance_scaling(0.5, "fan_geo_avg", "uniform")(
        k, (3, 4)
    ),
    "batch_axis": lambda i, k: i.variance_scaling(1.0, "fan_in", "normal", batch_axis=0)(
        k, (2, 3, 4)
    ),
    "complex_uniform": lambda i, k: i.variance_scaling(1.0, "fan_in", "uniform")(
        k, (2, 3), np.complex64
    ),
    "complex_truncated_normal": lambda i, k: i.variance_scaling(1.0, "fan_avg", "truncated_normal")(
        k, (2, 3), np.complex64
    ),
}

# Derivatives of samples: name -> fun(jax, key) (tracejit passes itself as `jax`).
_ALPHAS = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 40.0], np.float32)
GRAD_CASES = {
    "gamma": lambda j, k: j.grad(lambda a: j.random.gamma(k, a).sum())(_ALPHAS),
    "loggamma": lambda j, k: j.grad(lambda a: j.random.loggamma(k, a).sum())(_ALPHAS),
    "beta": lambda j, k: j.grad(lambda a: j.random.beta(k, a, 2.0).sum())(_ALPHAS),
    "dirichlet": lambda j, k: j.grad(lambda a: j.random.dirichlet(k, a)[0])(_ALPHAS),
    "chisquare": lambda j, k: j.grad(lambda a: j.random.chisquare(k, a).sum())(_ALPHAS),
    "gamma_jvp": lambda j, k: j.jvp(lambda a: j.random.gamma(k, a), (_ALPHAS,), (_ALPHAS,))[1],
}

# Seeds given to PRNGKey: (name, seed, x64).
KEY_SEEDS = {
    "x32": (*SEEDS, 2**32 + 5, np.int32(-7), np.uint32(2**32 - 1)),
    "x64": (*SEEDS, 2**32 + 5, 2**40 + 5, -(2**40), np.int64(-1), np.uint64(2**64 - 1)),
}


def record(jax, cases, prefix, out):
    for name, (fun, _) in cases.items():
        out[f"{prefix}/{name}"] = np.stack(
            [np.asarray(fun(jax.random, jax.random.PRNGKey(seed))) for seed in SEEDS]
        )


def main(jax):

    assert jax.__version__ == "0.10.2", jax.__version__
    out = {}
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        setting = "x64" if x64 else "x32"
        out[f"PRNGKey/{setting}"] = np.stack(
            [np.asarray(jax.random.PRNGKey(seed)) for seed in KEY_SEEDS[setting]]
        )
        for partitionable in (True, False):
            jax.config.update("jax_threefry_partitionable", partitionable)
            cases = CASES_X64 if x64 else CASES
            sensitive = PARTITION_SENSITIVE_X64 if x64 else PARTITION_SENSITIVE
            if not partitionable:
                cases = {name: cases[name] for name in sensitive}
            record(jax, cases, f"{setting}/partitionable={partitionable}", out)
    jax.config.update("jax_threefry_partitionable", True)
    jax.config.update("jax_enable_x64", False)
    for name, fun in GRAD_CASES.items():
        out[f"grad/{name}"] = np.stack([np.asarray(fun(jax, jax.random.PRNGKey(s))) for s in SEEDS])
    for name, fun in INIT_CASES.items():
        out[f"init/{name}"] = np.stack(
            [np.asarray(fun(jax.nn.initializers, jax.random.PRNGKey(s))) for s in SEEDS]
        )
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **out)
    print(f"wrote {len(out)} arrays to {DATA}")
