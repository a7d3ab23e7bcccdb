"""The core's import boundary: kin_dyn_ros.dynamics needs NumPy and urdf_parser_py only.

Each check runs in a fresh interpreter, so that what the test session already imported
(rclpy, Pinocchio, SciPy) does not hide an import of the core.
"""

import ast
import subprocess
import sys
import textwrap

import pytest

ROS_PACKAGES = ("rclpy", "rcl_interfaces", "std_msgs", "sensor_msgs", "geometry_msgs",
                "nav_msgs", "tf2_msgs", "visualization_msgs", "kin_dyn_ros_interfaces")


def _run(code, icub_urdf_path):
    """Run ``code`` (with ``URDF``, the iCub file path) in a fresh interpreter; its stdout."""
    script = f"URDF = {str(icub_urdf_path)!r}\n" + textwrap.dedent(code)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def icub_path(icub_urdf, tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "icub.urdf"
    path.write_text(icub_urdf)
    return path


TICK = """
    import numpy as np
    from kin_dyn_ros.dynamics import KinDynComputations
    kd = KinDynComputations(URDF)
    n = kd.NDoF
    r = kd.compute_tick(np.eye(4), np.full(n, 0.1), np.ones(6), np.ones(n), np.ones(n),
                        {"l_sole": ("l_sole", np.ones(6))})
    kd.inverse_mass_matrix(np.eye(4), np.zeros(n))
    from kin_dyn_ros.dynamics import algorithms
    print(algorithms._dposv is None)
    print(repr(r.joint_accelerations.tolist()))
"""


def test_the_core_imports_nothing_from_ros(icub_path):
    code = TICK + f"""
    import sys
    print(sorted(m for m in sys.modules if m.split('.')[0] in {ROS_PACKAGES!r}))
    """
    assert _run(code, icub_path).splitlines()[-1] == "[]"


def test_the_core_runs_without_scipy(icub_path):
    """Without SciPy (imports of it fail) forward dynamics uses NumPy's LU: the same
    accelerations as with SciPy's Cholesky, to 1e-12 relative."""
    without = "import sys\nsys.modules['scipy'] = None\n" + textwrap.dedent(TICK)
    *_, lu_used, lu = _run(without, icub_path).splitlines()
    *_, lu_default, cholesky = _run(TICK, icub_path).splitlines()
    assert (lu_used, lu_default) == ("True", "False")
    lu, cholesky = ast.literal_eval(lu), ast.literal_eval(cholesky)
    scale = max(abs(x) for x in cholesky)
    assert max(abs(a - b) for a, b in zip(lu, cholesky)) <= 1e-12 * scale
