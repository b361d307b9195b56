"""The persistent compile cache: executables kept on disk between processes.

One file per executable, named by the digest of its key (the plugin, its devices, XLA's flags,
the compile options and the StableHLO text). A file is `_ENTRY_MAGIC`, a one-line header
(`field=value ...`), then the serialized executable. The header says what wrote the entry and
for which key, with a checksum of the payload: an entry that is damaged, swapped with another
or written by another tracejit or plugin is never handed to XLA (which could crash on it, or
run another program), but deleted, compiled again and rewritten.

The folder is bounded (`jax_compilation_cache_max_size`, in bytes): after a write that takes
it over the limit, the least recently used entries are deleted until it holds three quarters
of it. A load marks its entry used by touching its modification time, so the order survives
between processes. Listing the folder costs about 5 µs per entry, so a process lists it at its
first write and then counts its own writes, listing again only when that count says the
limit is reached (other processes' writes are seen at the next listing).
Several processes may share the folder: each entry is written to a temporary file and renamed
(readers see the old file or the whole new one), and an entry another process evicted first is
simply gone.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import warnings

from tracejit._src import runtime
from tracejit._src.config import config

_ENTRY_MAGIC = b"tracejit executable\n"
_ENTRY_FORMAT = "1"


def cache_dir() -> str:
    """`jax_compilation_cache_dir` when set (`set_cache_dir`), else a folder of tracejit's."""
    if config.compilation_cache_dir is not None:
        return os.fspath(config.compilation_cache_dir)
    base = os.environ.get("TRACEJIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tracejit"
    )
    return os.path.join(base, "executables")


def set_cache_dir(path) -> None:
    """Sets the persistent compilation cache directory: programs compiled from now on are saved
    to `path` and looked up there before compiling, also by later processes.

    The cache is trusted: an entry is checked against its key and checksum, but whoever can
    write to the folder can make this process run their program. Share it only with people
    you trust."""
    config.update("jax_compilation_cache_dir", path)
    reset_cache()


def reset_cache() -> None:
    """Back to the state of a process that has not used the cache: what this process knows of
    the folder's size is forgotten (the folder is listed again at the next write). The folder
    and its entries stay."""
    global _folder_bytes
    _folder_bytes = None


@functools.cache  # one value
def tracejit_version() -> str:
    import importlib.metadata  # (not at import time: it costs `import tracejit` 25 ms)

    try:
        return importlib.metadata.version("tracejit")
    except importlib.metadata.PackageNotFoundError:  # a source tree on sys.path
        return "unknown"


def compile_with_disk_cache(text: str, compiler_options=()):
    """Compiles (with `compiler_options`: XLA options as (name, value) pairs, `jit`'s), or
    loads the executable a previous process compiled from the same key."""
    client = runtime.get_client()
    overrides = dict(compiler_options)
    options_proto = runtime.compile_options_proto(env_option_overrides=overrides)
    if not config.enable_compilation_cache:
        return client.compile(text, compile_options=options_proto)
    plugin = client.plugin.fingerprint()
    flags = os.environ.get("XLA_FLAGS", "")  # they change what XLA compiles
    devices = len(client.devices())
    options = f"replicas=1|partitions=1|{sorted({**runtime.DEBUG_OPTIONS, **overrides}.items())}"
    key = f"{client.platform}|{plugin}|{devices}|{flags}|{options}|{text}"
    header = {  # each value a string without spaces
        "format": _ENTRY_FORMAT,
        "tracejit": tracejit_version(),
        "plugin": plugin,
        "key": hashlib.sha256(key.encode()).hexdigest(),
    }
    path = os.path.join(cache_dir(), header["key"])
    executable = _load_entry(client, path, header)
    if executable is None:
        executable = client.compile(text, compile_options=options_proto)
        written = _write_entry(path, header, executable)
        _keep_within_limit(cache_dir(), written, config.compilation_cache_max_size)
    return executable


def _load_entry(client, path: str, header: dict):
    """The executable of the entry at `path`, or None if there is none or it is unusable."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    try:
        executable = client.deserialize(_entry_payload(data, header))
    except (ValueError, runtime.XlaRuntimeError) as err:
        warnings.warn(
            f"Discarding the compile cache entry {path}: {err}. Compiling again.",
            RuntimeWarning,
            stacklevel=2,
        )
        with contextlib.suppress(OSError):
            os.unlink(path)
        return None
    with contextlib.suppress(OSError):  # used now: the last to be evicted
        os.utime(path)
    return executable


def _entry_payload(data: bytes, header: dict) -> bytes:
    """The serialized executable in an entry's bytes; ValueError says why they are unusable."""
    if not data.startswith(_ENTRY_MAGIC):
        raise ValueError("it is not a tracejit cache entry")
    line, _, payload = data[len(_ENTRY_MAGIC) :].partition(b"\n")
    try:
        written = dict(item.split("=", 1) for item in line.decode("ascii").split(" "))
        written = {field: written[field] for field in (*header, "sha256")}
    except (ValueError, KeyError):  # not `field=value ...` in ASCII, or a field missing
        raise ValueError("its header is unreadable") from None
    for field, expected in header.items():
        if written[field] != expected:
            raise ValueError(f"its {field} is {written[field]!r}, not {expected!r}")
    if written["sha256"] != hashlib.sha256(payload).hexdigest():
        raise ValueError("its contents do not match their checksum")
    return payload


def _write_entry(path: str, header: dict, executable) -> int:
    """Writes a temporary file and renames it: a process reading the entry meanwhile sees the
    old file or the new one, never a part, and processes writing the same key each write a
    whole entry (the last rename wins). Returns the bytes written."""
    try:
        payload = executable.serialize()
        fields = {**header, "sha256": hashlib.sha256(payload).hexdigest()}
        line = " ".join(f"{field}={value}" for field, value in fields.items())
        data = _ENTRY_MAGIC + line.encode() + b"\n" + payload
        runtime.write_atomically(path, data)
        return len(data)
    except (OSError, runtime.XlaRuntimeError):
        return 0  # an unwritable cache only costs the next process a compile


# The folder's bytes as of this process's last listing, plus what it wrote since (None: not
# listed yet).
_folder_bytes = None


def _keep_within_limit(folder: str, written: int, max_bytes: int) -> None:
    global _folder_bytes
    if max_bytes < 0:
        return
    if _folder_bytes is not None and _folder_bytes + written <= max_bytes:
        _folder_bytes += written
        return
    _folder_bytes = evict_least_recently_used(folder, max_bytes)


def evict_least_recently_used(folder: str, max_bytes: int) -> int:
    """If the folder's entries exceed `max_bytes`, deletes those used longest ago until they
    fill three quarters of it (so that the next few writes need no listing); returns the bytes
    left. Temporary files of writes in progress are neither counted nor touched."""
    entries = []
    with contextlib.suppress(OSError), os.scandir(folder) as listing:
        for item in listing:
            if item.name.startswith("."):
                continue
            with contextlib.suppress(OSError):  # (gone meanwhile: another process evicted it)
                status = item.stat()
                entries.append((status.st_mtime_ns, status.st_size, item.path))
    total = sum(size for _, size, _ in entries)
    if total <= max_bytes:
        return total
    for _, size, path in sorted(entries):
        if total <= 3 * max_bytes // 4:
            break
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        total -= size
    return total
