"""The floating base's state from other data (NumPy, no ROS): a base velocity in another
representation, and the base pose and velocity from the odometry of any link.

Frames: W the world, B the base (root link), C any link; ``A_H_B`` (4, 4) is B's pose in A.
Velocities are (6,) [linear; angular]; representations as in :mod:`.representations`.
"""

import numpy as np

from .representations import Representations, base_transform, base_transform_inverse
from .spatial import inverse_homogeneous, velocity_transform

__all__ = ["change_base_representation", "base_state_from_odometry"]

_BODY = Representations.BODY_FIXED_REPRESENTATION
_MIXED = Representations.MIXED_REPRESENTATION


def change_base_representation(nu_base, w_H_b, rep_from, rep_to):
    """Base velocity (6,) in ``rep_from`` -> ``rep_to`` at base pose ``w_H_b`` (4, 4).

    Uses the core's maps to its internal frame C: ``T_to nu_to = T_from nu_from``.
    """
    if rep_from == rep_to:
        return np.array(nu_base, dtype=float)
    if rep_from == _BODY and rep_to == _MIXED:      # [R v; R w]
        return _rotated_pair(w_H_b, nu_base)
    return base_transform_inverse(rep_to, w_H_b) @ (base_transform(rep_from, w_H_b) @ nu_base)


def _rotated_pair(w_H_b, nu):
    """[R v; R w] (6,) of ``nu`` = [v; w] with R the rotation of ``w_H_b``, in plain
    arithmetic: the node converts each odometry message, and there its base state took 21
    us per message against 48-71 with the NumPy products (probes in the running node,
    whose caches are cold between messages; warm, 3.2 against 2.1 us)."""
    (a, b, c), (d, e, f), (g, h, i) = (row[:3] for row in w_H_b[:3].tolist())
    x, y, z, p, q, r = np.asarray(nu, dtype=float).tolist()
    return np.array([a * x + b * y + c * z, d * x + e * y + f * z, g * x + h * y + i * z,
                     a * p + b * q + c * r, d * p + e * q + f * r, g * p + h * q + i * r])


def base_state_from_odometry(w_H_c, twist_c, root_H_child, j_rel, s_dot, rep):
    """Root pose and velocity from the odometry of a child link (REP-105).

    Parameters
    ----------
    w_H_c : (4, 4) pose of the odometry's child frame C in the world frame.
    twist_c : (6,) C's twist as nav_msgs/Odometry carries it: [linear velocity of C's
        origin [m/s]; angular velocity [rad/s]], both in C's axes (C's BODY_FIXED velocity).
    root_H_child : (4, 4) C's pose in the root (base) frame B at the current joint positions
        (``kd.forward_kinematics(child, eye(4), s)``).
    j_rel : (6, n) C's BODY_FIXED Jacobian relative to the base (the joint columns,
        ``relative_jacobian`` in BODY_FIXED): C's body velocity due to the joints.
    s_dot : (n,) joint velocities.
    rep : Representations of the returned base velocity.

    Returns ``(w_H_b (4, 4), nu_b (6,))`` with ``J_C(q) [nu_b; s_dot] = twist_c`` (in BODY_FIXED):
    ``B v_B = B_X_C (C v_C - J_rel s_dot)``, then converted to ``rep``.
    """
    w_H_b = w_H_c @ inverse_homogeneous(root_H_child)
    v_body = velocity_transform(root_H_child) @ (twist_c - j_rel @ s_dot)
    nu = change_base_representation(v_body, w_H_b, Representations.BODY_FIXED_REPRESENTATION,
                                    rep)
    return w_H_b, nu
