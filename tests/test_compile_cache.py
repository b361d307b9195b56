"""The persistent compile cache cannot hurt: an entry that is damaged, swapped with another or
written by another tracejit or plugin is discarded with one warning, compiled again and
rewritten, and the program still computes the right result.

Each case runs in fresh processes (the in-memory caches would hide the disk), with the cache in
a temporary folder."""

import os
import random
import subprocess
import sys

import pytest

from tracejit._src import compile_cache, dispatch, runtime

pytestmark = pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)

PROGRAMS = (
    "import tracejit as jax, tracejit.numpy as jnp\n"
    "print(float(jax.jit(lambda x: jnp.sum(jnp.cos(x) * 3.0))(jnp.ones(11))))\n"
    "print(float(jax.jit(lambda x: jnp.sum(jnp.exp(x) - 2.0))(jnp.ones(7))))\n"
)
DISCARDED = "Discarding the compile cache entry"


def run(cache, code=PROGRAMS, **env_vars) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(cache), **env_vars)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )


@pytest.fixture
def cache(tmp_path):
    """A cache holding the entries of PROGRAMS, and the output they print."""
    first = run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert DISCARDED not in first.stderr
    entries = sorted((tmp_path / "executables").iterdir())
    assert len(entries) == 2
    return tmp_path, entries, first.stdout


def check_recovers(cache, discarded: int) -> None:
    """A process sees `discarded` unusable entries, computes the right results anyway and leaves
    a cache that the next process uses without complaint."""
    folder, entries, expected = cache
    damaged = run(folder)
    assert damaged.returncode == 0, damaged.stderr
    assert damaged.stdout == expected
    assert damaged.stderr.count(DISCARDED) == discarded, damaged.stderr
    assert sorted((folder / "executables").iterdir()) == entries  # rewritten, no litter
    after = run(folder)
    assert after.stdout == expected
    assert DISCARDED not in after.stderr, after.stderr


def flip(data: bytes, positions) -> bytes:
    flipped = bytearray(data)
    for i in positions:
        flipped[i] ^= 0xFF
    return bytes(flipped)


def header_end(data: bytes) -> int:
    return data.index(b"\n", len(compile_cache._ENTRY_MAGIC)) + 1


@pytest.mark.parametrize(
    "where",
    ["magic", "header", "payload start", "payload middle", "payload end", "anywhere"],
)
def test_flipped_bytes(cache, where):
    path = cache[1][0]
    data = path.read_bytes()
    magic, header = len(compile_cache._ENTRY_MAGIC), header_end(data)
    start = {
        "magic": 0,
        "header": magic,
        "payload start": header,
        "payload middle": (header + len(data)) // 2,
        "payload end": len(data) - 16,
    }.get(where)
    if start is None:
        positions = random.Random(0).sample(range(len(data)), 16)
    else:
        positions = range(start, start + 16)
    path.write_bytes(flip(data, positions))
    check_recovers(cache, discarded=1)


