"""Find a PJRT plugin and turn its C header into declarations cffi can load, without a compiler.

PJRT is XLA's plugin interface: a plugin is a shared library exporting `GetPjrtApi()`, which
returns a table of function pointers whose argument structs are declared in `pjrt_c_api.h`. We
drive it with cffi in ABI mode (`ffi.dlopen`), so the struct layouts must come from the very
header the plugin was built with, never from a hand-written copy. The `xla_cpu_pjrt` wheel
ships that header beside its library.

cffi's `cdef` accepts C declarations but no preprocessor, and users have no `gcc -E`. The header
uses little of the preprocessor: an include guard, `#include`s of standard headers cffi already
knows, `#ifdef __cplusplus` blocks, and a few function-like macros, chiefly

    #define PJRT_DEFINE_STRUCT_TRAITS(sname, last_field)                  \\
      typedef struct sname sname;                                         \\
      enum { sname##_STRUCT_SIZE = PJRT_STRUCT_SIZE(sname, last_field) }; \\
      PJRT_CHECK_STRUCT_SIZE(sname, last_field)

So this module carries a small C preprocessor (conditionals, object- and function-like macros
with `#` and `##`), expands the header with it, and then removes what cffi cannot evaluate:
the `enum { X_STRUCT_SIZE = offsetof(...) + sizeof(...) }` constants and static asserts. Those
enums are not lost: each names a struct's last field, which `CDefinitions.struct_last_fields`
records, so the runtime computes the exact `struct_size` PJRT expects with `ffi.offsetof`.

Parsing the declarations with pycparser costs about 0.1 s, so the result is cached twice under
the user cache dir, keyed by a hash of the header: the declarations as JSON, and cffi's
"out-of-line ABI" module (plain Python holding the parsed types, no compiler involved), which
loads in about a millisecond. Both are written to a temporary file and renamed into place, so
processes sharing the cache never see half a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path

# Bump when the output of this module changes for the same header: cache entries are keyed on it.
_FORMAT_VERSION = 1

HEADER_NAME = "pjrt_c_api.h"
_DEFAULT_PLUGIN_MODULE = "xla_plugins.xla_cpu_pjrt"
_DEFAULT_LIBRARY_NAME = "xla_cpu_pjrt.so"


class PluginNotFoundError(RuntimeError):
    """No PJRT plugin library (or no header for it) could be found."""


# ------------------------------------------------------------------------------------------------
# Finding the plugin


@dataclasses.dataclass(frozen=True)
class PluginLocation:
    """A plugin's shared library and the `pjrt_c_api.h` that describes its ABI."""

    library: Path
    header: Path


