"""`install_as_jax` and `python -m tracejit.as_jax`: code written for JAX imports `jax` and
gets tracejit, with JAX's version; what tracejit lacks says so. The hook is process-wide, so
each check runs in a fresh interpreter."""

import os
import pathlib
import subprocess
import sys
import textwrap
import types

import pytest

import tracejit
from tracejit._src import as_jax

SRC = pathlib.Path(tracejit.__file__).resolve().parent.parent


def run_python(*args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, *args],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def run_as_jax(tmp_path, source: str, *args) -> str:
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(source))
    done = run_python("-m", "tracejit.as_jax", str(script), *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_jax_and_its_submodules_are_tracejits(tmp_path):
    out = run_as_jax(
        tmp_path,
        """
        import sys
        import jax
        import jax.numpy as jnp
        import jax.extend.core
        import jax.interpreters.ad
        from jax import lax, random
        import jaxlib
        import tracejit
        assert jax.__version__ == "0.10.2" and jax.__version_info__ == (0, 10, 2)
        assert tracejit.__version__ == tracejit.version.__version__ != jax.__version__
        assert jaxlib.__version__ == "0.10.2" and jax.version.__version__ == "0.10.2"
        assert jnp.sum is tracejit.numpy.sum and lax.scan is tracejit.lax.scan
        assert jax.numpy is sys.modules["jax.numpy"] and jax.lax is lax
        assert jax.__file__ == tracejit.__file__ and jnp.__file__ == tracejit.numpy.__file__
        assert jax.extend.core.Primitive is tracejit.extend.core.Primitive
        assert jax.interpreters.ad.primitive_jvps is tracejit.interpreters.ad.primitive_jvps
        assert isinstance(jax.jit(lambda x: x)(1.0), jax.Array)
        print(jax.grad(lambda x: jnp.sin(x) * 2.0)(0.0), sys.argv[1:])
        """,
        "--flag",
        "x",
    )
    assert out.split() == ["2.0", "['--flag',", "'x']"]


def test_a_name_tracejit_lacks_says_which_jax_it_follows(tmp_path):
    out = run_as_jax(
        tmp_path,
        """
        import jax, jax.numpy as jnp
        for get in (lambda: jax.no_such_name, lambda: jnp.no_such_name):
            try:
                get()
            except AttributeError as err:
                print(err)
        try:
            import jax.no_such_module
        except ModuleNotFoundError as err:
            print(err)
        """,
    )
    lines = out.splitlines()
    assert len(lines) == 3 and all("follows JAX 0.10.2" in line for line in lines)
    assert "'jax' has no attribute 'no_such_name'" in lines[0]
    assert "tracejit.numpy.no_such_name" in lines[1]
    assert "jax.no_such_module" in lines[2]


def test_patching_jax_patches_what_its_callers_see(tmp_path):
    """chex's fake_jit patches `jax.jit`: code calling `jax.jit` then gets the patch."""
    out = run_as_jax(
        tmp_path,
        """
        from unittest import mock
        import jax
        with mock.patch("jax.jit", lambda f: "patched"):
            print(jax.jit(abs))
        print(jax.jit(abs) != "patched")
        """,
    )
    assert out.split() == ["patched", "True"]


def test_running_a_module(tmp_path):
    (tmp_path / "prog_module.py").write_text("import jax\nprint(jax.__version__, __name__)\n")
    done = run_python("-m", "tracejit.as_jax", "-m", "prog_module", cwd=tmp_path)
    assert done.stdout.split() == ["0.10.2", "__main__"], done.stderr


def test_usage_without_a_program():
    done = run_python("-m", "tracejit.as_jax")
    assert done.returncode != 0 and "usage: python -m tracejit.as_jax" in done.stderr


def test_refuses_when_the_real_jax_is_imported(monkeypatch):
    real = types.ModuleType("jax")
    real.__file__ = "/somewhere/site-packages/jax/__init__.py"
    monkeypatch.setitem(sys.modules, "jax", real)
    with pytest.raises(RuntimeError, match=r"real jax is already imported .*site-packages/jax"):
        tracejit.install_as_jax()
    assert not any(isinstance(finder, as_jax.JaxFinder) for finder in sys.meta_path)


def test_library_frames_are_not_the_users_line(tmp_path):
    """`jax._src.traceback_util.register_exclusion(path)` (equinox registers its files) keeps
    frames of those files out of the user's line that messages name."""
    library = tmp_path / "library"
    library.mkdir()
    (library / "wrapper.py").write_text(
        "import jax._src.traceback_util as tu\n"
        "tu.register_exclusion(__file__)\n"
        "from tracejit._src.errors import user_location\n"
        "def where():\n"
        "    return user_location()\n"
    )
    out = run_as_jax(
        tmp_path,
        """
        import sys
        sys.path.insert(0, "library")
        import wrapper
        import jax._src.traceback_util as tu
        print(wrapper.where().filename.endswith("program.py"), tu.include_frame(sys._getframe()))
        """,
    )
    assert out.split() == ["True", "True"]


def test_exit_handlers_of_libraries_imported_later_still_find_the_backend(tmp_path):
    """chex reports its pending jitted checks from an exit handler registered after `import
    jax`: JAX's own handler runs after it, and so must tracejit's, however late the first
    client is created. chex's tests also run the exit handlers by hand and go on."""
    out = run_as_jax(
        tmp_path,
        """
        import atexit
        import jax
        f = jax.jit(lambda x: x + 1.0)
        atexit.register(lambda: print("at exit", f(10.0)))
        print(f(0.0))
        atexit._run_exitfuncs()
        print(f(1.0))
        atexit.register(lambda: print("at exit", f(20.0)))
        """,
    )
    assert out.split("\n") == ["1.0", "at exit 11.0", "2.0", "at exit 21.0", ""]


def test_jitted_functions_are_named_and_printed_as_jaxs():
    """chex tells a jitted function by its type's name (`assert_max_traces` refuses one)."""

    def f(x):
        return x

    jitted = tracejit.jit(f)
    assert type(jitted).__name__ == "PjitFunction"
    assert repr(jitted) == f"<PjitFunction of {f!r}>"


def test_what_flax_imports_from_jax_at_its_top_level(tmp_path):
    """flax 0.12 imports these at its top level (for linen's scan, its traceback filtering and
    its fp8 dtypes); each is what JAX's is, as far as tracejit has it."""
    out = run_as_jax(
        tmp_path,
        """
        import numpy as np
        import jax
        from jax._src import core, dtypes, traceback_util
        from jax.extend import linear_util, source_info_util
        from jax.interpreters import partial_eval as pe
        assert core.ShapedArray is jax.core.ShapedArray
        assert dtypes.DType is np.dtype and dtypes.extended is jax.dtypes.extended

        class Meta(dtypes.ExtendedDType):
            type = dtypes.extended
            _rules = None

        assert isinstance(Meta(), dtypes.ExtendedDType)
        def f(x):
            return x
        assert traceback_util.api_boundary(f) is f
        traceback_util._exclude_paths.append("/nowhere")
        source_info_util.register_exclusion("/elsewhere")
        assert not traceback_util.include_filename("/elsewhere/x.py")
        assert pe.PartialVal.unknown(core.ShapedArray((2,), np.float32)).const is None
        assert pe.PartialVal.known(3.0) == (None, 3.0)
        for module, name in ((linear_util, "wrap_init"), (pe, "trace_to_jaxpr_nounits")):
            try:
                getattr(module, name)
            except AttributeError as err:
                print(err)
        """,
    )
    assert out.count("follows JAX 0.10.2's API") == 2


def test_formats_and_layouts_are_jaxs_plain_data():
    from tracejit.experimental.layout import Format, Layout
    from tracejit.sharding import SingleDeviceSharding

    layout = Layout((1, 0))
    assert layout == Layout((1, 0), None, 0) and layout.major_to_minor == (1, 0)
    assert (
        repr(layout)
        == "Layout(major_to_minor=(1, 0), tiling=None, sub_byte_element_size_in_bits=0)"
    )
    sharding = SingleDeviceSharding(tracejit.devices()[0])
    assert Format(layout, sharding) == Format(layout, sharding)
    assert repr(Format()) == "Format(layout=None, sharding=None)"
    assert Format(Layout.AUTO).layout is Layout.AUTO
    with pytest.raises(ValueError, match="Sharding has to be concrete"):
        Format(layout)
    with pytest.raises(TypeError, match="Invalid value received for the layout argument"):
        Format(sharding)
