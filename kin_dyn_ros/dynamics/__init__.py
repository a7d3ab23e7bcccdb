"""kin_dyn_ros.dynamics: floating-base rigid-body kinematics and dynamics in NumPy.

ROS-free: it needs only NumPy and urdf_parser_py (PyPI ``urdfdom-py``), so planners and
notebooks can use it from a plain Python shell (with SciPy installed, forward dynamics uses
its LAPACK Cholesky solve, which is faster)::

    from kin_dyn_ros.dynamics import KinDynComputations, Representations
    kd = KinDynComputations("robot.urdf")
    M = kd.mass_matrix(w_H_b, s)

Conventions follow iDynTree theory (Traversaro, Saccon: Multibody dynamics notation):
spatial vectors [linear; angular], generalized vectors [base linear, base angular, joints],
and the MIXED, BODY_FIXED and INERTIAL_FIXED floating-base velocity representations (MIXED by
default).
"""

from .base_state import base_state_from_odometry, change_base_representation
from .computations import KinDynComputations, TickResult
from .quaternions import quaternion_to_matrix, rotations_to_quaternions
from .representations import Representations

__all__ = ["KinDynComputations", "Representations", "TickResult", "base_state_from_odometry",
           "change_base_representation", "quaternion_to_matrix", "rotations_to_quaternions"]