def _default_plugin_dir() -> Path:
    spec = importlib.util.find_spec(_DEFAULT_PLUGIN_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(_DEFAULT_PLUGIN_MODULE)
    return Path(next(iter(spec.submodule_search_locations)))


def _default_header() -> Path | None:
    """The header of the installed `xla_cpu_pjrt` wheel, if any: same ABI as any plugin of the
    same major version, since PJRT only appends fields and checks `struct_size`."""
    try:
        path = _default_plugin_dir() / "include" / HEADER_NAME
    except (ImportError, ValueError):
        return None
    return path if path.is_file() else None


def locate_plugin() -> PluginLocation:
    """Where the plugin library and its header are.

    `TRACEJIT_PJRT_PLUGIN=/path/plugin.so` selects a plugin (a CUDA plugin, libtpu); its header is
    `TRACEJIT_PJRT_HEADER`, else a `pjrt_c_api.h` beside the library (or in an `include/` folder
    there), else the one of the installed `xla_cpu_pjrt` wheel. Without the variable, the
    installed `xla_cpu_pjrt` wheel provides both.
    """
    explicit_header = os.environ.get("TRACEJIT_PJRT_HEADER")
    explicit_library = os.environ.get("TRACEJIT_PJRT_PLUGIN")
    if explicit_library:
        library = Path(explicit_library).expanduser()
        if not library.is_file():
            raise PluginNotFoundError(f"TRACEJIT_PJRT_PLUGIN={explicit_library}: no such file")
        candidates = [library.parent / HEADER_NAME, library.parent / "include" / HEADER_NAME]
        header = next((c for c in candidates if c.is_file()), None) or _default_header()
    else:
        if sys.platform != "linux":
            raise PluginNotFoundError(
                f"no PJRT plugin for {sys.platform}: the xla_cpu_pjrt wheel is built for Linux only"
            )
        try:
            plugin_dir = _default_plugin_dir()
        except (ImportError, ValueError) as error:
            raise PluginNotFoundError(
                "the XLA CPU plugin is not installed (pip install xla_cpu_pjrt), "
                "and TRACEJIT_PJRT_PLUGIN names no other plugin"
            ) from error
        library = plugin_dir / _DEFAULT_LIBRARY_NAME
        if not library.is_file():
            found = sorted(plugin_dir.glob("*.so"))
            if not found:
                raise PluginNotFoundError(f"no shared library in {plugin_dir}")
            library = found[0]
        header = plugin_dir / "include" / HEADER_NAME
    if explicit_header:
        header = Path(explicit_header).expanduser()
    if header is None or not header.is_file():
        raise PluginNotFoundError(
            f"no {HEADER_NAME} found for {library}; set TRACEJIT_PJRT_HEADER to its path"
        )
    return PluginLocation(library=library, header=header)


# ------------------------------------------------------------------------------------------------
# A small C preprocessor

_COMMENT_OR_LITERAL = re.compile(
    r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.DOTALL
)
_TOKEN = re.compile(
    r'[A-Za-z_]\w*|\.?\d[\w.]*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|##|\s+|.', re.DOTALL
)
_DIRECTIVE = re.compile(r"\s*#\s*(\w*)\s*(.*)", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*\Z")


@dataclasses.dataclass
class _Macro:
    parameters: list[str] | None  # None for an object-like macro
    body: list[str]  # tokens


def _strip_comments(text: str) -> str:
    def replace(match: re.Match) -> str:
        s = match.group(0)
        if s.startswith("//"):
            return ""
        if s.startswith("/*"):
            return " " + "\n" * s.count("\n")  # keep line structure for directives
        return s

    return _COMMENT_OR_LITERAL.sub(replace, text)


def _tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _is_space(token: str) -> bool:
    return token.isspace()


def _split_arguments(tokens: list[str], open_index: int) -> tuple[list[list[str]], int]:
    """The comma-separated arguments of a macro call whose `(` is at `open_index`, and the index
    of its closing `)`."""
    arguments: list[list[str]] = [[]]
    depth = 0
    for index in range(open_index + 1, len(tokens)):
        token = tokens[index]
        if token == "(":
            depth += 1
        elif token == ")":
            if depth == 0:
                return [_trim(a) for a in arguments], index
            depth -= 1
        elif token == "," and depth == 0:
            arguments.append([])
            continue
        arguments[-1].append(token)
    raise ValueError("unterminated macro call")


def _trim(tokens: list[str]) -> list[str]:
    start, end = 0, len(tokens)
    while start < end and _is_space(tokens[start]):
        start += 1
    while end > start and _is_space(tokens[end - 1]):
        end -= 1
    return tokens[start:end]


class Preprocessor:
    """The subset of the C preprocessor that PJRT headers use.

    Conditionals (`#if/#ifdef/#ifndef/#elif/#else/#endif` with `defined` and integer
    arithmetic), `#define`/`#undef` of object- and function-like macros with `#` and `##`, and
    `#include`, which is dropped (the standard headers it names are built into cffi).
    `__cplusplus` is never defined: we read the header as C.
    """

    def __init__(self, predefined: dict[str, str] | None = None):
        self.macros: dict[str, _Macro] = {}
        for name, value in (predefined or {}).items():
            self.macros[name] = _Macro(None, _tokenize(value))

    # -- macro expansion --------------------------------------------------------------------

    def expand(self, tokens: list[str], disabled: frozenset[str] = frozenset()) -> list[str]:
        """Expand every macro in `tokens`; a macro is not expanded inside its own expansion."""
        out: list[str] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            macro = self.macros.get(token) if token not in disabled else None
            if macro is None:
                out.append(token)
                index += 1
                continue
            if macro.parameters is None:
                out.extend(self.expand(macro.body, disabled | {token}))
                index += 1
                continue
            open_index = index + 1
            while open_index < len(tokens) and _is_space(tokens[open_index]):
                open_index += 1
            if open_index >= len(tokens) or tokens[open_index] != "(":
                out.append(token)  # a function-like macro's name without a call
                index += 1
                continue
            arguments, close_index = _split_arguments(tokens, open_index)
            if len(macro.parameters) == 0 and arguments == [[]]:
                arguments = []
            if len(arguments) != len(macro.parameters):
                raise ValueError(
                    f"macro {token} takes {len(macro.parameters)} arguments, got {len(arguments)}"
                )
            body = self._substitute(macro, dict(zip(macro.parameters, arguments)), disabled)
            out.extend(self.expand(body, disabled | {token}))
            index = close_index + 1
        return out

    def _substitute(
        self, macro: _Macro, arguments: dict[str, list[str]], disabled: frozenset[str]
    ) -> list[str]:
        """The macro body with parameters replaced: raw next to `##`, quoted after `#`, and
        fully expanded elsewhere; then `##` pastes its neighbours into one token."""
        body = macro.body
        significant = [i for i, t in enumerate(body) if not _is_space(t)]
        neighbours_of_paste = set()
        for position, i in enumerate(significant):
            if body[i] == "##":
                if position > 0:
                    neighbours_of_paste.add(significant[position - 1])
                if position + 1 < len(significant):
                    neighbours_of_paste.add(significant[position + 1])
        out: list[str] = []
        skip_until = -1
        for i, token in enumerate(body):
            if i <= skip_until:
                continue
            if token == "#":
                following = next((j for j in significant if j > i), None)
                if following is not None and body[following] in arguments:
                    text = "".join(arguments[body[following]])
                    out.append('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
                    skip_until = following
                    continue
            if token in arguments:
                if i in neighbours_of_paste:
                    out.extend(arguments[token] or [""])
                else:
                    out.extend(self.expand(arguments[token], disabled))
                continue
            out.append(token)
        return _paste(out)

    # -- directives -------------------------------------------------------------------------

    def _evaluate(self, expression: str) -> bool:
        """An `#if` condition: `defined`, integers, identifiers (0 when not macros), C operators."""

        def defined(match: re.Match) -> str:
            return "1" if match.group(1) in self.macros else "0"

        expression = re.sub(r"\bdefined\s*\(?\s*([A-Za-z_]\w*)\s*\)?", defined, expression)
        tokens = self.expand(_tokenize(expression))
        text = "".join(tokens)
        text = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", text)
        text = re.sub(r"\b[A-Za-z_]\w*\b", "0", text)  # undefined identifiers are 0
        text = text.replace("&&", " and ").replace("||", " or ")
        text = re.sub(r"!(?!=)", " not ", text)
        if not re.fullmatch(r"[\d\s()+\-*/%<>=!&|^~a-z]*", text):
            raise ValueError(f"cannot evaluate #if {expression!r}")
        return bool(eval(text.replace("/", "//"), {"__builtins__": {}}))

    def run(self, text: str) -> str:
        """Preprocess `text` and return the expanded C, directives removed."""
        text = _strip_comments(text.replace("\\\r\n", "").replace("\\\n", ""))
        out: list[str] = []
        pending: list[str] = []  # active lines since the last directive, expanded together
        # Each entry: (this branch is active, some branch of this #if was taken, parent active)
        stack: list[tuple[bool, bool, bool]] = []
        active = True

        def flush() -> None:
            if pending:
                out.append("".join(self.expand(_tokenize("".join(pending)))))
                pending.clear()

        for line in text.splitlines(keepends=True):
            match = _DIRECTIVE.match(line) if line.lstrip().startswith("#") else None
            if match is None:
                if active:
                    pending.append(line)
                continue
            flush()
            name, rest = match.group(1), match.group(2).strip()
            if name in ("if", "ifdef", "ifndef"):
                if name == "if":
                    taken = active and self._evaluate(rest)
                else:
                    is_defined = rest.split()[0] in self.macros if rest else False
                    taken = active and (is_defined == (name == "ifdef"))
                stack.append((taken, taken, active))
                active = taken
            elif name == "elif":
                _, was_taken, parent = stack.pop()
                taken = parent and not was_taken and self._evaluate(rest)
                stack.append((taken, was_taken or taken, parent))
                active = taken
            elif name == "else":
                _, was_taken, parent = stack.pop()
                taken = parent and not was_taken
                stack.append((taken, True, parent))
                active = taken
            elif name == "endif":
                _, _, active = stack.pop()
            elif not active:
                continue
            elif name == "define":
                self._define(rest)
            elif name == "undef":
                self.macros.pop(rest.split()[0], None)
            elif name in ("include", "pragma", "line", ""):
                pass
            elif name == "error":
                raise ValueError(f"#error {rest}")
        flush()
        if stack:
            raise ValueError("unterminated #if")
        return "".join(out)

    def _define(self, rest: str) -> None:
        match = re.match(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)", rest, re.DOTALL)
        if match is None:
            raise ValueError(f"bad #define {rest!r}")
        name, has_parameters, parameters, body = match.groups()
        if has_parameters:
            names = [p.strip() for p in parameters.split(",") if p.strip()]
            self.macros[name] = _Macro(names, _tokenize(body.strip()))
        else:
            self.macros[name] = _Macro(None, _tokenize(body.strip()))


def _paste(tokens: list[str]) -> list[str]:
    """Apply `##`: join the significant tokens on either side into one."""
    if "##" not in tokens:
        return tokens
    out: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token != "##":
            out.append(token)
            index += 1
            continue
        while out and _is_space(out[-1]):
            out.pop()
        index += 1
        while index < len(tokens) and _is_space(tokens[index]):
            index += 1
        right = tokens[index] if index < len(tokens) else ""
        left = out.pop() if out else ""
        out.append(left + right)
        index += 1
    return out


# ------------------------------------------------------------------------------------------------
# From the expanded header to cffi declarations


@dataclasses.dataclass(frozen=True)
class CDefinitions:
    """What the runtime needs from a header.

    `cdef`: declarations cffi parses. `struct_last_fields`: struct name -> its last field, from
    the header's `X_STRUCT_SIZE` enums, so that `struct_size` can be set to exactly
    `offsetof(last) + sizeof(last)` as the header's own macro computes it. `api_version`: the
    header's (PJRT_API_MAJOR, PJRT_API_MINOR). `header_hash`: the cache key.
    """

    cdef: str
    struct_last_fields: dict[str, str]
    api_version: tuple[int, int]
    header_hash: str


_STRUCT_SIZE_ENUM = re.compile(r"\benum\s*\{([^{}]*)\}\s*;", re.DOTALL)
_STRUCT_SIZE_ENTRY = re.compile(
    r"(\w+)_STRUCT_SIZE\s*=\s*offsetof\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.DOTALL
)
_STATIC_ASSERT = re.compile(r"\b(?:_Static_assert|static_assert)\s*\(")


def _remove_static_asserts(text: str) -> str:
    while (match := _STATIC_ASSERT.search(text)) is not None:
        depth, index = 0, match.end() - 1
        while True:
            if text[index] == "(":
                depth += 1
            elif text[index] == ")":
                depth -= 1
                if depth == 0:
                    break
            index += 1
        end = index + 1
        while end < len(text) and text[end] in " \t\n;":
            if text[end] == ";":
                end += 1
                break
            end += 1
        text = text[: match.start()] + text[end:]
    return text


def header_hash(header_text: str) -> str:
    digest = hashlib.sha256(f"{_FORMAT_VERSION}\0{header_text}".encode()).hexdigest()
    return digest[:24]


def build_cdefinitions(header_text: str) -> CDefinitions:
    """Preprocess a `pjrt_c_api.h` in Python and make its declarations acceptable to cffi."""
    preprocessor = Preprocessor()
    expanded = preprocessor.run(header_text)
    struct_last_fields: dict[str, str] = {}

    def constant_enum(match: re.Match) -> str:
        body = match.group(1)
        if not re.search(r"\b(?:offsetof|sizeof)\b", body):
            return match.group(0)  # an ordinary anonymous enum: keep it
        for entry in _STRUCT_SIZE_ENTRY.finditer(body):
            struct_last_fields[entry.group(2)] = entry.group(3)
        return ""

    cdef = _STRUCT_SIZE_ENUM.sub(constant_enum, expanded)
    cdef = _remove_static_asserts(cdef)
    cdef = re.sub(r'extern\s+"C"\s*\{', "", cdef)
    cdef = re.sub(r"(?m)^\s*;\s*$", "", cdef)  # stray semicolons left by emptied macros
    cdef = re.sub(r";(\s*;)+", ";", cdef)
    cdef = re.sub(r"\n\s*\n+", "\n", cdef)
    if re.search(r"\bPJRT_Api\b", cdef) and not re.search(r"\bGetPjrtApi\s*\(", cdef):
        cdef += "\nconst PJRT_Api* GetPjrtApi(void);\n"

    def macro_int(name: str) -> int:
        macro = preprocessor.macros.get(name)
        text = "".join(macro.body).strip() if macro else ""
        return int(text) if text.isdigit() else -1

    return CDefinitions(
        cdef=cdef,
        struct_last_fields=struct_last_fields,
        api_version=(macro_int("PJRT_API_MAJOR"), macro_int("PJRT_API_MINOR")),
        header_hash=header_hash(header_text),
    )


# ------------------------------------------------------------------------------------------------
# The cache


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/tracejit`, else `~/.cache/tracejit`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tracejit"


def write_atomically(path: Path | str, data: bytes) -> None:
    """Write to a temporary file in the same folder, then rename: readers in other processes see
    either no file (or the previous one) or the whole file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def load_cdefinitions(header: Path) -> CDefinitions:
    """The header's declarations, from the cache when this header was seen before."""
    text = header.read_text()
    key = header_hash(text)
    cached = cache_dir() / f"pjrt-cdef-{key}.json"
    try:
        data = json.loads(cached.read_text())
        return CDefinitions(
            cdef=data["cdef"],
            struct_last_fields=data["struct_last_fields"],
            api_version=tuple(data["api_version"]),
            header_hash=key,
        )
    except (OSError, ValueError, KeyError):
        pass
    definitions = build_cdefinitions(text)
    data = dataclasses.asdict(definitions)
    try:
        write_atomically(cached, json.dumps(data).encode())
    except OSError:
        pass  # a read-only home: work without the cache
    return definitions


def _import_ffi_module(module_name: str, path: Path):
    """The `ffi` of a cached out-of-line module, or None if the file is unusable (then it is
    rebuilt)."""
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.ffi
    except Exception:  # noqa: BLE001  (a corrupt or foreign cache file)
        return None


def load_ffi(definitions: CDefinitions):
    """A `cffi.FFI` holding the header's types.

    The first time, the declarations are parsed (pycparser, ~0.1 s) and cffi writes them out as
    an out-of-line ABI module, plain Python; later processes import that module instead.
    """
    module_name = f"_tracejit_pjrt_ffi_{definitions.header_hash}"
    path = cache_dir() / f"{module_name}.py"
    if path.is_file():
        ffi = _import_ffi_module(module_name, path)
        if ffi is not None:
            return ffi
    import cffi

    builder = cffi.FFI()
    builder.cdef(definitions.cdef)
    try:
        builder.set_source(module_name, None)
        with tempfile.TemporaryDirectory() as scratch:
            generated = Path(scratch) / f"{module_name}.py"
            with contextlib.redirect_stdout(io.StringIO()):  # cffi prints "generating ..."
                builder.emit_python_code(str(generated))
            write_atomically(path, generated.read_bytes())
    except (OSError, cffi.CDefError):
        pass
    return builder
