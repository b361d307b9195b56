"""The runtime's plugin-independent parts: the small C preprocessor that turns pjrt_c_api.h into
cffi declarations, the on-disk cache of its output, and the hand-encoded compile options.

These run everywhere, plugin or not (the test on the real header is skipped without one).
"""

import json

import numpy as np
import pytest

from tracejit._src.runtime import formats, header

HEADER_LIKE = r"""
#ifndef GUARD_H_
#define GUARD_H_
#include <stddef.h>
#include <stdint.h>

#define STRUCT_SIZE(t, last) \
  offsetof(t, last) + sizeof(((t*)0)->last)
#ifdef __cplusplus
#define CHECK(sname, last) static_assert(sizeof(sname) > 0, "x");
#else
#define CHECK(sname, last)
#endif
#define TRAITS(sname, last)                               \
  typedef struct sname sname;                             \
  enum { sname##_STRUCT_SIZE = STRUCT_SIZE(sname, last) }; \
  CHECK(sname, last)
#define PJRT_API_MAJOR 0
#define PJRT_API_MINOR 7

#ifdef __cplusplus
extern "C" {
#endif

/* a block comment
   over lines */
struct Point_Args {
  size_t struct_size;  // trailing comment
  int64_t x;
  bool flag;
};
TRAITS(Point_Args,
       flag);

#if defined(__cplusplus) || PJRT_API_MINOR < 5
extern int never_declared;
#elif PJRT_API_MINOR >= 7 && !defined(NOT_DEFINED)
extern int declared_by_elif;
#else
extern int never_either;
#endif

#define FIELD(fn) fn* fn
typedef int Callback(Point_Args* args);
typedef struct Table {
  FIELD(Callback);
} Table;
enum { Table_STRUCT_SIZE = STRUCT_SIZE(Table, Callback) };
#undef FIELD
_Static_assert(sizeof(int) == 4, "int");

#ifdef __cplusplus
}
#endif
#endif
"""


def test_preprocessor_expands_the_pjrt_idioms():
    definitions = header.build_cdefinitions(HEADER_LIKE)
    cdef = definitions.cdef
    assert "typedef struct Point_Args Point_Args;" in cdef
    assert "Callback* Callback;" in cdef
    assert "declared_by_elif" in cdef
    for absent in ("never", "offsetof", "static_assert", 'extern "C"', "#", "//"):
        assert absent not in cdef, absent
    assert definitions.struct_last_fields == {"Point_Args": "flag", "Table": "Callback"}
    assert definitions.api_version == (0, 7)


def test_preprocessed_declarations_parse_in_cffi():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    ffi.cdef(header.build_cdefinitions(HEADER_LIKE).cdef)
    assert ffi.offsetof("Point_Args", "flag") == 16


def test_macro_features():
    pre = header.Preprocessor()
    text = pre.run(
        "#define CAT(a, b) a##b\n"
        "#define STR(x) #x\n"
        "#define TWICE(x) (x + x)\n"
        "#define ONE 1\n"
        "#define SELF SELF + 1\n"
        "CAT(foo, bar) STR(a b) TWICE(ONE) SELF CAT(ONE, ONE)\n"
    )
    assert text.split() == ["foobar", '"a', 'b"', "(1", "+", "1)", "SELF", "+", "1", "ONEONE"]


def test_real_header_parses():
    try:
        location = header.locate_plugin()
    except header.PluginNotFoundError:
        pytest.skip("no PJRT plugin installed")
    cffi = pytest.importorskip("cffi")
    definitions = header.build_cdefinitions(location.header.read_text())
    assert definitions.api_version[0] == 0
    assert definitions.struct_last_fields["PJRT_Api"]
    assert definitions.struct_last_fields["PJRT_Client_Compile_Args"] == "executable"
    ffi = cffi.FFI()
    ffi.cdef(definitions.cdef)
    assert ffi.sizeof("PJRT_Api") > 100


