"""The three floating-base velocity representations, and the one place that maps between them.

Notation of iDynTree theory (Traversaro, Saccon: Multibody dynamics notation): A is the world
(inertial) frame, B the base, F any frame. Internally every algorithm works in ``C``: world
axes with origin at the base origin (see :mod:`.kinematics`). Here are the maps from a
representation to ``C`` and back.

- ``MIXED_REPRESENTATION`` (default): ``A[B]v = [d/dt A_o_B; A_omega_A,B]``: the velocity of
  the frame's origin and the angular velocity, both in world axes.
- ``BODY_FIXED_REPRESENTATION`` (left-trivialised): ``B v = [B_R_A d/dt A_o_B; B_omega_A,B]``,
  both in the frame's own axes.
- ``INERTIAL_FIXED_REPRESENTATION`` (right-trivialised): ``A v = [d/dt A_o_B - A_omega x A_o_B;
  A_omega]``: the velocity of the body point at the world origin, world axes.

Base: ``nu_C = T nu_rep`` and ``d/dt nu_C = T d/dt nu_rep + Tdot nu_rep``; generalized forces
map as ``tau_rep = T^T tau_C`` (power is invariant). A frame F's velocity in the representation
is ``X v_C`` with :func:`frame_transform`; a wrench ``w`` given in the representation (as for
``external_wrenches``) acts in ``C`` as ``X^T w``.
"""

import enum

import numpy as np

from .spatial import motion_cross_matrix, skew, velocity_transform

__all__ = ["Representations", "parse_representation", "base_transform", "base_transform_inverse",
           "base_transform_dot",
           "rep_frame_pose", "frame_transform", "base_drift", "frame_drift"]

_EYE4, _EYE6 = np.eye(4), np.eye(6)     # copied (faster than np.eye) where one is needed


class Representations(enum.IntEnum):
    """Floating-base velocity representations, as adam and iDynTree name them."""

    INERTIAL_FIXED_REPRESENTATION = 0
    BODY_FIXED_REPRESENTATION = 1
    MIXED_REPRESENTATION = 2


_NAMES = {"MIXED": Representations.MIXED_REPRESENTATION,
          "BODY_FIXED": Representations.BODY_FIXED_REPRESENTATION,
          "INERTIAL_FIXED": Representations.INERTIAL_FIXED_REPRESENTATION}


def parse_representation(value):
    """A :class:`Representations` from itself or a name ('MIXED', 'BODY_FIXED',
    'INERTIAL_FIXED', with or without the '_REPRESENTATION' suffix, any case)."""
    if isinstance(value, Representations):
        return value
    if isinstance(value, str):
        key = value.strip().upper().replace("_REPRESENTATION", "")
        if key in _NAMES:
            return _NAMES[key]
    raise ValueError(f"unknown velocity representation {value!r}: expected one of "
                     f"{sorted(_NAMES)}")


def base_transform(rep, w_H_b):
    """T (6, 6) with ``nu_C = T nu_rep`` for the base velocity."""
    t = _EYE6.copy()
    if rep == Representations.BODY_FIXED_REPRESENTATION:
        t[:3, :3] = t[3:, 3:] = w_H_b[:3, :3]
    elif rep == Representations.INERTIAL_FIXED_REPRESENTATION:
        t[:3, 3:] = -skew(w_H_b[:3, 3])
    return t


def base_transform_inverse(rep, w_H_b):
    """T^-1 (6, 6), ``nu_rep = T^-1 nu_C``, in closed form."""
    t = _EYE6.copy()
    if rep == Representations.BODY_FIXED_REPRESENTATION:
        t[:3, :3] = t[3:, 3:] = w_H_b[:3, :3].T
    elif rep == Representations.INERTIAL_FIXED_REPRESENTATION:
        t[:3, 3:] = skew(w_H_b[:3, 3])
    return t


def base_transform_dot(rep, t, base_vel):
    """dT/dt (6, 6) along the motion with base velocity ``base_vel`` (in ``rep``)."""
    if rep == Representations.MIXED_REPRESENTATION:
        tdot = np.zeros((6, 6))
        tdot[:3, 3:] = skew(base_vel[:3])
        return tdot
    if rep == Representations.BODY_FIXED_REPRESENTATION:
        return t.dot(motion_cross_matrix(base_vel))
    return np.zeros((6, 6))


def rep_frame_pose(rep, c_H_f, base_position):
    """T_H_C (4, 4): the pose of C in the frame T that expresses F's velocity in ``rep``.

    T is F's origin with world axes (MIXED), F itself (BODY_FIXED) or the world frame A
    (INERTIAL_FIXED). ``c_H_f`` is F's pose in C (world axes, base origin); ``base_position``
    is A_o_B. :func:`frame_transform` is the velocity transform of this pose.
    """
    t = _EYE4.copy()
    if rep == Representations.MIXED_REPRESENTATION:
        t[:3, 3] = -c_H_f[:3, 3]
    elif rep == Representations.BODY_FIXED_REPRESENTATION:
        rt = c_H_f[:3, :3].T
        t[:3, :3] = rt
        t[:3, 3] = -rt.dot(c_H_f[:3, 3])
    else:
        t[:3, 3] = base_position
    return t


def frame_transform(rep, c_H_f, base_position):
    """X (6, 6) mapping a spatial velocity in C to frame F's velocity in ``rep``
    (arguments as :func:`rep_frame_pose`)."""
    return velocity_transform(rep_frame_pose(rep, c_H_f, base_position))


def base_drift(rep, t, base_vel):
    """u_B (6,) in C with ``dT/dt = (u_B x) T``: how the base's representation frame moves.

    MIXED: the base's origin velocity [d/dt o_B; 0]; BODY_FIXED: the base's velocity in C
    (T is an adjoint, ``T (v x) = (T v) x T``); INERTIAL_FIXED: 0 (a fixed frame).
    """
    if rep == Representations.MIXED_REPRESENTATION:
        return np.concatenate([base_vel[:3], np.zeros(3)])
    if rep == Representations.BODY_FIXED_REPRESENTATION:
        return t.dot(base_vel)
    return np.zeros(6)


def frame_drift(rep, frame_vel):
    """u (6,) with ``dX/dt = -(u x) X``, from frame F's velocity ``frame_vel`` in ``rep``:
    the velocity, in F's representation frame, of that frame itself (MIXED: [d/dt o_F; 0];
    BODY_FIXED: F's body velocity; INERTIAL_FIXED: 0)."""
    if rep == Representations.MIXED_REPRESENTATION:
        return np.concatenate([frame_vel[:3], np.zeros(3)])
    if rep == Representations.BODY_FIXED_REPRESENTATION:
        return frame_vel
    return np.zeros(6)
