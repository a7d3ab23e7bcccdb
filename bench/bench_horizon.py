#!/usr/bin/env python3
"""A planner's horizon in one call: ``dynamics_horizon`` against Pinocchio and a loop of ours (not a test).

Times, in one process, the terms a planner linearises along its horizon at K states
(``--states``, 50) of iCubGazeboV2_5 (``--model``: a robot of bench/models.py or a URDF path):
CoM, mass matrix, bias forces, gravity forces, centroidal momentum matrix, CoM Jacobian and,
for two frames (iCub: ``l_sole`` and ``r_hand``; ``--frames``), the frame Jacobian and
``Jdot nu``, four ways:

- (a) ours, ``KinDynComputations.dynamics_horizon`` (compiled path): one call for the K states;
- (b) Pinocchio, K states in a Python loop of its batch-free API: ``crba`` (its upper
  triangle mirrored after the loop, for the K states at once),
  ``nonLinearEffects``, ``computeGeneralizedGravity``, ``ccrba`` (CMM), ``centerOfMass``,
  ``jacobianCenterOfMass``, ``computeJointJacobians`` + ``getFrameJacobian`` per frame, and
  ``forwardKinematics(q, v, 0)`` + ``getFrameAcceleration`` per frame (= Jdot v);
- (c) ours, K x the single-state methods (``mass_matrix``, ``bias_force``, ``gravity_term``,
  ``centroidal_momentum_matrix``, ``CoM_position``, ``CoM_jacobian``, ``jacobian`` and
  ``jacobian_dot_nu`` per frame) in a Python loop on the same (compiled) object;
- (d) the loop of (c) on the NumPy path (``compiled=False``), the reference.

Every way fills (K, ...) arrays of the same quantities. Ours and Pinocchio use the BODY_FIXED
representation (Pinocchio's free-flyer velocity; ``--mixed``: ours in MIXED, timing only) on
the same axis-normalized URDF text and the same states (Pinocchio's q and v prepared once
from them, in its joint order: conversions are outside the timing). The states: base near
upright (roll and pitch of standard deviation 0.05 rad, any yaw), joints in the middle half of their
limits, random velocities. Each repeat times (a), (b), (c) and (d) once each, in rotating
order (a slow spell hits all equally), the garbage collector off; median and minimum over
``--repeats`` [us], for the K states and per state, and the ratios (a)/(b) (target <= 2x),
(c)/(a) (target >= 10x) and (d)/(a). ``--check``: (a) against (c), (d) and (in BODY_FIXED)
Pinocchio, max abs difference per quantity. ``--breakdown``: where the time goes, per state:
``dynamics_horizon`` with one quantity at a time and its fixed cost per call (K = 1), each
Pinocchio call of (b) and each single-state method of (c) over the K states.

Usage:  source scripts/env.sh && python bench/bench_horizon.py [--states 50] [--repeats 30] [--model talos]
"""

import argparse
import gc
import os
import pathlib
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")     # before NumPy is imported (see bench_core.py)

import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import pinocchio as pin  # noqa: E402
from bench_core import Pin, joint_limits, normalize_axes  # noqa: E402
from models import NAMED, model_label, model_text  # noqa: E402
from kin_dyn_ros.dynamics import KinDynComputations, Representations, horizon  # noqa: E402

QUANTITIES = ("com", "mass_matrix", "bias_forces", "gravity_forces", "centroidal_momentum_matrix",
              "com_jacobian", "jacobians", "jacobian_dot_nu")
# two frames per robot: a sole and a hand
FRAMES = {"icub": ("l_sole", "r_hand"), "talos": ("left_sole_link", "wrist_right_ft_tool_link"),
          "talos_reduced": ("left_sole_link", "wrist_right_ft_tool_link"),
          "g1": ("left_ankle_roll_link", "right_rubber_hand")}
WAYS = ("a", "b", "c", "d")
LABELS = {"a": "(a) ours, dynamics_horizon (1 call)",
          "b": "(b) Pinocchio, loop over states",
          "c": "(c) ours compiled, loop of single-state calls",
          "d": "(d) ours NumPy, loop of single-state calls"}


def rotation_rpy(roll, pitch, yaw):
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    return rz @ ry @ rx


def horizon_states(text, joints, k, seed):
    """(w_H_b (K, 4, 4), s (K, n), base_vel (K, 6), s_dot (K, n)): base near upright, joints in
    the middle half of their limits, random velocities."""
    rng = np.random.default_rng(seed)
    n = len(joints)
    lo, hi = joint_limits(text, joints)
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    w_H_b = np.tile(np.eye(4), (k, 1, 1))
    for i in range(k):
        w_H_b[i, :3, :3] = rotation_rpy(*rng.normal(scale=0.05, size=2), rng.uniform(-np.pi, np.pi))
        w_H_b[i, :3, 3] = [*rng.uniform(-0.5, 0.5, size=2), 0.6 + rng.normal(scale=0.02)]
    s = mid + half * rng.uniform(-0.5, 0.5, size=(k, n))
    return w_H_b, s, rng.normal(scale=0.3, size=(k, 6)), rng.normal(scale=1.0, size=(k, n))


