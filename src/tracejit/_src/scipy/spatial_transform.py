"""`Rotation` and `Slerp`: SciPy's 3-D rotations, as JAX has them (a NamedTuple of unit
quaternions, so a pytree that passes through `jit` and `vmap`).

A rotation is a unit quaternion (x, y, z, w), scalar last as in SciPy; a stack of rotations is
a (..., 4) array and every conversion works on the last axis, batched over the others.
Composition `p * q` (q first, then p) is the quaternion product. Conversions follow SciPy's
formulas: matrices to quaternions by the largest of the diagonal and the trace (Markley),
rotation vectors and modified Rodrigues parameters through the half angle (with Taylor series
near zero), Euler angles to quaternions by composing elementary rotations and back by
Bernardes and Viollet's quaternion method. The mean is the eigenvector of the largest
eigenvalue of sum w_i q_i q_i^T.
"""

import itertools
import re
from typing import NamedTuple

import numpy as np

from tracejit._src.array import Array
from tracejit._src.numpy import lib, manipulation
from tracejit._src.numpy.advanced_indexing import take_along_axis
from tracejit._src.numpy.arithmetic import hypot
from tracejit._src.numpy.creation import asarray, ones_like, zeros_like
from tracejit._src.numpy.einsum import einsum
from tracejit._src.numpy.lib_math import cross
from tracejit._src.numpy.linalg_spectral import eigh
from tracejit._src.numpy.products import matmul
from tracejit._src.numpy.promotion import promote_dtypes_inexact
from tracejit._src.numpy.reductions import argmax
from tracejit._src.numpy.reductions import sum as jnp_sum
from tracejit._src.numpy.sorting import searchsorted
from tracejit._src.numpy.ufuncs import (
    abs,
    arctan2,
    cos,
    deg2rad,
    maximum,
    minimum,
    rad2deg,
    sin,
    sqrt,
    where,
)

_SMALL_ANGLE = 1e-3  # below it, SciPy's Taylor series replace angle / sin(angle / 2)
_EULER_EPS = 1e-7  # SciPy's threshold for a gimbal lock in `as_euler`


def _inexact(x):
    return promote_dtypes_inexact(asarray(x))[0]


def _norm(x):
    return sqrt(jnp_sum(x * x, axis=-1))


def _normalize(quat):
    return quat / _norm(quat)[..., None]


def _compose(p, q):
    """The quaternion product p q: the rotation q, then p."""
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    vector = pw * qv + qw * pv + cross(pv, qv)
    scalar = pw * qw - jnp_sum(pv * qv, axis=-1, keepdims=True)
    return manipulation.concatenate([vector, scalar], axis=-1)


def _canonical(quat):
    """The quaternion with w > 0, or, where w == 0, whose first nonzero entry is positive."""
    x, y, z, w = (quat[..., i] for i in range(4))
    flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return where(flip[..., None], -quat, quat)


def _half_angle_scale(angle, small_series, exact):
    """exact(angle), or its Taylor series in angle² below `_SMALL_ANGLE` (where exact(angle)
    divides zero by zero)."""
    small = angle <= _SMALL_ANGLE
    safe = where(small, 1, angle)
    return where(small, small_series(angle * angle), exact(safe))


def _check_seq(seq, want_three):
    if want_three and len(seq) != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if not isinstance(seq, str) or not 1 <= len(seq) <= 3:
        raise ValueError(
            f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}"
        )
    if not re.fullmatch("[xyz]+|[XYZ]+", seq):
        raise ValueError(
            f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}"
        )
    if any(a == b for a, b in itertools.pairwise(seq)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(axis) for axis in seq.lower()], seq.islower()


def _elementary(axis, angle):
    half = angle / 2
    zero = zeros_like(half)
    parts = [zero, zero, zero, cos(half)]
    parts[axis] = sin(half)
    return manipulation.stack(parts, axis=-1)


def _euler_from_quat(quat, axes, extrinsic):
    """SciPy's Euler angles of unit quaternions (Bernardes and Viollet, 2022), batched: the
    three angles in the order of `axes`, each wrapped into [-pi, pi]."""
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = [quat[..., n] for n in range(4)]
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    second = 2 * arctan2(hypot(c, d), hypot(a, b))
    half_sum, half_diff = arctan2(b, a), arctan2(d, c)
    at_zero = abs(second) <= _EULER_EPS
    at_pi = abs(second - np.pi) <= _EULER_EPS
    degenerate = at_zero | at_pi
    first = where(
        degenerate,
        where(at_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1)),
        half_sum - half_diff,
    )
    third = where(degenerate, 0, half_sum + half_diff)
    if not symmetric:
        third = third * sign
        second = second - np.pi / 2
    if not extrinsic:
        first, third = third, first
    angles = manipulation.stack([first, second, third], axis=-1)
    return where(
        angles < -np.pi, angles + 2 * np.pi, where(angles > np.pi, angles - 2 * np.pi, angles)
    )