def test_cache_is_written_once_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = tmp_path / "pjrt_c_api.h"
    source.write_text(HEADER_LIKE)
    first = header.load_cdefinitions(source)
    cached = list((tmp_path / "tracejit").glob("pjrt-cdef-*.json"))
    assert len(cached) == 1 and json.loads(cached[0].read_text())["cdef"] == first.cdef
    assert not list((tmp_path / "tracejit").glob(".*tmp"))  # no temporary left behind
    assert header.load_cdefinitions(source) == first
    # A changed header gets its own entry.
    source.write_text(HEADER_LIKE.replace("int64_t x;", "int32_t x;"))
    assert header.load_cdefinitions(source).header_hash != first.header_hash
    # A corrupt entry is rebuilt, not trusted.
    cached[0].write_text("{not json")
    source.write_text(HEADER_LIKE)
    assert header.load_cdefinitions(source) == first


def test_ffi_module_cache(tmp_path, monkeypatch):
    pytest.importorskip("cffi")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    definitions = header.build_cdefinitions(HEADER_LIKE)
    built = header.load_ffi(definitions)
    assert list((tmp_path / "tracejit").glob("_tracejit_pjrt_ffi_*.py"))
    loaded = header.load_ffi(definitions)  # now from the generated module
    assert loaded.sizeof("Point_Args") == built.sizeof("Point_Args")


def test_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert header.cache_dir() == tmp_path / "tracejit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert header.cache_dir().parts[-2:] == (".cache", "tracejit")


def test_explicit_plugin_must_exist(monkeypatch):
    monkeypatch.setenv("TRACEJIT_PJRT_PLUGIN", "/nonexistent/plugin.so")
    with pytest.raises(header.PluginNotFoundError, match="no such file"):
        header.locate_plugin()


def test_explicit_plugin_finds_header_beside_it(monkeypatch, tmp_path):
    library = tmp_path / "my_plugin.so"
    library.write_bytes(b"")
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "pjrt_c_api.h").write_text(HEADER_LIKE)
    monkeypatch.setenv("TRACEJIT_PJRT_PLUGIN", str(library))
    monkeypatch.delenv("TRACEJIT_PJRT_HEADER", raising=False)
    location = header.locate_plugin()
    assert location.library == library
    assert location.header == tmp_path / "include" / "pjrt_c_api.h"
    monkeypatch.setenv("TRACEJIT_PJRT_HEADER", str(tmp_path / "elsewhere.h"))
    with pytest.raises(header.PluginNotFoundError):
        header.locate_plugin()


# -- compile options and dtypes -----------------------------------------------------------------


def test_compile_options_wire_format():
    # executable_build_options(3) { num_replicas(4): 1, num_partitions(5): 1 }, then the
    # debug options every program gets: env_option_overrides(7) { key(1): name, value(2) {
    # bool_field(2): false } }
    fast_min_max_off = b"\x3a\x21\x0a\x1bxla_cpu_enable_fast_min_max\x12\x02\x10\x00"
    assert formats.DEBUG_OPTIONS == {"xla_cpu_enable_fast_min_max": False}
    assert formats.compile_options_proto() == b"\x1a\x04\x20\x01\x28\x01" + fast_min_max_off
    assert formats.compile_options_proto(300, 2) == (
        b"\x1a\x07\x20\xac\x02\x28\x02\x30\x01"  # 300 as a varint; spmd on for 2 partitions
        + fast_min_max_off
    )
    # device_assignment(9) { replica_count(1): 2, computation_count(2): 1,
    #   computation_devices(3) { replica_device_ids(1): packed [3, 1] } }
    with_assignment = formats.compile_options_proto(2, 1, device_assignment=[[3], [1]])
    assert b"\x4a\x0a\x08\x02\x10\x01\x1a\x04\x0a\x02\x03\x01" in with_assignment
    overrides = formats.compile_options_proto(env_option_overrides={"xla_flag": True})
    assert overrides.endswith(b"\x3a\x0e\x0a\x08xla_flag\x12\x02\x10\x01")
    with pytest.raises(ValueError):
        formats.compile_options_proto(2, 1, device_assignment=[[0]])


def test_dtype_names_cover_numpy_and_ml_dtypes():
    names = formats.PJRT_TYPE_NAMES
    assert names[np.dtype(np.bool_)] == "PRED"
    assert names[np.dtype(np.float32)] == "F32"
    assert names[np.dtype("bfloat16")] == "BF16"
    for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        assert np.dtype(dtype) in names
    assert names[np.dtype(np.complex128)] == "C128"
