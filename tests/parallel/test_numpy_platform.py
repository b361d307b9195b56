"""Without a PJRT plugin (the NumPy evaluator), pmap and shard_map evaluate the per-device
program for all devices at once, as vmap over the device axis: the same values."""

from parallel.devices import run_with_devices
from parallel.test_pmap import COLLECTIVES, TRANSFORMATIONS


def test_the_numpy_platform_evaluates_pmap_as_vmap_over_the_devices():
    run_with_devices(COLLECTIVES, platform="numpy")
    run_with_devices(TRANSFORMATIONS, platform="numpy")
