"""What the node's services compute, per call, in process (not a test).

Times each query of :mod:`kin_dyn_ros.dynamics.queries` (what ``~/get_jacobian``,
``~/get_mass_matrix``, ``~/get_dynamics`` and ``~/check_equilibrium`` run in their worker
processes) on iCubGazeboV2_5, at a new state for every call (as a planner's requests come),
twice in one process (joints off the legs moved between calls, so that the feet stay put):
as the services run them (``queries.run``: the calls of one query
share one forward pass, ``sharing_model(keep_kinematics=True)``) and, as the reference, with
every call doing its own forward pass. ``check_equilibrium`` runs on the flat feet (convex
hull) and on bench_node's ``--service-load`` support (right sole on a 4.5 cm step, pitched:
the contact wrench cone's faces), with the support polygon of the step also by the iterative
projection (32 LPs) for comparison. ``dynamics_horizon`` is ``~/get_dynamics_horizon``'s
query, 50 states (every quantity, two frames) per call; bench/bench_horizon.py puts it
beside Pinocchio. Median and minimum over ``--repeats`` calls [us].

Usage:  source scripts/env.sh && python bench/bench_queries.py [--repeats 200]
"""

import argparse
import os
import pathlib
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")     # before NumPy is imported (see bench_core.py)

import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from bench_node import STEP_POSTURE, support_state  # noqa: E402
from bench_contacts import SOLE  # noqa: E402
from models import model_text  # noqa: E402
from kin_dyn_ros.dynamics import KinDynComputations, Representations  # noqa: E402
from kin_dyn_ros.dynamics import horizon, queries  # noqa: E402
from kin_dyn_ros.dynamics.contacts import Contact, contact_poses, support_polygon  # noqa: E402


def timed(fn, states, repeats):
    """(median, minimum) [us] of ``fn(w_H_b, s)`` over ``repeats`` calls cycling ``states``."""
    fn(*states[0])
    times = []
    for k in range(repeats):
        w_H_b, s = states[k % len(states)]
        t0 = time.perf_counter()
        fn(w_H_b, s)
        times.append(time.perf_counter() - t0)
    return 1e6 * float(np.median(times)), 1e6 * min(times)


def near(kd, state, rng, count=16):
    """``count`` states around ``state``, its joints off the legs (those that move neither
    sole) moved by up to 1 mrad: no two calls in a row at the same state, the support kept."""
    w_H_b, s = state
    legs = np.zeros(kd.NDoF, bool)
    for sole in ("l_sole", "r_sole"):
        legs |= np.abs(kd.jacobian(sole, w_H_b, s)[:, 6:]).max(axis=0) > 0.0
    return [(w_H_b, s + np.where(legs, 0.0, rng.uniform(-1e-3, 1e-3, s.shape)))
            for _ in range(count)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    kd = KinDynComputations(model_text(None))
    rep, n = Representations.MIXED_REPRESENTATION, kd.NDoF
    feet = [Contact(f, SOLE, [0, 0, 1], 0.5) for f in ("l_sole", "r_sole")]
    rng = np.random.default_rng(0)
    flat = near(kd, support_state(kd, {})[1:], rng)
    step = near(kd, support_state(kd, STEP_POSTURE)[1:], rng)
    nu, s_dot, frames = np.array([0.1, 0, 0, 0, 0, 0]), rng.normal(size=n), ["l_sole", "r_sole"]
    batch = [(np.repeat(w[None], 50, axis=0), np.repeat(s[None], 50, axis=0)) for w, s in flat]
    rows = [("jacobian l_sole", flat, "jacobian", ("l_sole",)),
            ("mass_matrix", flat, "mass_matrix", ()),
            ("dynamics (get_dynamics, 2 frames)", flat, "dynamics", (nu, s_dot, frames)),
            ("dynamics_horizon, 50 states", batch, "dynamics_horizon",
             (np.tile(nu, (50, 1)), np.tile(s_dot, (50, 1)), frames, horizon.QUANTITIES)),
            ("equilibrium_check, flat feet", flat, "equilibrium_check", (feet,)),
            ("equilibrium_check, step", step, "equilibrium_check", (feet,))]
    print(f"iCub ({n} joints), {args.repeats} calls each at changing states; median / min [us]")
    print(f"  {'query':<36} {'as the services run it':>24} {'a forward pass per call':>24}")
    for label, states, name, extra in rows:
        ours = timed(lambda w, s: queries.run(kd, name, rep, w, s, *extra), states,
                     args.repeats)
        plain = timed(lambda w, s: queries.QUERIES[name](kd, w, s, *extra), states,
                      args.repeats)
        print(f"  {label:<36} {ours[0]:>13.0f} / {ours[1]:<8.0f} {plain[0]:>13.0f} / "
              f"{plain[1]:<8.0f}")
    for method in ("auto", "projection"):
        polygon = [None]

        def run(w, s, method=method):
            polygon[0] = support_polygon(feet, contact_poses(kd, w, s, feet), kd.gravity,
                                         method=method)
        median, low = timed(run, step, max(10, args.repeats // 10))
        print(f"  support_polygon of the step, {polygon[0].method:<11} {median:>13.0f} / "
              f"{low:<8.0f} ({polygon[0].n_lps} LPs, {len(polygon[0].vertices)} vertices)")


if __name__ == "__main__":
    main()
