"""`jax.experimental.compilation_cache.compilation_cache`: `set_cache_dir(path)` sends the
programs compiled afterwards to `path`, where a later process finds them; `reset_cache()`
forgets the process's view of the folder and keeps the folder."""

import os
import subprocess
import sys

import pytest

import tracejit
from tracejit._src import dispatch, runtime
from tracejit.experimental.compilation_cache import compilation_cache as cc

needs_pjrt = pytest.mark.skipif(
    not runtime.platform_available() or dispatch.backend() != "pjrt", reason="no PJRT plugin"
)

PROGRAM = (
    "import sys\n"
    "import tracejit as jax, tracejit.numpy as jnp\n"
    "from tracejit.experimental.compilation_cache import compilation_cache as cc\n"
    "cc.set_cache_dir(sys.argv[1])\n"
    "print(float(jax.jit(lambda x: jnp.sum(jnp.sin(x) * 5.0))(jnp.ones(13))))\n"
)


def run(folder) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("TRACEJIT_CACHE_DIR", None)
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, str(folder)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@needs_pjrt
def test_set_cache_dir_writes_entries_there_and_a_later_process_reads_them(tmp_path):
    folder = tmp_path / "jax_cache"
    first = run(folder)
    assert first.returncode == 0, first.stderr
    (entry,) = folder.iterdir()  # directly in the folder, as JAX's entries are
    written = entry.stat()
    earlier = written.st_mtime_ns - 10**9
    os.utime(entry, ns=(earlier, earlier))
    second = run(folder)
    assert second.stdout == first.stdout
    assert list(folder.iterdir()) == [entry]
    loaded = entry.stat()
    assert loaded.st_ino == written.st_ino  # not rewritten (a write renames a new file in)
    assert loaded.st_mtime_ns > earlier  # but loaded: marked used


def test_set_cache_dir_sets_the_option_and_reset_cache_keeps_it(tmp_path):
    before = tracejit.config.jax_compilation_cache_dir
    try:
        assert cc.set_cache_dir(str(tmp_path)) is None
        assert tracejit.config.jax_compilation_cache_dir == str(tmp_path)
        assert cc.reset_cache() is None
        assert tracejit.config.jax_compilation_cache_dir == str(tmp_path)
    finally:
        tracejit.config.update("jax_compilation_cache_dir", before)


def test_the_module_is_reachable_as_jax_spells_it():
    import tracejit.experimental

    assert tracejit.experimental.compilation_cache.compilation_cache is cc