def _matrix_candidates(m):
    """The four (unnormalized) quaternions of Markley's method, one per choice of the
    largest among the diagonal entries and the trace: (..., 4, 4)."""
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        entries = [None] * 4
        entries[i] = 1 - trace + 2 * m[..., i, i]
        entries[j] = m[..., j, i] + m[..., i, j]
        entries[k] = m[..., k, i] + m[..., i, k]
        entries[3] = m[..., k, j] - m[..., j, k]
        candidates.append(manipulation.stack(entries, axis=-1))
    by_trace = [m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                m[..., 1, 0] - m[..., 0, 1], 1 + trace]  # fmt: skip
    candidates.append(manipulation.stack(by_trace, axis=-1))
    decision = manipulation.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    return manipulation.stack(candidates, axis=-2), argmax(decision, axis=-1)


class Rotation(NamedTuple):
    """Rotations in three dimensions: one (`quat` of shape (4,)) or a stack ((..., 4)), unit
    quaternions in SciPy's scalar-last order."""

    quat: Array

    @classmethod
    def concatenate(cls, rotations):
        """The rotations of a sequence of `Rotation`s, single ones counting as stacks of
        one."""
        return cls(manipulation.concatenate([manipulation.atleast_2d(r.quat) for r in rotations]))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles about the axes `seq` ('xyz'-like: extrinsic, about the fixed
        frame; 'XYZ'-like: intrinsic, about the rotating one), angles (..., len(seq))."""
        axes, extrinsic = _check_seq(seq, want_three=False)
        angles = manipulation.atleast_1d(_inexact(angles))
        if angles.shape[-1] != len(seq):
            raise ValueError(
                f"Rotation.from_euler: expected angles of shape (..., {len(seq)}) for seq "
                f"{seq!r}, got {angles.shape}"
            )
        if degrees:
            angles = deg2rad(angles)
        quat = _elementary(axes[0], angles[..., 0])
        for n, axis in enumerate(axes[1:], start=1):
            step = _elementary(axis, angles[..., n])
            quat = _compose(step, quat) if extrinsic else _compose(quat, step)
        return cls(quat)

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices (..., 3, 3)."""
        matrix = _inexact(matrix)
        if matrix.shape[-2:] != (3, 3):
            raise ValueError(
                f"Rotation.from_matrix: expected matrices of shape (..., 3, 3), got {matrix.shape}"
            )
        candidates, choice = _matrix_candidates(matrix)
        chosen = take_along_axis(candidates, choice[..., None, None], axis=-2)
        return cls(_normalize(chosen[..., 0, :]))

    @classmethod
    def from_mrp(cls, mrp):
        """From modified Rodrigues parameters (..., 3): the axis times tan(angle / 4)."""
        mrp = _inexact(mrp)
        squared = jnp_sum(mrp * mrp, axis=-1, keepdims=True)
        return cls(manipulation.concatenate([2 * mrp, 1 - squared], axis=-1) / (1 + squared))

    @classmethod
    def from_quat(cls, quat):
        """From quaternions (..., 4), scalar last; they are normalized."""
        return cls(_normalize(_inexact(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """From rotation vectors (..., 3): the axis times the angle."""
        rotvec = _inexact(rotvec)
        if degrees:
            rotvec = deg2rad(rotvec)
        angle = _norm(rotvec)
        scale = _half_angle_scale(
            angle, lambda a2: 0.5 - a2 / 48 + a2 * a2 / 3840, lambda a: sin(a / 2) / a
        )
        return cls(
            manipulation.concatenate(
                [scale[..., None] * rotvec, cos(angle / 2)[..., None]], axis=-1
            )
        )

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation (a single one: a stack of `num` is not built, as in JAX)."""
        if num is not None:
            raise NotImplementedError(
                "Rotation.identity(num): stacks of identities are not built, as in JAX"
            )
        return cls(asarray([0, 0, 0, 1], dtype=dtype))

    @classmethod
    def random(cls, random_key, num=None):
        """Uniformly distributed rotations: not implemented, as in JAX 0.10.2."""
        raise NotImplementedError("Rotation.random is not implemented (as in JAX 0.10.2)")

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __mul__(self, other):
        """The composition: `other`, then this rotation (broadcast over stacks)."""
        return Rotation(_compose(self.quat, other.quat))

    @property
    def single(self):
        """Whether this is one rotation rather than a stack."""
        return self.quat.ndim == 1

    def apply(self, vectors, inverse=False):
        """The rotated vectors (..., 3), broadcast against the stack of rotations."""
        matrix = self.as_matrix()
        if inverse:
            matrix = manipulation.swapaxes(matrix, -1, -2)
        vectors = asarray(vectors)
        batch = np.broadcast_shapes(matrix.shape[:-2], vectors.shape[:-1])
        return matmul(matrix, vectors[..., None])[..., 0].reshape(batch + (3,))

    def as_euler(self, seq, degrees=False):
        """Euler angles (..., 3) about the axes `seq` (three axes, as in `from_euler`), each
        in [-pi, pi] (the middle one in [0, pi] for repeated first and last axes, [-pi/2,
        pi/2] otherwise)."""
        axes, extrinsic = _check_seq(seq, want_three=True)
        angles = _euler_from_quat(self.quat, axes, extrinsic)
        return rad2deg(angles) if degrees else angles

    def as_matrix(self):
        """The rotation matrices (..., 3, 3)."""
        x, y, z, w = (self.quat[..., i] for i in range(4))
        xx, yy, zz, ww = x * x, y * y, z * z, w * w
        xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
        rows = [
            [xx - yy - zz + ww, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -xx + yy - zz + ww, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -xx - yy + zz + ww],
        ]
        return manipulation.stack([manipulation.stack(row, axis=-1) for row in rows], axis=-2)

    def as_mrp(self):
        """Modified Rodrigues parameters (..., 3), of the quaternion with w >= 0."""
        sign = where(self.quat[..., 3:] < 0, -1, 1)
        return sign * self.quat[..., :3] / (1 + sign * self.quat[..., 3:])

    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions (..., 4), scalar last unless `scalar_first`; with `canonical`,
        the one of q and -q with w > 0 (or, where w == 0, first nonzero entry positive)."""
        quat = _canonical(self.quat) if canonical else self.quat
        if scalar_first:
            quat = lib.roll(quat, 1, axis=-1)
        return quat

    def as_rotvec(self, degrees=False):
        """Rotation vectors (..., 3): the axis times the angle, the angle in [0, pi]."""
        quat = where(self.quat[..., 3:] < 0, -self.quat, self.quat)
        angle = 2 * arctan2(_norm(quat[..., :3]), quat[..., 3])
        scale = _half_angle_scale(
            angle, lambda a2: 2 + a2 / 12 + 7 * a2 * a2 / 2880, lambda a: a / sin(a / 2)
        )
        rotvec = scale[..., None] * quat[..., :3]
        return rad2deg(rotvec) if degrees else rotvec

    def inv(self):
        """The inverse rotations: the conjugate quaternions."""
        return Rotation(
            manipulation.concatenate([-self.quat[..., :3], self.quat[..., 3:]], axis=-1)
        )

    def magnitude(self):
        """The rotation angles, in [0, pi]."""
        return 2 * arctan2(_norm(self.quat[..., :3]), abs(self.quat[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation of a stack: the unit quaternion q maximizing
        sum w_i (q . q_i)²."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        quat = self.quat.reshape(-1, 4)
        weights = ones_like(quat[:, 0]) if weights is None else asarray(weights)
        moment = einsum("i,ij,ik->jk", weights, quat, quat)
        return Rotation(eigh(moment)[1][:, -1])


class Slerp(NamedTuple):
    """Spherical linear interpolation between rotations at increasing times: between
    neighbouring key rotations R_i and R_{i+1}, R_i * exp(t rotvec_i) for the fraction t of
    the interval, rotvec_i the rotation vector of R_i⁻¹ R_{i+1}. As in JAX, `rotations` keeps
    the key rotations but the last (each interval starts from one)."""

    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times, rotations):
        """The interpolator through `rotations` (a stack of at least two) at `times` (1-D,
        increasing, one per rotation)."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) <= 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = _inexact(times)
        if times.ndim != 1:
            raise ValueError(
                f"Expected times to be specified in a 1 dimensional array, got {times.ndim} "
                "dimensions."
            )
        if times.shape[0] != len(rotations):
            raise ValueError(
                "Expected number of rotations to be equal to number of timestamps given, got "
                f"{len(rotations)} rotations and {times.shape[0]} timestamps."
            )
        rotvecs = (rotations[:-1].inv() * rotations[1:]).as_rotvec()
        return cls(times, lib.diff(times), rotations[:-1], rotvecs)

    def __call__(self, times):
        """The interpolated rotations at `times` (a scalar: a single rotation). Times before
        the first key time extrapolate the first interval; after the last one, as in JAX, the
        last interval restarts with its fraction counted from the last key time."""
        times = _inexact(times)
        if times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = times.ndim == 0
        times = manipulation.atleast_1d(times)
        index = maximum(searchsorted(self.times, times) - 1, 0)
        interval = minimum(index, self.timedelta.shape[0] - 1)
        fraction = (times - self.times[index]) / self.timedelta[interval]
        step = Rotation.from_rotvec(self.rotvecs[interval] * fraction[:, None])
        result = self.rotations[interval] * step
        return Rotation(result.quat[0]) if single else result
