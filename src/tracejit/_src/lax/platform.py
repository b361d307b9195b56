"""`lax.platform_dependent`: code that differs by platform. tracejit compiles for the CPU
only, so the choice is made when the function is traced: the `cpu` branch, else `default`.
(JAX stages every branch and chooses when the computation is lowered for a platform; with one
platform the two agree.)"""

from __future__ import annotations


def platform_dependent(*args, default=None, **per_platform):
    """`per_platform["cpu"](*args)`, or `default(*args)` when there is no `cpu` branch."""
    if "gpu" in per_platform:
        raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(
            "lax.platform_dependent has no branch for the platform tracejit runs on, cpu, and "
            f"no default (branches: {sorted(per_platform)})"
        )
    return branch(*args)
