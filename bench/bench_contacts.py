"""Per-tick cost of the contact mechanics on iCub standing on both feet.

Times (minimum and median over repeats, microseconds) ``support_polygon`` (flat feet: convex
hull; and the general LP projection for comparison), ``com_equilibrium`` and
``equilibrium_torques`` for iCubGazeboV2_5 with two sole contacts of 4 corners each (0.1 m x 0.05 m, mu 0.5, 8-facet
cones), next to ``compute_tick`` (what the node already spends per tick), and says whether
each fits the 1 ms budget of the 1 kHz node.

Usage::

    .venv/bin/python bench/bench_contacts.py [--repeats 200]

Like ``bench_core.py``: BLAS runs on one thread unless OPENBLAS/OMP/MKL_NUM_THREADS is set,
and the repository root is put on ``sys.path``.
"""

import argparse
import os
import pathlib
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")     # before NumPy is imported (see bench_core.py)

import icub_models  # noqa: E402
import numpy as np  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kin_dyn_ros.dynamics import KinDynComputations  # noqa: E402
from kin_dyn_ros.dynamics.contacts import Contact, contact_poses, support_polygon  # noqa: E402
from kin_dyn_ros.dynamics.equilibrium import com_equilibrium, equilibrium_torques  # noqa: E402

TICK_US = 1000.0
SOLE = np.array([[0.05, 0.025, 0.0], [-0.05, 0.025, 0.0], [-0.05, -0.025, 0.0],
                 [0.05, -0.025, 0.0]])


def best_of(fn, repeats):
    """(minimum, median) wall time of ``fn()`` over ``repeats`` calls [us], after a warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e6 * min(times), 1e6 * float(np.median(times))


def standing_icub():
    """iCub, joints at zero, base placed so that both soles lie on z = 0."""
    kd = KinDynComputations(pathlib.Path(icub_models.get_model_file("iCubGazeboV2_5")).read_text())
    s = np.zeros(kd.NDoF)
    w_H_b = np.eye(4)
    w_H_b[2, 3] = -kd.forward_kinematics("l_sole", np.eye(4), s)[2, 3]
    return kd, w_H_b, s


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    kd, w_H_b, s = standing_icub()
    n = kd.NDoF
    zero6, zero_n = np.zeros(6), np.zeros(n)
    feet = [Contact("l_sole", SOLE, [0, 0, 1], 0.5), Contact("r_sole", SOLE, [0, 0, 1], 0.5)]
    poses = contact_poses(kd, w_H_b, s, feet)
    com = kd.CoM_position(w_H_b, s)
    mass = kd.get_total_mass()
    polygon = support_polygon(feet, poses, kd.gravity)
    rows = [
        ("compute_tick (no forward dynamics), for scale",
         lambda: kd.compute_tick(w_H_b, s, zero6, zero_n), args.repeats),
        ("contact_poses (2 x forward_kinematics)",
         lambda: contact_poses(kd, w_H_b, s, feet), args.repeats),
        ("support_polygon, flat feet (hull), incl. contact_poses",
         lambda: support_polygon(feet, contact_poses(kd, w_H_b, s, feet), kd.gravity),
         args.repeats),
        ("support_polygon, general (LP projection, HiGHS)",
         lambda: support_polygon(feet, poses, kd.gravity, method="projection"),
         max(3, args.repeats // 20)),
        ("com_equilibrium, polygon given",
         lambda: com_equilibrium(feet, com, mass, kd.gravity, poses, polygon=polygon),
         args.repeats),
        ("com_equilibrium, flat polygon computed",
         lambda: com_equilibrium(feet, com, mass, kd.gravity, poses), args.repeats),
        ("equilibrium_torques (static, URDF limits)",
         lambda: equilibrium_torques(kd, w_H_b, s, feet), args.repeats),
    ]
    res = equilibrium_torques(kd, w_H_b, s, feet)
    print(f"iCubGazeboV2_5: {n} joints, two sole contacts x 4 points, 8-facet cones; "
          f"equilibrium_torques feasible={res.feasible}, residual={res.residual:.1e}")
    print(f"{'call':58s} {'min [us]':>10s} {'median':>10s}  min / 1 ms tick")
    timings = {}
    for name, fn, repeats in rows:
        t, med = best_of(fn, repeats)
        timings[name] = t
        print(f"{name:58s} {t:10.1f} {med:10.1f}  {100.0 * t / TICK_US:5.1f} %")
    tick = timings[rows[0][0]]
    eq = timings["equilibrium_torques (static, URDF limits)"]
    hull = timings["support_polygon, flat feet (hull), incl. contact_poses"]
    total = tick + eq + hull
    print(f"\ncompute_tick + support polygon + equilibrium_torques = {total:.0f} us "
          f"({'fits' if total < TICK_US else 'does NOT fit'} a 1 ms tick on this machine, "
          "best case, one core)")
    if tick + eq > 0.5 * TICK_US:
        print(f"equilibrium_torques alone takes {100 * eq / TICK_US:.0f} % of the tick: run it "
              "on its own timer at <= 100-250 Hz (or when the contact set changes), not in "
              "the 1 kHz callback")


if __name__ == "__main__":
    main()
