"""The op tables: one `helpers.OpSpec` row per primitive (several where parameters change what
it computes), one table per family. `tests/lax/test_op_specs.py` generates the value, vmap and
derivative checks from them, `tests/lowering/test_lower_op_specs.py` the XLA ones.

Primitives without a row are tested where their bodies or axes make them special:
`COVERED_ELSEWHERE` names the file."""

from op_specs.binary import BINARY
from op_specs.elementwise import ELEMENTWISE
from op_specs.fft import FFT
from op_specs.indexing import INDEXING
from op_specs.reductions import REDUCTIONS
from op_specs.special import SPECIAL
from op_specs.structural import STRUCTURAL

FAMILIES = {
    "elementwise": ELEMENTWISE,
    "binary": BINARY,
    "structural": STRUCTURAL,
    "reductions": REDUCTIONS,
    "indexing": INDEXING,
    "special": SPECIAL,
    "fft": FFT,
}

ALL_SPECS = [spec for table in FAMILIES.values() for spec in table]

CONTROL_FLOW = "higher-order, its bodies are jaxprs: tests/lax/test_control_flow_{}.py"
COLLECTIVE = "needs a named axis (vmap/pmap): tests/test_collectives.py"
ON_DEVICES = "needs a named axis: tests/parallel/test_pmap.py, tests/test_collectives.py"

COVERED_ELSEWHERE = {
    "cond": CONTROL_FLOW.format("cond"),
    "while": CONTROL_FLOW.format("loops"),
    "scan": CONTROL_FLOW.format("scan"),
    "jit": "call primitive: tests/test_jit.py",
    "remat2": "call primitive: tests/test_checkpoint.py",
    "name": "checkpoint_name's identity: tests/test_checkpoint.py",
    "custom_vmap_call": "call primitive: tests/test_custom_batching.py",
    "cholesky": "linear algebra, checked by its identities: tests/lax/test_linalg.py",
    "triangular_solve": "linear algebra, checked by its identities: tests/lax/test_linalg.py",
    "lu": "linear algebra, checked by its identities: tests/lax/test_linalg.py",
    "lu_pivots_to_permutation": "linear algebra, checked by its identities: tests/lax/test_linalg_nonsymmetric.py",
    "eig": "linear algebra, checked by its identities: tests/lax/test_linalg_nonsymmetric.py",
    "schur": "linear algebra, checked by its identities: tests/lax/test_linalg_nonsymmetric.py",
    "hessenberg": "linear algebra, checked by its identities: tests/lax/test_linalg_nonsymmetric.py",
    "tridiagonal": "linear algebra, checked by its identities: tests/lax/test_linalg_nonsymmetric.py",
    "tridiagonal_solve": "linear algebra, checked by its identities: tests/lax/test_linalg_nonsymmetric.py",
    **dict.fromkeys(
        ("qr", "eigh", "svd", "geqrf", "householder_product"),
        "linear algebra, checked by its identities: tests/lax/test_linalg_spectral.py",
    ),
    **dict.fromkeys(
        ("symmetric_product", "ormqr", "cholesky_update"),
        "linear algebra, checked by what it computes: tests/lax/test_linalg_products.py",
    ),
    "custom_jvp_call": "call primitive: tests/test_autodiff.py",
    "custom_vjp_call": "call primitive: tests/test_autodiff.py",
    "custom_lin": "only inside the linearization of a custom_vjp: tests/test_autodiff.py",
    "linear_solve": "its bodies are the user's functions: tests/lax/test_solves.py",
    "composite": "its body is the user's function: tests/lax/test_composite.py",
    "check": "no outputs; raises or becomes checkify's error: tests/test_checkify.py",
    "rng_bit_generator": "XLA's bits, recorded from JAX: tests/lax/test_lax_extras_reference.py",
    "rng_uniform": "XLA's stateful samples, not reproducible: tests/lax/test_rng.py",
    "dce_sink": "no outputs to compare: tests/lax/test_lax_small_primitives.py",
    "scatter_apply": "takes a function: tests/lax/test_lax_small_primitives.py",
    "reduce": "takes a function, its body a jaxpr: tests/lax/test_reduce.py",
    **dict.fromkeys(
        ("reduce_window", "select_and_scatter", "select_and_gather_add", "select_and_scatter_add"),
        "takes a function or a selection, checked against NumPy windows and recorded JAX "
        "gradients: tests/lax/test_windowed_reductions.py",
    ),
    "iota": "no operands to sample, batch or differentiate: tests/lax/test_shapes.py",
    "psum": COLLECTIVE,
    "psum_invariant": "psum's rules, staged by shard_map's typing: tests/parallel/test_vma.py",
    "pmax": COLLECTIVE,
    "pmin": COLLECTIVE,
    "all_gather": COLLECTIVE,
    "axis_index": COLLECTIVE,
    "all_to_all": ON_DEVICES,
    "ppermute": ON_DEVICES,
    "ragged_all_to_all": "a named axis and consistent ragged offsets, against the docstring's "
    "loop: tests/parallel/test_ragged_all_to_all.py",
    "pvary": "the identity that shard_map's check_vma typing inserts: tests/parallel/test_vma.py",
    "reduce_scatter": ON_DEVICES,
    "shard_map": "takes a function and a mesh: tests/parallel/test_pmap.py",
    "sharding_constraint": "takes a sharding: tests/parallel/test_sharded_jit.py",
    "reshard": "takes a sharding: tests/parallel/test_sharding_in_types.py",
    "inspect_sharding": "no results; calls back with a sharding: "
    "tests/parallel/test_sharding_visualization.py",
    **dict.fromkeys(
        (
            "threefry2x32",
            "random_seed",
            "random_wrap",
            "random_unwrap",
            "random_bits",
            "random_split",
            "random_fold_in",
            "random_clone",
        ),
        "bit-exact against recorded JAX values, eager/staged/compiled: tests/test_prng.py, "
        "tests/random/test_random.py",
    ),
    **dict.fromkeys(
        ("pure_callback", "io_callback", "debug_callback", "debug_print"),
        "host callbacks (a Python function of concrete values), eager/staged/compiled: "
        "tests/test_callbacks.py, tests/test_debugging.py",
    ),
    **dict.fromkeys(
        ("random_gamma", "random_gamma_grad"),
        "samples and their reparameterized gradient against recorded JAX values and SciPy, "
        "second derivatives in forward mode against JAX's: tests/random/test_random.py, "
        "tests/random/test_statistics.py, tests/random/test_gamma_second_derivatives.py",
    ),
}
