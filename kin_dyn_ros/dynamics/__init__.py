"""kin_dyn_ros.dynamics: floating-base rigid-body kinematics and dynamics in NumPy.

ROS-free: it needs only NumPy and urdf_parser_py (PyPI ``urdfdom-py``), so planners and
notebooks can use it from a plain Python shell (with SciPy installed, forward dynamics uses
its LAPACK Cholesky solve, which is faster)::

    from kin_dyn_ros.dynamics import KinDynComputations, Representations
    kd = KinDynComputations("robot.urdf")
    M = kd.mass_matrix(w_H_b, s)

Conventions follow iDynTree (shared/seeds/003): spatial vectors [linear; angular], generalized
vectors [base linear, base angular, joints], and the MIXED, BODY_FIXED and INERTIAL_FIXED
floating-base velocity representations (MIXED by default).
"""

from .computations import KinDynComputations, TickResult
from .representations import Representations

__all__ = ["KinDynComputations", "Representations", "TickResult"]
