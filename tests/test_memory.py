"""Bounded memory: compiled programs belong to the jitted function that made them, and every
process-wide compile cache keeps only its `tracejit_compile_cache_size` most recently used
entries, so a process that compiles without end holds a bounded amount of memory.

The resident-set tests run in fresh processes, with the disk cache in a temporary folder."""

import gc
import os
import subprocess
import sys
import weakref

import pytest

import tracejit as jax
import tracejit.numpy as jnp
from tracejit._src import dispatch, runtime
from tracejit._src.config import config

pjrt_only = pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)

MEASURE = """
import gc, os, sys
import tracejit as jax, tracejit.numpy as jnp

def resident_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

def compile_once(i):
    jax.jit(lambda x: x * float(i) + 1.0)(x)

x = jnp.ones(3)
warm_up, measured = int(sys.argv[1]), int(sys.argv[2])
for i in range(-warm_up, 0):  # fills the caches: their bound is what is measured
    {step}
gc.collect()
before = resident_mib()
for i in range(measured):
    {step}
gc.collect()
print(resident_mib() - before)
"""


def growth_mib(tmp_path, step: str, warm_up: int, measured: int, **env) -> float:
    """How much the resident set of a fresh process grows over `measured` runs of `step` (a
    statement of `i`), after `warm_up` runs."""
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(tmp_path), **env)
    code = MEASURE.format(step=step)
    out = subprocess.run(
        [sys.executable, "-c", code, str(warm_up), str(measured)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return float(out.stdout)


@pjrt_only
def test_distinct_compiles_hold_bounded_memory(tmp_path):
    """The issue's budget is 50 MB for 2,000 distinct compiles (before: 118 KB each, kept
    forever). A compile takes tens of milliseconds, so this compiles 200 new functions, with
    caches of 32 entries filled beforehand, against the budget scaled to 200/2000: 5 MB."""
    growth = growth_mib(
        tmp_path, "compile_once(i)", warm_up=40, measured=200, TRACEJIT_COMPILE_CACHE_SIZE="32"
    )
    assert growth < 50 * 200 / 2000


@pjrt_only
def test_fresh_wrappers_of_one_body_stay_flat(tmp_path):
    """Each `jit(lambda ...)` of the same body traces again but shares the executable; nothing
    of it outlives the wrapper (before: 4 KB each, kept forever)."""
    step = "jax.jit(lambda x: x * 2.0 + 1.0)(x)"
    assert growth_mib(tmp_path, step, warm_up=100, measured=10_000) < 4.0


def test_a_jitted_function_owns_its_programs(monkeypatch):
    """Its programs die with it; the executables the process-wide cache shares are bounded."""
    monkeypatch.setattr(config, "compile_cache_size", 2)
    monkeypatch.setattr(dispatch, "_executables", dispatch.LRUCache())
    f = jax.jit(lambda x: jnp.sin(x) * 3.0)
    for n in range(1, 5):
        f(jnp.ones(n))
    assert len(f._cache) == 2  # the function's own cache is bounded too
    (entry, *_) = f._cache.values()
    program = weakref.ref(entry.program)
    assert len(dispatch._executables) <= 2
    del f, entry
    gc.collect()
    assert program() is None


def test_lru_cache_forgets_the_least_recently_used(monkeypatch):
    monkeypatch.setattr(config, "compile_cache_size", 2)
    cache = dispatch.LRUCache()
    cache["a"], cache["b"] = 1, 2
    assert cache.get("a") == 1  # now "b" is the least recently used
    cache["c"] = 3
    assert list(cache) == ["a", "c"]
    assert cache.get("b") is None


def test_compile_cache_size_is_an_option(monkeypatch):
    previous = config.read("tracejit_compile_cache_size")
    try:
        jax.config.update("tracejit_compile_cache_size", 7)
        assert config.compile_cache_size == 7
    finally:
        jax.config.update("tracejit_compile_cache_size", previous)
    code = "import tracejit; print(tracejit.config.read('tracejit_compile_cache_size'))"
    env = dict(os.environ, TRACEJIT_COMPILE_CACHE_SIZE="12")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert out.stdout.strip() == "12", out.stderr
