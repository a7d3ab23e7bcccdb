"""Floating-base system at the acceleration level (BipedalLocomotionFramework's
``FloatingBaseSystemAccelerationKinematics``, ami-iit/bipedal-locomotion-framework), with a
Lie-group integrator.

State ``(p, R, s, dp, omega, ds)``: base position [m] and orientation ``A_R_B`` in the inertial
frame A, joint positions, base linear velocity ``dp = d/dt p`` and angular velocity ``omega``
(both in A: the MIXED representation), joint velocities.
Input ``(dtwist, dds)``: the derivative of the mixed base twist ``[ddp; domega]`` (6,) and the
joint accelerations (n,).
Derivative: ``(dp, omega, ds, ddp, domega, dds)`` with ``d/dt R = omega^ R``.
"""

from dataclasses import dataclass

import numpy as np

from .spatial import homogeneous, so3_exp

__all__ = ["FloatingBaseState", "FloatingBaseDerivative", "dynamics", "integrate"]


@dataclass(frozen=True)
class FloatingBaseState:
    """Base pose and velocity (MIXED) plus joint positions and velocities."""

    p: np.ndarray
    R: np.ndarray  # noqa: N815 (the seed's name)
    s: np.ndarray
    dp: np.ndarray
    omega: np.ndarray
    ds: np.ndarray

    @property
    def w_H_b(self):  # noqa: N802
        """Base pose (4, 4)."""
        return homogeneous(self.R, self.p)

    @property
    def base_velocity(self):
        """Mixed base twist [dp; omega] (6,)."""
        return np.concatenate([self.dp, self.omega])


@dataclass(frozen=True)
class FloatingBaseDerivative:
    """Time derivative of a :class:`FloatingBaseState` (``omega`` is d/dt R = omega^ R)."""

    dp: np.ndarray
    omega: np.ndarray
    ds: np.ndarray
    ddp: np.ndarray
    domega: np.ndarray
    dds: np.ndarray


def _input(state, dtwist, dds):
    dtwist = np.asarray(dtwist, dtype=float)
    dds = np.asarray(dds, dtype=float)
    if dtwist.shape != (6,):
        raise ValueError(f"expected dtwist with shape (6,), got {dtwist.shape}")
    if dds.shape != np.shape(state.s):
        raise ValueError(f"expected dds with shape {np.shape(state.s)}, got {dds.shape}")
    return dtwist, dds


def dynamics(state, dtwist, dds):
    """f(x, u): the state derivative for the input (dtwist (6,) mixed, dds (n,))."""
    dtwist, dds = _input(state, dtwist, dds)
    return FloatingBaseDerivative(state.dp, state.omega, state.ds, dtwist[:3], dtwist[3:], dds)


def integrate(state, dtwist, dds, dt):
    """One explicit (forward) Euler step of length ``dt`` [s] on R^3 x SO(3) x R^n.

    The orientation is advanced with the exponential map, ``R <- exp(omega dt) R``, so it stays
    a rotation matrix to machine precision, and it is exact for a constant angular velocity.
    """
    d = dynamics(state, dtwist, dds)
    return FloatingBaseState(
        p=state.p + d.dp * dt,
        R=so3_exp(d.omega * dt) @ state.R,
        s=state.s + d.ds * dt,
        dp=state.dp + d.ddp * dt,
        omega=state.omega + d.domega * dt,
        ds=state.ds + d.dds * dt,
    )