@pytest.mark.parametrize("kind", ["truncated", "empty", "random bytes"])
def test_truncated_empty_and_random_entries(cache, kind):
    path = cache[1][0]
    data = path.read_bytes()
    replacement = {
        "truncated": data[: len(data) // 2],
        "empty": b"",
        "random bytes": random.Random(1).randbytes(len(data)),
    }[kind]
    path.write_bytes(replacement)
    check_recovers(cache, discarded=1)


def test_swapped_entries(cache):
    first, second = cache[1]
    a, b = first.read_bytes(), second.read_bytes()
    first.write_bytes(b)
    second.write_bytes(a)
    check_recovers(cache, discarded=2)


@pytest.mark.parametrize("field", ["tracejit", "plugin", "format"])
def test_an_entry_written_by_another_version(cache, field):
    """A whole, well-formed entry, but written by another tracejit (or plugin, or entry
    format): its payload is not trusted."""
    path = cache[1][0]
    data = path.read_bytes()
    end = header_end(data)
    fields = dict(
        item.split("=", 1)
        for item in data[len(compile_cache._ENTRY_MAGIC) : end - 1].decode().split()
    )
    fields[field] = "0.0.0-other"
    line = " ".join(f"{name}={value}" for name, value in fields.items()).encode()
    path.write_bytes(compile_cache._ENTRY_MAGIC + line + b"\n" + data[end:])
    check_recovers(cache, discarded=1)


def test_processes_writing_the_same_entry_at_once(tmp_path):
    """Concurrent writers each write a whole entry and rename it into place: whichever wins,
    the entry is whole, and no temporary file is left behind."""
    env = dict(os.environ, TRACEJIT_CACHE_DIR=str(tmp_path))
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", PROGRAMS],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [writer.communicate() for writer in writers]
    assert all(writer.returncode == 0 for writer in writers), outputs
    assert len({stdout for stdout, _ in outputs}) == 1
    assert len(list((tmp_path / "executables").iterdir())) == 2
    later = run(tmp_path)
    assert later.stdout == outputs[0][0]
    assert DISCARDED not in later.stderr, later.stderr


def test_xla_flags_are_part_of_the_key(cache):
    """An executable compiled under other XLA flags is another entry, never reused."""
    folder, entries, expected = cache
    env = dict(
        os.environ,
        TRACEJIT_CACHE_DIR=str(folder),
        XLA_FLAGS=os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=3",
    )
    other = subprocess.run(
        [sys.executable, "-c", PROGRAMS], env=env, capture_output=True, text=True, check=False
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout == expected
    assert len(list((folder / "executables").iterdir())) == 2 * len(entries)


THIRD = "import tracejit as jax, tracejit.numpy as jnp\nprint(float(jax.jit(jnp.tanh)(0.5)))\n"


def test_the_cache_keeps_within_its_size_by_evicting_the_least_recently_used(tmp_path):
    """Beyond `jax_compilation_cache_max_size` bytes, the entries used longest ago go first; a
    load counts as a use, also across processes."""
    first, second = (f"import tracejit as jax, tracejit.numpy as jnp\n{line}\n"
                     for line in PROGRAMS.splitlines()[1:])  # fmt: skip
    sizes = {}
    for name, code in (("first", first), ("second", second), ("third", THIRD)):
        alone = tmp_path / name
        assert run(alone, code).returncode == 0
        (entry,) = (alone / "executables").iterdir()
        sizes[name] = entry.stat().st_size
    folder = tmp_path / "shared"
    run(folder, first)
    (first_entry,) = (folder / "executables").iterdir()
    os.utime(first_entry, ns=(1, 1))  # long ago ...
    run(folder, second)
    assert run(folder, first).returncode == 0  # ... but loaded now: used after `second`
    # over the limit with all three, and within three quarters of it without `second`
    limit = (sizes["first"] + sizes["third"]) * 4 // 3 + 1
    assert sum(sizes.values()) > limit
    third = run(folder, THIRD, JAX_COMPILATION_CACHE_MAX_SIZE=str(limit))
    assert third.returncode == 0, third.stderr
    kept = sorted(path.stat().st_size for path in (folder / "executables").iterdir())
    assert first_entry.exists()
    assert kept == sorted([sizes["first"], sizes["third"]])


def test_an_unbounded_cache_keeps_everything(cache):
    folder, entries, _ = cache
    assert run(folder, THIRD, JAX_COMPILATION_CACHE_MAX_SIZE="-1").returncode == 0
    assert len(list((folder / "executables").iterdir())) == len(entries) + 1


def test_eviction_counts_only_entries(tmp_path):
    """Beyond the limit, the entries used longest ago go until three quarters of it is left;
    temporary files of writes in progress are neither counted nor deleted."""
    for name, size, mtime in (("a", 100, 1), ("b", 100, 2), ("c", 100, 3), (".c.x.tmp", 500, 0)):
        path = tmp_path / name
        path.write_bytes(b"x" * size)
        os.utime(path, ns=(mtime, mtime))
    assert compile_cache.evict_least_recently_used(str(tmp_path), 300) == 300  # fits: kept
    assert len(list(tmp_path.iterdir())) == 4
    assert compile_cache.evict_least_recently_used(str(tmp_path), 250) == 100  # down to 187
    assert sorted(p.name for p in tmp_path.iterdir()) == [".c.x.tmp", "c"]
    assert compile_cache.evict_least_recently_used(str(tmp_path / "absent"), 0) == 0
