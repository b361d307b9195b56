"""Records what JAX 0.10.2 gives for the Fourier-transform cases below (mostly derivatives of
the real transforms, where a wrong transpose would hide), as reference data for
`tests/numpy/test_fft_jax_reference.py`.

The tests never import JAX; they compare tracejit's results (values, shapes and dtypes, or
the exception's class) with the ones this script saved from real JAX into
`tests/numpy/data/jax_reference_fft.json`. To regenerate it, in a virtualenv with
`jax==0.10.2` (CPU) and NumPy, from the repository's root:

    python tools/jax_reference.py tests/numpy/make_jax_reference_fft.py

Each case is a function of the top-level module (jax or tracejit), run with 64-bit types
enabled, so that this file is also the tests' table of cases: they load it without running
`main`.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

DATA = pathlib.Path(__file__).parent / "data" / "jax_reference_fft.json"

_RNG = np.random.default_rng(16)
X8 = _RNG.normal(size=(3, 8))
X7 = _RNG.normal(size=(2, 7))
X45 = _RNG.normal(size=(4, 5))
Z5 = _RNG.normal(size=(3, 5)) + 1j * _RNG.normal(size=(3, 5))
Z45 = _RNG.normal(size=(4, 5)) + 1j * _RNG.normal(size=(4, 5))
WEIGHTS5 = _RNG.normal(size=5)


def _vjp(fun, primal, cotangent):
    """The cotangent of `primal` that `fun`'s VJP gives for `cotangent`."""

    def run(jax):
        _, pullback = jax.vjp(lambda x: fun(jax, x), primal)
        return pullback(cotangent)[0]

    return run


def _norms(name, make):
    return {f"{name}_{norm}": make(norm) for norm in ("backward", "ortho", "forward")}


def _fft(name, **kwargs):
    return lambda jax, x: getattr(jax.numpy.fft, name)(x, **kwargs)


def _power_grad(name, x, **kwargs):
    """The gradient of a weighted power spectrum: a nonlinear real loss of the transform."""

    def run(jax):
        def loss(v):
            spectrum = getattr(jax.numpy.fft, name)(v, **kwargs)
            return jax.numpy.sum(jax.numpy.abs(spectrum) ** 2 * WEIGHTS5[: spectrum.shape[-1]])

        return jax.grad(loss)(x)

    return run


CASES = {
    **_norms("rfft_vjp", lambda norm: _vjp(_fft("rfft", norm=norm), X8, Z5)),
    **_norms("irfft_vjp", lambda norm: _vjp(_fft("irfft", norm=norm), Z5, X8)),
    **_norms("hfft_vjp", lambda norm: _vjp(_fft("hfft", norm=norm), Z5, X8)),
    **_norms("ihfft_vjp", lambda norm: _vjp(_fft("ihfft", norm=norm), X8, Z5)),
    "rfft_odd_vjp": _vjp(_fft("rfft"), X7, Z5[:2, :4]),
    "irfft_odd_vjp": _vjp(_fft("irfft", n=9), Z5, _RNG.normal(size=(3, 9))),
    "rfft_cropped_vjp": _vjp(_fft("rfft", n=6), X8, Z5[:, :4]),
    "irfft_padded_vjp": _vjp(_fft("irfft", n=12), Z5, _RNG.normal(size=(3, 12))),
    "rfft2_vjp": _vjp(_fft("rfft2"), X45, Z45[:, :3]),
    "irfft2_vjp": _vjp(_fft("irfft2", s=(4, 6)), Z45[:, :4], _RNG.normal(size=(4, 6))),
    "rfftn_axis0_vjp": _vjp(_fft("rfftn", axes=(1, 0)), X45, Z45[:3, :5]),
    "fft_of_real_vjp": _vjp(_fft("fft"), X8, np.concatenate([Z5, Z5[:, :3]], axis=1)),
    "ifft_vjp": _vjp(_fft("ifft", norm="ortho"), Z5, Z5[::-1]),
    "rfft_power_grad": _power_grad("rfft", X8),
    "irfft_power_grad": _power_grad("irfft", Z5, n=5),
    "lax_rfft_vjp": _vjp(lambda jax, x: jax.lax.fft(x, "RFFT", (3, 8)), X8, Z5),
    "lax_irfft_vjp": _vjp(lambda jax, x: jax.lax.fft(x, "IRFFT", (3, 8)), Z5, X8),
    "fftfreq_fractional_n": lambda jax: jax.numpy.fft.fftfreq(5.5, 0.25),
    "rfftfreq_fractional_n": lambda jax: jax.numpy.fft.rfftfreq(5.5, 0.25),
    "fftfreq_int_dtype": lambda jax: jax.numpy.fft.fftfreq(6, 0.1, dtype="int32"),
    "rfftfreq_int_dtype": lambda jax: jax.numpy.fft.rfftfreq(6, 0.1, dtype="int32"),
    "fftfreq_float16": lambda jax: jax.numpy.fft.fftfreq(6, 3.0, dtype="float16"),
    "fftn_five_axes": lambda jax: jax.numpy.fft.fftn(_RNG.normal(size=(2, 3, 2, 3, 2))),
    "irfftn_four_axes": lambda jax: jax.numpy.fft.irfftn(Z45.reshape(2, 2, 1, 5)),
}


def describe(value) -> dict:
    value = np.asarray(value)
    values = value.astype(np.complex128) if value.dtype.kind == "c" else value.astype(float)
    pairs = np.stack([values.real, values.imag], -1) if value.dtype.kind == "c" else values
    return {"dtype": value.dtype.name, "shape": list(value.shape), "values": pairs.tolist()}


def outcome(fun, jax) -> dict:
    """`describe` of `fun(jax)`, or the class name of the exception it raises."""
    try:
        return describe(fun(jax))
    except Exception as error:  # noqa: BLE001 (the class is the recorded result)
        return {"error": type(error).__name__}


def main(jax):

    assert jax.__version__ == "0.10.2", jax.__version__
    jax.config.update("jax_enable_x64", True)
    out = {name: outcome(fun, jax) for name, fun in CASES.items()}
    DATA.parent.mkdir(exist_ok=True)
    lines = [f"{json.dumps(name)}: {json.dumps(out[name])}" for name in sorted(out)]
    DATA.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # one case per line
    print(f"wrote {len(out)} cases to {DATA}")