def shapes(k, n, n_frames):
    """The core's shapes (:func:`kin_dyn_ros.dynamics.horizon.shapes`) of QUANTITIES."""
    return {q: shape for q, shape in horizon.shapes(k, n, n_frames).items() if q in QUANTITIES}


def ours_loop(kd, frames, W, S, NU, SD):
    """(c)/(d): the single-state methods state by state, into (K, ...) arrays."""
    out = {q: np.empty(sh) for q, sh in shapes(len(W), kd.NDoF, len(frames)).items()}
    com, mm, h, g = out["com"], out["mass_matrix"], out["bias_forces"], out["gravity_forces"]
    cmm, jcom, jac, jdnu = (out["centroidal_momentum_matrix"], out["com_jacobian"], out["jacobians"],
                            out["jacobian_dot_nu"])
    for k in range(len(W)):
        H, s, bv, sd = W[k], S[k], NU[k], SD[k]
        mm[k] = kd.mass_matrix(H, s)
        h[k] = kd.bias_force(H, s, bv, sd)
        g[k] = kd.gravity_term(H, s)
        cmm[k] = kd.centroidal_momentum_matrix(H, s)
        com[k] = kd.CoM_position(H, s)
        jcom[k] = kd.CoM_jacobian(H, s)
        for j, f in enumerate(frames):
            jac[k, j] = kd.jacobian(f, H, s)
            jdnu[k, j] = kd.jacobian_dot_nu(f, H, s, bv, sd)
    return out


def pin_loop(P, fids, Q, V):
    """(b): Pinocchio state by state, into (K, ...) arrays in its own conventions (joint order);
    crba's upper triangle mirrored after the loop for the K states at once (per state,
    ``np.triu(M) + np.triu(M, 1).T`` costs ~20 us on iCub, a third of Pinocchio's loop)."""
    model, data, LOCAL = P.model, P.data, pin.LOCAL
    k_states, nv = len(Q), model.nv
    out = {q: np.empty(sh) for q, sh in shapes(k_states, nv - 6, len(fids)).items()}
    com, mm, h, g = out["com"], out["mass_matrix"], out["bias_forces"], out["gravity_forces"]
    cmm, jcom, jac, jdnu = (out["centroidal_momentum_matrix"], out["com_jacobian"], out["jacobians"],
                            out["jacobian_dot_nu"])
    a0 = np.zeros(nv)
    upper = np.triu_indices(nv, 1)
    for k in range(k_states):
        q, v = Q[k], V[k]
        mm[k] = pin.crba(model, data, q)
        h[k] = pin.nonLinearEffects(model, data, q, v)
        g[k] = pin.computeGeneralizedGravity(model, data, q)
        cmm[k] = pin.ccrba(model, data, q, v)
        com[k] = pin.centerOfMass(model, data, q)
        jcom[k] = pin.jacobianCenterOfMass(model, data, q)
        pin.computeJointJacobians(model, data, q)
        for j, fid in enumerate(fids):
            jac[k, j] = pin.getFrameJacobian(model, data, fid, LOCAL)
        pin.forwardKinematics(model, data, q, v, a0)
        for j, fid in enumerate(fids):
            jdnu[k, j] = pin.getFrameAcceleration(model, data, fid, LOCAL).vector
    mm[:, upper[1], upper[0]] = mm[:, upper[0], upper[1]]   # symmetrised, all K at once
    return out


def pin_to_ours(P, out):
    """Pinocchio's (b) arrays in our joint order (BODY_FIXED)."""
    conv = {"com": lambda x: x, "jacobian_dot_nu": lambda x: x,
            "mass_matrix": lambda x: P.P.T @ x @ P.P, "bias_forces": lambda x: x @ P.P,
            "gravity_forces": lambda x: x @ P.P}
    return {q: conv.get(q, lambda x: x @ P.P)(x) for q, x in out.items()}


def max_abs(x, ref):
    return max(float(np.abs(x[q] - ref[q]).max()) for q in ref), max(float(np.abs(ref[q]).max()) for q in ref)


def timed_rows(rows, repeats, rotate=False):
    """{label: (median, min) [us]} of the callables of ``rows`` [(label, fn)], interleaved
    (``rotate``: in an order rotating from one repeat to the next), the collector off."""
    samples = {label: [] for label, _ in rows}
    for _, fn in rows:
        fn()
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for r in range(repeats):
            k = r % len(rows) if rotate else 0
            for label, fn in rows[k:] + rows[:k]:
                t = time.perf_counter()
                fn()
                samples[label].append(time.perf_counter() - t)
    finally:
        if gc_was:
            gc.enable()
    return {label: (1e6 * float(np.median(v)), 1e6 * min(v)) for label, v in samples.items()}


def breakdown(kd, P, frames, fids, batch, Q, V, repeats):
    """Where the time goes, per state: (a) one quantity at a time (and the fixed cost of a
    call, K = 1); (b) each Pinocchio call over the K states; (c) each single-state method."""
    W, S, NU, SD = batch
    K, model, data, LOCAL = len(W), P.model, P.data, pin.LOCAL
    a0 = np.zeros(model.nv)

    def over_states(call):
        def run():
            for k in range(K):
                call(k)
        return run

    def horizon(qs, one=False):
        f = frames if any(q in ("jacobians", "jacobian_dot_nu") for q in qs) else ()
        if one:
            return lambda: kd.dynamics_horizon(W[:1], S[:1], NU[:1], SD[:1], f, quantities=qs)
        return lambda: kd.dynamics_horizon(W, S, NU, SD, f, quantities=qs)

    def pin_frames(k):
        pin.computeJointJacobians(model, data, Q[k])
        for fid in fids:
            pin.getFrameJacobian(model, data, fid, LOCAL)

    def pin_acc(k):
        pin.forwardKinematics(model, data, Q[k], V[k], a0)
        for fid in fids:
            pin.getFrameAcceleration(model, data, fid, LOCAL)

    def args_of(k):
        return W[k], S[k]

    sections = [
        ("(a) dynamics_horizon with one quantity", K,
         [(q, horizon((q,))) for q in QUANTITIES] + [("all", horizon(QUANTITIES))]),
        ("(a) dynamics_horizon, K = 1 (fixed cost of a call)", 1,
         [("com", horizon(("com",), one=True)), ("all", horizon(QUANTITIES, one=True))]),
        ("(b) Pinocchio, each call over the K states", K, [
            ("crba", over_states(lambda k: pin.crba(model, data, Q[k]))),
            ("nonLinearEffects", over_states(lambda k: pin.nonLinearEffects(model, data, Q[k], V[k]))),
            ("computeGeneralizedGravity", over_states(lambda k: pin.computeGeneralizedGravity(model, data, Q[k]))),
            ("ccrba", over_states(lambda k: pin.ccrba(model, data, Q[k], V[k]))),
            ("centerOfMass", over_states(lambda k: pin.centerOfMass(model, data, Q[k]))),
            ("jacobianCenterOfMass", over_states(lambda k: pin.jacobianCenterOfMass(model, data, Q[k]))),
            ("computeJointJacobians + 2 getFrameJacobian", over_states(pin_frames)),
            ("forwardKinematics(q, v, 0) + 2 getFrameAcc.", over_states(pin_acc)),
            ("(np.triu(M) + np.triu(M, 1).T, not in (b))", over_states(
                lambda k: np.triu(data.M) + np.triu(data.M, 1).T))]),
        ("(c) ours, each single-state method over the K states", K, [
            ("mass_matrix", over_states(lambda k: kd.mass_matrix(*args_of(k)))),
            ("bias_force", over_states(lambda k: kd.bias_force(*args_of(k), NU[k], SD[k]))),
            ("gravity_term", over_states(lambda k: kd.gravity_term(*args_of(k)))),
            ("centroidal_momentum_matrix", over_states(lambda k: kd.centroidal_momentum_matrix(*args_of(k)))),
            ("CoM_position", over_states(lambda k: kd.CoM_position(*args_of(k)))),
            ("CoM_jacobian", over_states(lambda k: kd.CoM_jacobian(*args_of(k)))),
            ("jacobian x2", over_states(lambda k: [kd.jacobian(f, *args_of(k)) for f in frames])),
            ("jacobian_dot_nu x2", over_states(
                lambda k: [kd.jacobian_dot_nu(f, *args_of(k), NU[k], SD[k]) for f in frames]))]),
    ]
    print(f"\nbreakdown ({repeats} repeats each), median / min [us]")
    for title, n_states, rows in sections:
        res = timed_rows(rows, repeats)
        print(f"  {title:<48} {'total':>20} {'per state':>18}")
        for label, _ in rows:
            m, lo = res[label]
            print(f"    {label:<46} {m:>10.0f} / {lo:<8.0f} {m / n_states:>8.1f} / {lo / n_states:<8.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=50, help="K, states of the horizon (50)")
    parser.add_argument("--repeats", type=int, default=30, help="samples of each way (30)")
    parser.add_argument("--model", default="icub",
                        help=f"icub (default), {', '.join(NAMED)} or a URDF path (bench/models.py)")
    parser.add_argument("--frames", nargs=2, metavar="FRAME", help="the two frames (default per model)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mixed", action="store_true", help="ours in MIXED (Pinocchio stays LOCAL)")
    parser.add_argument("--check", action="store_true",
                        help="verify (a) against (c), (d) and Pinocchio (max abs difference)")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time dynamics_horizon with one quantity at a time")
    args = parser.parse_args()
    frames = tuple(args.frames or FRAMES.get(args.model, ()))
    if len(frames) != 2:
        parser.error(f"--frames: no default frames for model '{args.model}'")

    text = normalize_axes(model_text(args.model))      # as bench_core: Pinocchio reads it as ours does
    rep = (Representations.MIXED_REPRESENTATION if args.mixed
           else Representations.BODY_FIXED_REPRESENTATION)
    t0 = time.perf_counter()
    kd = KinDynComputations(text, compiled=True)
    kd_np = KinDynComputations(text, compiled=False)
    for x in (kd, kd_np):
        x.set_frame_velocity_representation(rep)
    joints = kd.joints_name_list
    P = Pin(text, joints, kd.model.root_link)
    fids = [P.fid(f) for f in frames]
    K, n = args.states, kd.NDoF
    W, S, NU, SD = horizon_states(text, joints, K, args.seed)
    Q = np.array([P.q(H, s) for H, s in zip(W, S)])
    V = np.concatenate([NU, SD], axis=1) @ P.P.T          # v_pin = P nu (BODY_FIXED nu)

    fns = {"a": lambda: kd.dynamics_horizon(W, S, NU, SD, frames, quantities=QUANTITIES),
           "b": lambda: pin_loop(P, fids, Q, V),
           "c": lambda: ours_loop(kd, frames, W, S, NU, SD),
           "d": lambda: ours_loop(kd_np, frames, W, S, NU, SD)}
    results = {w: fn() for w, fn in fns.items()}          # warm-up: compiles the kernels
    warm = time.perf_counter() - t0
    print(f"{model_label(args.model)}: {n} joints, K = {K} states, frames {', '.join(frames)}; "
          f"ours {'MIXED' if args.mixed else 'BODY_FIXED'}, Pinocchio {pin.__version__} (LOCAL); "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; set-up and warm-up {warm:.1f} s")

    if args.check:
        a = results["a"]
        print("check, max |x - (a)| over all quantities (max |(a)| = %.3g):" % max_abs(a, a)[1])
        print(f"  (c) {max_abs(results['c'], a)[0]:.2e}   (d) {max_abs(results['d'], a)[0]:.2e}"
              + ("" if args.mixed else f"   (b) Pinocchio {max_abs(pin_to_ours(P, results['b']), a)[0]:.2e}"))
        for q in QUANTITIES:
            line = f"    {q:<28} (c) {np.abs(results['c'][q] - a[q]).max():.1e}  (d) {np.abs(results['d'][q] - a[q]).max():.1e}"
            if not args.mixed:
                line += f"  (b) {np.abs(pin_to_ours(P, {q: results['b'][q]})[q] - a[q]).max():.1e}"
            print(line)

    timed = timed_rows([(w, fns[w]) for w in WAYS], args.repeats, rotate=True)
    med = {w: timed[w][0] for w in WAYS}
    low = {w: timed[w][1] for w in WAYS}
    print(f"\n{args.repeats} repeats, (a) (b) (c) (d) interleaved; median / min [us]")
    print(f"  {'way':<48} {'K states':>20} {'per state':>18}")
    for w in WAYS:
        print(f"  {LABELS[w]:<48} {med[w]:>10.0f} / {low[w]:<8.0f} {med[w] / K:>8.1f} / {low[w] / K:<8.1f}")

    def ratio(x, y, target=None, above=False):
        rm, rl = med[x] / med[y], low[x] / low[y]
        verdict = ""
        if target is not None:
            ok = rm >= target if above else rm <= target
            verdict = f"   target {'>=' if above else '<='} {target:g}x: {'met' if ok else 'MISSED'}"
        return f"{rm:6.2f}x median, {rl:6.2f}x min{verdict}"

    print("ratios (of the medians, and of the minima):")
    print(f"  (a)/(b) ours batch / Pinocchio loop      {ratio('a', 'b', 2.0)}")
    print(f"  (c)/(a) ours loop / ours batch           {ratio('c', 'a', 10.0, above=True)}")
    print(f"  (d)/(a) ours NumPy loop / ours batch     {ratio('d', 'a')}")

    if args.breakdown:
        breakdown(kd, P, frames, fids, (W, S, NU, SD), Q, V, max(5, args.repeats // 2))


if __name__ == "__main__":
    main()
