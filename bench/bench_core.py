#!/usr/bin/env python3
"""Benchmark of ``kin_dyn_ros.dynamics`` against Pinocchio, iDynTree and adam (NumPy backend).

One process, one run: every call of the core's public API is timed side by side with the
equivalent call of each reference library on iCubGazeboV2_5 (all 32 joints, same joint
order everywhere), after checking that the libraries return the same numbers as ours for
that call at the benchmark state.  Then the per-tick call (``compute_tick``) against each
library's equivalent set, and the growth of the per-tick cost with the number of joints
on generated trees.

Timing: ``timeit`` (garbage collector off while timing), each library calibrated to about
``--target-ms`` per sample, samples interleaved across libraries (round robin, rotating
order), and the minimum (best estimate on a busy machine) and median of the samples
reported.  Inputs are prepared once in each library's native form (Pinocchio's q with a
quaternion and its own joint order, iDynTree's frame indices); what a library must do per
call (iDynTree's ``setRobotState``, building Pinocchio's ``fext``) is inside the timing.

With ``--model URDF`` (repeatable; a path or g1, talos, talos_reduced of example-robot-data, see
bench/models.py) the per-tick call is also timed against Pinocchio on that robot, in the same
interleaved passes, and a table gives every robot's ratio against issue 22's targets (<= 2.5x
Pinocchio on iCub, <= 4x on the others). The growth table ends with the fitted exponent of the
per-tick time against the number of joints.

Run:  python bench/bench_core.py [--quick] [--markdown] [--model g1 --model talos]
"""

import argparse
import importlib.metadata
import os
import pathlib
import platform
import statistics
import sys
import time
import timeit
import xml.etree.ElementTree as ET

# BLAS threads: 1 unless the caller set them. The core solves with NumPy/LAPACK on small matrices;
# OpenBLAS's worker threads then only cost (measured on a busy 2-core machine: the 128-joint tick
# went from ~0.55 ms to 1-16 ms). Must happen before NumPy is imported.
_BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_BLAS_USER = {v: os.environ[v] for v in _BLAS_VARS if v in os.environ}
if not _BLAS_USER:
    for _v in _BLAS_VARS:
        os.environ[_v] = "1"

import numpy as np  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import icub_models  # noqa: E402
import idyntree.swig as idt  # noqa: E402
import pinocchio as pin  # noqa: E402
from adam.core.constants import Representations as AdamRep  # noqa: E402
from adam.numpy import KinDynComputations as AdamKinDyn  # noqa: E402

from kin_dyn_ros.dynamics import KinDynComputations, Representations  # noqa: E402
sys.path.insert(0, str(REPO / "test" / "support"))  # random_tree: test support, not installed
from random_tree import random_tree_urdf  # noqa: E402
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from models import NAMED, model_label, model_path, model_text  # noqa: E402  (bench/models.py)

GRAVITY = np.array([0.0, 0.0, -9.80665])
# issue 22: compute_tick within these multiples of Pinocchio's time for the same set
TICK_TARGET_ICUB, TICK_TARGET_OTHER = 2.5, 4.0
RTOL = 1e-9  # agreement: max|ours - ref| <= RTOL * max|ref|
ICUB = "iCubGazeboV2_5"
FRAME = "l_sole"  # frame of the single-frame calls (a fixed-joint child at the end of a leg)
FEET = ("l_sole", "r_sole")  # frames receiving the two external wrenches
LIBS = ("ours", "ours_mixed", "pin", "idt", "adam", "kernel")


# ----------------------------------------------------------------------------- helpers


def machine_info():
    cpu = "unknown"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def version(dist):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "?"

    load = "n/a"
    if hasattr(os, "getloadavg"):
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        ("platform", platform.platform()),
        ("cpu", f"{cpu} ({os.cpu_count()} logical cores)"),
        ("load average (1/5/15 min)", load),
        ("python", platform.python_version()),
        ("numpy", np.__version__),
        ("BLAS threads", ", ".join(f"{k}={v}" for k, v in _BLAS_USER.items()) + " (set by the caller)"
         if _BLAS_USER else "1 (set by this script; export OPENBLAS_NUM_THREADS to override)"),
        ("pinocchio", pin.__version__),
        ("idyntree", version("idyntree")),
        ("adam-robotics", version("adam-robotics")),
        ("icub-models", version("icub-models")),
    ]


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def wrench_transform(a_H_b):
    """(6, 6) X* mapping a wrench [f; tau] about b's origin in b's axes to a's origin and axes."""
    R, p = a_H_b[:3, :3], a_H_b[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[3:, 3:] = R
    X[3:, :3] = skew(p) @ R
    return X


def random_rotation(rng):
    w, x, y, z = rng.normal(size=4) / 1.0
    n = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def normalize_axes(urdf_text):
    """URDF text with unit joint axes (random_tree_urdf writes non-unit ones on purpose)."""
    root = ET.fromstring(urdf_text)
    for joint in root.iter("joint"):
        axis = joint.find("axis")
        if joint.get("type") in ("revolute", "continuous", "prismatic") and axis is not None and axis.get("xyz"):
            a = np.array([float(x) for x in axis.get("xyz").split()])
            axis.set("xyz", " ".join(format(x, ".17g") for x in a / np.linalg.norm(a)))
    return ET.tostring(root, encoding="unicode")


def joint_limits(urdf_text, joints):
    by_name = {j.get("name"): j for j in ET.fromstring(urdf_text).iter("joint")}
    lo, hi = [], []
    for name in joints:
        lim = by_name[name].find("limit")
        if lim is not None and lim.get("lower") is not None and lim.get("upper") is not None:
            lo.append(float(lim.get("lower")))
            hi.append(float(lim.get("upper")))
        else:
            lo.append(-np.pi)
            hi.append(np.pi)
    return np.array(lo), np.array(hi)


def make_state(urdf_text, joints, seed):
    rng = np.random.default_rng(seed)
    n = len(joints)
    w_H_b = np.eye(4)
    w_H_b[:3, :3] = random_rotation(rng)
    w_H_b[:3, 3] = rng.uniform(-1.0, 1.0, size=3)
    lo, hi = joint_limits(urdf_text, joints)
    return dict(
        w_H_b=w_H_b, s=rng.uniform(lo, hi), base_vel=rng.normal(size=6), s_dot=rng.normal(size=n),
        base_acc=rng.normal(size=6), s_ddot=rng.normal(size=n), tau=rng.normal(scale=5.0, size=n),
        wrenches=[rng.normal(scale=50.0, size=6) for _ in range(2)],
    )


def rel_err(ours, ref):
    """max|ours - ref| / max|ref| (inf on a shape mismatch)."""
    ours, ref = np.asarray(ours, float), np.asarray(ref, float)
    if ours.shape != ref.shape:
        return np.inf
    scale = float(np.abs(ref).max()) if ref.size else 1.0
    return float(np.abs(ours - ref).max()) / (scale if scale > 0 else 1.0)


def rel_err_many(pairs):
    return max(rel_err(a, b) for a, b in pairs)


# ----------------------------------------------------------------------------- timing


def calibrate(fn, target_s, max_number):
    """Calls per sample so that one sample takes about target_s."""
    fn()  # warm-up (caches, lazy imports)
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    if one > target_s / 3:
        return 1
    number = max(1, int(target_s / one))
    # refine on a short burst
    t = timeit.timeit(fn, number=min(number, 50)) / min(number, 50)
    return int(min(max_number, max(1, target_s / max(t, 1e-7))))


class Timer:
    """Timing of rows of {lib: fn}: every row is calibrated when added, then `run` takes the
    samples in `passes` passes over all rows (so a busy spell of the machine spreads over
    every row instead of spoiling one), libraries interleaved in rotating order inside a row."""

    def __init__(self, opts):
        self.opts = opts
        self.rows = []

    def add(self, fns):
        row = dict(fns=fns, numbers={}, samples={lib: [] for lib in fns})
        for lib, fn in fns.items():
            slow = lib == "adam"
            row["numbers"][lib] = calibrate(fn, self.opts.adam_target if slow else self.opts.target,
                                            1 if slow else 10**6)
        self.rows.append(row)
        return row

    def run(self, progress=None):
        o = self.opts
        for p in range(o.passes):
            for row in self.rows:
                order = list(row["fns"])
                for r in range(o.repeats):
                    order = order[1:] + order[:1]  # no library always runs right after another
                    for lib in order:
                        if lib == "adam" and r >= o.adam_repeats:
                            continue
                        n = row["numbers"][lib]
                        row["samples"][lib].append(timeit.repeat(row["fns"][lib], number=n, repeat=1)[0] / n)
            if progress:
                progress(f"timing pass {p + 1}/{o.passes}")

    @staticmethod
    def result(row):
        """{lib: (min_s, median_s, n_samples)}."""
        return {lib: (min(v), statistics.median(v), len(v)) for lib, v in row["samples"].items() if v}


# ----------------------------------------------------------------------------- the libraries


class Pin:
    """Pinocchio with a free-flyer root (BODY_FIXED base velocity), joints mapped by name."""

    def __init__(self, urdf_text, joints, root_link):
        self.model = pin.buildModelFromXML(urdf_text, pin.JointModelFreeFlyer())
        self.model.gravity.linear = GRAVITY  # Pinocchio's default is -9.81
        self.data = self.model.createData()
        self.model0 = pin.Model(self.model)  # zero gravity: coriolis_term
        self.model0.gravity = pin.Motion.Zero()
        self.data0 = self.model0.createData()
        nv = self.model.nv
        assert nv == 6 + len(joints), (nv, len(joints))
        self.P = np.zeros((nv, nv))  # v_pin = P nu_ours
        self.P[:6, :6] = np.eye(6)
        self.q_index = []
        for k, name in enumerate(joints):
            jm = self.model.joints[self.model.getJointId(name)]
            assert jm.nv == 1 and jm.nq == 1, f"{name}: only 1-dof joints with nq == 1"
            self.P[jm.idx_v, 6 + k] = 1.0
            self.q_index.append(jm.idx_q)
        self.q_index = np.array(self.q_index)
        rf = self.fid(root_link)
        assert self.model.frames[rf].parentJoint == 1
        assert np.allclose(self.model.frames[rf].placement.homogeneous, np.eye(4), atol=0)
        self.fext = pin.StdVec_Force()
        for _ in range(self.model.njoints):
            self.fext.append(pin.Force.Zero())

    def fid(self, frame):
        assert self.model.existFrame(frame, pin.BODY), frame
        return self.model.getFrameId(frame, pin.BODY)

    def q(self, w_H_b, s):
        q = np.zeros(self.model.nq)
        q[:3] = w_H_b[:3, 3]
        q[3:7] = pin.Quaternion(w_H_b[:3, :3]).coeffs()
        q[self.q_index] = s
        return q

    def vec(self, x):  # Pinocchio's generalized vector -> ours (BODY_FIXED)
        return self.P.T @ x

    def cols(self, J):
        return J @ self.P

    def square(self, M):
        return self.P.T @ M @ self.P

    def wrench_targets(self, frames):
        """[(joint id, jMf)] for frames receiving F-frame wrenches."""
        out = []
        for f in frames:
            fr = self.model.frames[self.fid(f)]
            out.append((fr.parentJoint, fr.placement))
        return out

    def make_fext(self, targets, wrenches):
        """Pinocchio's fext (joint frames) for wrenches given about each frame's origin, in its axes."""
        fext = self.fext
        touched = {}
        for (j, jMf), w in zip(targets, wrenches):
            f = jMf.act(pin.Force(w))
            touched[j] = touched[j] + f if j in touched else f
        for j, f in touched.items():  # always the same joints for a given `targets`
            fext[j] = f
        return fext


class IDyn:
    """iDynTree KinDynComputations on the reduced model of `joints`, BODY_FIXED."""

    def __init__(self, urdf_text, joints, root_link, rep=idt.BODY_FIXED_REPRESENTATION):
        loader = idt.ModelLoader()
        assert loader.loadReducedModelFromString(urdf_text, list(joints))
        self.kd = idt.KinDynComputations()
        assert self.kd.loadRobotModel(loader.model())
        assert self.kd.setFloatingBase(root_link)
        assert self.kd.setFrameVelocityRepresentation(rep)
        model = self.kd.model()
        self.model = model
        self.n = len(joints)
        for k, name in enumerate(joints):
            assert model.getJoint(model.getJointIndex(name)).getDOFsOffset() == k, name
        self.ext = idt.LinkWrenches(model)
        self.ext.zero()
        self.gen = idt.FreeFloatingGeneralizedTorques(model)
        self.base_frame = self.kd.getFrameIndex(root_link)

    def frame(self, name):
        i = self.kd.getFrameIndex(name)
        assert i >= 0, name
        return i

    def wrench_targets(self, frames):
        """[(link index, link_X*_frame)] for wrenches given about each frame's origin, in its axes."""
        out = []
        for f in frames:
            fi = self.frame(f)
            li = self.model.getFrameLink(fi)
            l_H_f = self.model.getFrameTransform(fi).asHomogeneousTransform().toNumPy()
            out.append((li, wrench_transform(l_H_f)))
        return out

    def set_ext(self, targets, wrenches):
        acc = {}
        for (li, X), w in zip(targets, wrenches):
            acc[li] = acc.get(li, 0.0) + X @ w
        for li, w in acc.items():
            self.ext[li] = idt.Wrench.FromPython(w)
        return self.ext


# ----------------------------------------------------------------------------- iCub: standalone calls


def make_adam(urdf_text, joints):
    adam = AdamKinDyn(urdf_text, joints, gravity=np.concatenate([GRAVITY, np.zeros(3)]))
    adam.set_frame_velocity_representation(AdamRep.BODY_FIXED_REPRESENTATION)
    return adam


def build_icub():
    """Every library on the same axis-normalized iCub URDF text (see `axis_note`)."""
    path = pathlib.Path(icub_models.get_model_file(ICUB))
    raw = path.read_text()
    text = normalize_axes(raw)
    ours = KinDynComputations(text)
    ours.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
    ours_m = KinDynComputations(text)  # MIXED (the default): timing column only
    joints = ours.joints_name_list
    root = ours.model.root_link
    return (raw, text, joints, root, ours, ours_m, Pin(text, joints, root), IDyn(text, joints, root),
            make_adam(text, joints))


def axis_note(icub, st):
    """iCub's URDF has joint axes of norm 1 + 1.6e-7; URDF axes are unit vectors by definition.
    Ours, Pinocchio and iDynTree normalize them, adam uses them as written: one line on the
    effect, measured (adam on the raw file vs ours)."""
    raw, text, joints, root, ours, ours_m, P, I, adam = icub
    off = []
    for j in ET.fromstring(raw).iter("joint"):
        axis = j.find("axis")
        if j.get("type") != "fixed" and axis is not None and axis.get("xyz"):
            norm = np.linalg.norm([float(x) for x in axis.get("xyz").split()])
            if abs(norm - 1.0) > 1e-12:
                off.append((j.get("name"), norm - 1.0))
    if not off:
        return "iCub URDF: every joint axis is a unit vector."
    H, s = st["w_H_b"], st["s"]
    adam_raw = make_adam(raw, joints)
    ours_raw = KinDynComputations(raw)
    ours_raw.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
    m_ref = ours.mass_matrix(H, s)
    return (f"iCub URDF: {len(off)} joint axes are not unit vectors ({', '.join(n for n, _ in off)}: "
            f"norm - 1 = {max(abs(d) for _, d in off):.1e}); ours, Pinocchio and iDynTree normalize them, "
            f"adam does not. Every library is therefore given the axis-normalized text. On the raw file: "
            f"mass_matrix ours(raw) vs ours {rel_err(ours_raw.mass_matrix(H, s), m_ref):.1e}, "
            f"adam(raw) vs ours {rel_err(adam_raw.mass_matrix(H, s), m_ref):.1e}.")


def standalone_cases(icub, st):
    """[(call, {lib: fn}, {lib: (fn -> array for the agreement check)})] on iCub, BODY_FIXED."""
    raw, text, joints, root, ours, ours_m, P, I, adam = icub
    n = len(joints)
    H, s, bv, sd = st["w_H_b"], st["s"], st["base_vel"], st["s_dot"]
    ba, sdd, tau = st["base_acc"], st["s_ddot"], st["tau"]
    nu, nu_dot = np.concatenate([bv, sd]), np.concatenate([ba, sdd])
    wl, wr = st["wrenches"]
    ext = {FEET[0]: wl, FEET[1]: wr}
    model, data, model0, data0 = P.model, P.data, P.model0, P.data0
    q = P.q(H, s)
    q_rel = P.q(np.eye(4), s)
    v, a = P.P @ nu, P.P @ nu_dot
    tau_pin = P.P @ np.concatenate([np.zeros(6), tau])
    fid = P.fid(FRAME)
    pin_targets = P.wrench_targets(FEET)
    kd = I.kd
    fi = I.frame(FRAME)
    idt_targets = I.wrench_targets(FEET)
    zeros3 = np.zeros(3)
    R = H[:3, :3]

    def idt_set(gravity=GRAVITY):
        kd.setRobotState(H, s, bv, sd, gravity)

    def idt_mat(getter, rows, cols):
        out = idt.MatrixDynSize(rows, cols)

        def f():
            idt_set()
            getter(out)
            return out.toNumPy()
        return f

    def idt_vec(getter, gravity=GRAVITY):
        out = np.zeros(6 + n)

        def f():
            idt_set(gravity)
            getter(out)
            return out
        return f

    # --- Pinocchio
    def pin_fk():
        pin.forwardKinematics(model, data, q)
        return pin.updateFramePlacement(model, data, fid).homogeneous

    def pin_jdot():
        pin.computeJointJacobiansTimeVariation(model, data, q, v)
        pin.updateFramePlacement(model, data, fid)
        return pin.getFrameJacobianTimeVariation(model, data, fid, pin.LOCAL)

    def pin_rnea():
        fext = P.make_fext(pin_targets, (wl, wr))
        return pin.rnea(model, data, q, v, a, fext)

    def pin_aba():
        fext = P.make_fext(pin_targets, (wl, wr))
        return pin.aba(model, data, q, v, tau_pin, fext)

    # --- iDynTree
    def idt_fk():
        idt_set()
        return kd.getWorldTransform(fi).asHomogeneousTransform().toNumPy()

    J_rel = idt.MatrixDynSize(6, n)

    def idt_rel_jac():
        kd.setRobotState(np.eye(4), s, bv, sd, GRAVITY)
        kd.getRelativeJacobian(I.base_frame, fi, J_rel)
        return J_rel.toNumPy()

    def idt_com():
        idt_set()
        return kd.getCenterOfMassPosition().toNumPy()

    M_buf = idt.MatrixDynSize(6 + n, 6 + n)
    C_buf = idt.MatrixDynSize(6 + n, 6 + n)
    Md_buf = idt.MatrixDynSize(6 + n, 6 + n)

    def idt_rnea():
        idt_set()
        kd.inverseDynamics(ba, sdd, I.set_ext(idt_targets, (wl, wr)), I.gen)
        return np.concatenate([I.gen.baseWrench().toNumPy(), I.gen.jointTorques().toNumPy()])

    def idt_aba():  # no forward dynamics in iDynTree: M \ ([0; tau] - rnea(nu_dot = 0, fext))
        idt_set()
        kd.getFreeFloatingMassMatrix(M_buf)
        kd.inverseDynamics(np.zeros(6), np.zeros(n), I.set_ext(idt_targets, (wl, wr)), I.gen)
        h = np.concatenate([I.gen.baseWrench().toNumPy(), I.gen.jointTorques().toNumPy()])
        rhs = -h
        rhs[6:] += tau
        return np.linalg.solve(M_buf.toNumPy(), rhs)

    def idt_cor_mat():
        idt_set()
        kd.getCoriolisAndMassMatrices(C_buf, M_buf, Md_buf)
        return C_buf.toNumPy()

    def idt_minv():
        idt_set()
        kd.getFreeFloatingMassMatrix(M_buf)
        return np.linalg.inv(M_buf.toNumPy())

    # --- adam composites for calls it lacks
    def adam_rnea():  # adam has no RNEA with accelerations: M nu_dot + h - sum J^T w
        out = adam.mass_matrix(H, s) @ nu_dot + adam.bias_force(H, s, bv, sd)
        for f, w in ext.items():
            out = out - adam.jacobian(f, H, s).T @ w
        return out

    # --- converters: each library's output -> ours (BODY_FIXED, our joint order)
    ident = (lambda x: x)
    bd_R = np.kron(np.eye(2), R)

    bare = bare_kernels(ours, st, FRAME, ext)
    cases = [
        ("forward_kinematics",
         dict(ours=lambda: ours.forward_kinematics(FRAME, H, s),
              ours_mixed=lambda: ours_m.forward_kinematics(FRAME, H, s),
              pin=pin_fk, idt=idt_fk, adam=lambda: adam.forward_kinematics(FRAME, H, s)),
         dict(pin=ident, idt=ident, adam=ident)),
        ("jacobian",
         dict(ours=lambda: ours.jacobian(FRAME, H, s), ours_mixed=lambda: ours_m.jacobian(FRAME, H, s),
              pin=lambda: pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL),
              idt=idt_mat(lambda o: kd.getFrameFreeFloatingJacobian(fi, o), 6, 6 + n),
              adam=lambda: adam.jacobian(FRAME, H, s)),
         dict(pin=P.cols, idt=ident, adam=ident)),
        ("relative_jacobian",
         dict(ours=lambda: ours.relative_jacobian(FRAME, s), ours_mixed=lambda: ours_m.relative_jacobian(FRAME, s),
              pin=lambda: pin.computeFrameJacobian(model, data, q_rel, fid, pin.LOCAL),
              idt=idt_rel_jac, adam=lambda: adam.relative_jacobian(FRAME, s)),
         dict(pin=lambda J: P.cols(J)[:, 6:], idt=ident, adam=ident)),
        ("jacobian_dot",
         dict(ours=lambda: ours.jacobian_dot(FRAME, H, s, bv, sd),
              ours_mixed=lambda: ours_m.jacobian_dot(FRAME, H, s, bv, sd),
              pin=pin_jdot, adam=lambda: adam.jacobian_dot(FRAME, H, s, bv, sd)),
         dict(pin=P.cols, adam=ident)),
        ("CoM_position",
         dict(ours=lambda: ours.CoM_position(H, s), ours_mixed=lambda: ours_m.CoM_position(H, s),
              pin=lambda: pin.centerOfMass(model, data, q), idt=idt_com, adam=lambda: adam.CoM_position(H, s)),
         dict(pin=ident, idt=ident, adam=ident)),
        ("CoM_jacobian",
         dict(ours=lambda: ours.CoM_jacobian(H, s), ours_mixed=lambda: ours_m.CoM_jacobian(H, s),
              pin=lambda: pin.jacobianCenterOfMass(model, data, q),
              idt=idt_mat(kd.getCenterOfMassJacobian, 3, 6 + n), adam=lambda: adam.CoM_jacobian(H, s)),
         dict(pin=P.cols, idt=ident, adam=ident)),
        ("mass_matrix",
         dict(ours=lambda: ours.mass_matrix(H, s), ours_mixed=lambda: ours_m.mass_matrix(H, s),
              pin=lambda: pin.crba(model, data, q),
              idt=idt_mat(kd.getFreeFloatingMassMatrix, 6 + n, 6 + n), adam=lambda: adam.mass_matrix(H, s)),
         # Pinocchio's crba fills the upper triangle only
         dict(pin=lambda M: P.square(np.triu(M) + np.triu(M, 1).T), idt=ident, adam=ident)),
        ("centroidal_momentum_matrix",
         dict(ours=lambda: ours.centroidal_momentum_matrix(H, s),
              ours_mixed=lambda: ours_m.centroidal_momentum_matrix(H, s),
              pin=lambda: pin.computeCentroidalMap(model, data, q),
              idt=idt_mat(kd.getCentroidalTotalMomentumJacobian, 6, 6 + n),
              adam=lambda: adam.centroidal_momentum_matrix(H, s)),
         # iDynTree's and adam's BODY_FIXED momentum is in base axes (G[B]); ours world axes (G[A])
         dict(pin=P.cols, idt=lambda G: bd_R @ G, adam=lambda G: bd_R @ G)),
        ("bias_force",
         dict(ours=lambda: ours.bias_force(H, s, bv, sd), ours_mixed=lambda: ours_m.bias_force(H, s, bv, sd),
              pin=lambda: pin.nonLinearEffects(model, data, q, v),
              idt=idt_vec(kd.generalizedBiasForces), adam=lambda: adam.bias_force(H, s, bv, sd)),
         dict(pin=P.vec, idt=ident, adam=ident)),
        ("coriolis_term",
         dict(ours=lambda: ours.coriolis_term(H, s, bv, sd), ours_mixed=lambda: ours_m.coriolis_term(H, s, bv, sd),
              pin=lambda: pin.nonLinearEffects(model0, data0, q, v),
              idt=idt_vec(kd.generalizedBiasForces, zeros3), adam=lambda: adam.coriolis_term(H, s, bv, sd)),
         dict(pin=P.vec, idt=ident, adam=ident)),
        ("gravity_term",
         dict(ours=lambda: ours.gravity_term(H, s), ours_mixed=lambda: ours_m.gravity_term(H, s),
              pin=lambda: pin.computeGeneralizedGravity(model, data, q),
              idt=idt_vec(kd.generalizedGravityForces), adam=lambda: adam.gravity_term(H, s)),
         dict(pin=P.vec, idt=ident, adam=ident)),
        ("rnea (2 wrenches)",
         dict(ours=lambda: ours.rnea(H, s, bv, sd, ba, sdd, ext),
              ours_mixed=lambda: ours_m.rnea(H, s, bv, sd, ba, sdd, ext),
              pin=pin_rnea, idt=idt_rnea, adam=adam_rnea),
         dict(pin=P.vec, idt=ident, adam=ident)),
        ("aba (2 wrenches)",
         dict(ours=lambda: ours.aba(H, s, bv, sd, tau, ext), ours_mixed=lambda: ours_m.aba(H, s, bv, sd, tau, ext),
              pin=pin_aba, idt=idt_aba, adam=lambda: adam.aba(H, s, bv, sd, tau, ext)),
         dict(pin=P.vec, idt=ident, adam=ident)),
        ("coriolis_matrix",
         dict(ours=lambda: ours.coriolis_matrix(H, s, bv, sd), ours_mixed=lambda: ours_m.coriolis_matrix(H, s, bv, sd),
              pin=lambda: pin.computeCoriolisMatrix(model, data, q, v), idt=idt_cor_mat),
         dict(pin=P.square, idt=ident)),
        ("inverse_mass_matrix",
         dict(ours=lambda: ours.inverse_mass_matrix(H, s), ours_mixed=lambda: ours_m.inverse_mass_matrix(H, s),
              pin=lambda: pin.computeMinverse(model, data, q), idt=idt_minv,
              adam=lambda: np.linalg.inv(adam.mass_matrix(H, s))),
         # computeMinverse fills the upper triangle only
         dict(pin=lambda M: P.square(np.triu(M) + np.triu(M, 1).T), idt=ident, adam=ident)),
    ]
    for call, fns, _ in cases:
        if call in bare:
            fns["kernel"] = bare[call]
            check_bare(call, bare[call](), np.asarray(fns["ours"](), dtype=float))
    return cases


def check_bare(call, out, ours):
    """Exit unless the kernel's ``out`` (whole_body's: the CoM (3) first) holds ``ours``."""
    got = out.ravel()
    got = got[:3] if call == "CoM_position" else got[3:] if got.size == ours.size + 3 else got
    if got.shape != ours.ravel().shape or np.abs(got - ours.ravel()).max() \
            > 1e-12 * max(1.0, np.abs(ours).max()):
        sys.exit(f"bench_core: {call}: the kernel called straight does not give ours' answer")


def bare_kernels(ours, st, frame, wrenches):
    """{standalone call: fn}: the compiled kernel of each call of ``ours`` (BODY_FIXED) called
    straight, its arguments made once: numba's dispatch and the kernel, no Python of ours
    around them (what no Python wrapper can go below). {} on the NumPy core."""
    jit = ours._jit
    if jit is None:
        return {}
    k, mf, mi, rep = jit.k, jit.mf, jit.mi, int(ours.rep)
    H, s, bv, sd, ba, sdd, tau = (np.ascontiguousarray(st[key], dtype=float) for key in (
        "w_H_b", "s", "base_vel", "s_dot", "base_acc", "s_ddot", "tau"))
    e, zero6, zero_n = np.empty(0), np.zeros(6), np.zeros(len(s))
    index = ours.model.frame_index
    ext = (np.array([index[f] for f in wrenches], dtype=np.int64),
           np.ascontiguousarray(np.array(list(wrenches.values()), dtype=float)))
    no_ext = (np.empty(0, dtype=np.int64), np.empty((0, 6)))

    def bare(kernel, *args):
        """The call, returning the kernel's output array (its last argument)."""
        out = args[-1]

        def call():
            kernel(*args)
            return out
        return call

    def whole(what, state=(e, e, e, e, e), gravity=True, external=no_ext):
        want, length, _ = jit._whole[what]
        return bare(k.whole_body, mf, mi, rep, want, H, s, *state, gravity, *external,
                    np.empty(length))

    def at_frame(what, state=(e, e), pose=H):
        want, length, _ = jit._frame[what]
        return bare(k.frame_query, mf, mi, rep, want, index[frame], pose, s, *state,
                    np.empty(length))

    n = len(s)
    return {"forward_kinematics": at_frame("pose"), "jacobian": at_frame("jacobian"),
            "relative_jacobian": at_frame("relative", pose=np.eye(4)),
            "jacobian_dot": at_frame("jacobian_dot", (bv, sd)),
            "CoM_position": whole("com"), "CoM_jacobian": whole("com_jacobian"),
            "mass_matrix": whole("mass"), "centroidal_momentum_matrix": whole("cmm"),
            "bias_force": whole("rnea", (bv, sd, zero6, zero_n, e)),
            "coriolis_term": whole("rnea", (bv, sd, zero6, zero_n, e), gravity=False),
            "gravity_term": whole("gravity"),
            "rnea (2 wrenches)": whole("rnea", (bv, sd, ba, sdd, e), external=ext),
            "aba (2 wrenches)": whole("aba", (bv, sd, e, e, tau), external=ext),
            "coriolis_matrix": bare(k.coriolis, mf, mi, rep, H, s, bv, sd,
                                    np.empty((6 + n, 6 + n))),
            "inverse_mass_matrix": whole("minv")}


# composites (the library has no such call; what a user of it would write), shown with '*'
COMPOSITE = {
    ("rnea (2 wrenches)", "adam"): "mass_matrix @ nu_dot + bias_force - sum jacobian^T w",
    ("aba (2 wrenches)", "idt"): "solve(M, [0; tau] - inverseDynamics(nu_dot = 0, fext))",
    ("inverse_mass_matrix", "idt"): "inv(getFreeFloatingMassMatrix)",
    ("inverse_mass_matrix", "adam"): "inv(mass_matrix)",
}
NOTES = {
    ("relative_jacobian", "idt"): "getRelativeJacobian(root_link, frame)",
    ("jacobian_dot", "pin"): "computeJointJacobiansTimeVariation + getFrameJacobianTimeVariation(LOCAL)",
    ("mass_matrix", "pin"): "crba: upper triangle only",
    ("inverse_mass_matrix", "pin"): "computeMinverse: upper triangle only",
    ("coriolis_term", "pin"): "nonLinearEffects on a zero-gravity copy of the model",
    ("centroidal_momentum_matrix", "idt"): "compared after rotating its base-axes momentum (G[B]) to world axes",
    ("centroidal_momentum_matrix", "adam"): "compared after rotating its base-axes momentum (G[B]) to world axes",
    ("coriolis_matrix", "idt"): "getCoriolisAndMassMatrices (also computes M and Mdot)",
}


FD_DT = 1e-5


def finite_difference_checks(icub, st):
    """jacobian_dot and coriolis_matrix are defined through time derivatives (Jdot = d/dt J,
    C + C^T = d/dt M): compare every library with central differences of our J and M along
    the motion (constant body velocity of the base, constant joint velocities), and their
    products with nu (what their users mostly need) with ours."""
    raw, text, joints, root, ours, ours_m, P, I, adam = icub
    n = len(joints)
    H, s, bv, sd = st["w_H_b"], st["s"], st["base_vel"], st["s_dot"]
    nu = np.concatenate([bv, sd])

    def at(t):
        return H @ pin.exp6(bv * t).homogeneous, s + sd * t

    (hp, sp), (hm, sm) = at(FD_DT), at(-FD_DT)
    jdot_fd = (ours.jacobian(FRAME, hp, sp) - ours.jacobian(FRAME, hm, sm)) / (2 * FD_DT)
    mdot_fd = (ours.mass_matrix(hp, sp) - ours.mass_matrix(hm, sm)) / (2 * FD_DT)

    model, data = P.model, P.data
    q, v = P.q(H, s), P.P @ nu
    fid = P.fid(FRAME)
    pin.computeJointJacobiansTimeVariation(model, data, q, v)
    pin.updateFramePlacement(model, data, fid)
    jdot = {"ours": ours.jacobian_dot(FRAME, H, s, bv, sd),
            "pin": P.cols(pin.getFrameJacobianTimeVariation(model, data, fid, pin.LOCAL)),
            "adam": np.asarray(adam.jacobian_dot(FRAME, H, s, bv, sd), float)}
    kd = I.kd
    kd.setRobotState(H, s, bv, sd, GRAVITY)
    idt_bias_acc = kd.getFrameBiasAcc(I.frame(FRAME)).toNumPy()  # iDynTree gives only Jdot nu
    cmat = {"ours": ours.coriolis_matrix(H, s, bv, sd),
            "pin": P.square(pin.computeCoriolisMatrix(model, data, q, v))}
    c_buf, m_buf, md_buf = (idt.MatrixDynSize(6 + n, 6 + n) for _ in range(3))
    kd.getCoriolisAndMassMatrices(c_buf, m_buf, md_buf)
    cmat["idt"] = c_buf.toNumPy()
    cor = ours.coriolis_term(H, s, bv, sd)
    jdot_nu = jdot["ours"] @ nu

    def row(label, values):
        return [label] + [f"{values[lib]:.1e}" if lib in values else "n/a" for lib in ("ours", "pin", "idt", "adam")]

    return [
        row("jacobian_dot vs d/dt jacobian", {k: rel_err(j, jdot_fd) for k, j in jdot.items()}),
        row("jacobian_dot @ nu vs ours", {**{k: rel_err(j @ nu, jdot_nu) for k, j in jdot.items()},
                                           "idt": rel_err(idt_bias_acc, jdot_nu)}),
        row("coriolis_matrix: C + C^T vs d/dt mass_matrix", {k: rel_err(c + c.T, mdot_fd) for k, c in cmat.items()}),
        row("iDynTree's own Mdot (getCoriolisAndMassMatrices) vs d/dt M", {"idt": rel_err(md_buf.toNumPy(), mdot_fd)}),
        row("coriolis_matrix @ nu vs coriolis_term (ours)", {k: rel_err(c @ nu, cor) for k, c in cmat.items()}),
    ]


# ----------------------------------------------------------------------------- the per-tick call


def model_feet(text, frames):
    """Two foot frames of a model for the per-tick wrenches: the demo's guess from the link
    names (kin_dyn_ros.demo.feet), else the first two frames."""
    try:
        from kin_dyn_ros.demo.feet import guess_feet
        return tuple(guess_feet(text))
    except Exception:  # no foot names (an arm) or the demo's module unavailable
        return tuple(frames[:2])


def build_model_tick(name, seed):
    """(label, joints, frames, feet, {variant: {lib: fn}}, check) of ``name`` (a URDF path or a
    name of bench/models.py): ours (BODY_FIXED and MIXED) and Pinocchio on the same
    axis-normalized text, at a random state of that model."""
    text = normalize_axes(model_text(name))
    ours = KinDynComputations(text)
    ours.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
    ours_m = KinDynComputations(text)
    joints = ours.joints_name_list
    P = Pin(text, joints, ours.model.root_link)
    feet = model_feet(text, ours.frame_names)
    st = make_state(text, joints, seed)
    fns, check = tick_functions(ours, ours_m, P, None, joints, st, feet)
    return model_label(name), joints, ours.frame_names, feet, fns, check


def fitted_exponent(ns, ts):
    """k of t ~ c n^k, least squares on log t against log n."""
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def tick_functions(ours, ours_m, P, I, joints, st, feet, idt_all_frames=None):
    """{variant: {lib: fn}} and {lib: fn -> dict of arrays for the agreement check}."""
    n = len(joints)
    H, s, bv, sd, tau = st["w_H_b"], st["s"], st["base_vel"], st["s_dot"], st["tau"]
    wl, wr = st["wrenches"]
    fw = {feet[0]: (feet[0], wl), feet[1]: (feet[1], wr)}  # F/T reading: about the frame, in its axes
    model, data = P.model, P.data
    q = P.q(H, s)
    v = P.P @ np.concatenate([bv, sd])
    tau_pin = P.P @ np.concatenate([np.zeros(6), tau])
    pin_targets = P.wrench_targets(feet)

    def ours_tick():
        r = ours.compute_tick(H, s, bv, sd, tau, fw)
        return r.joint_transforms, r

    def ours_tick_frames():
        r = ours.compute_tick(H, s, bv, sd, tau, fw)
        return r.world_H_frames, r

    def ours_m_tick():
        return ours_m.compute_tick(H, s, bv, sd, tau, fw).joint_transforms

    def ours_m_tick_frames():
        return ours_m.compute_tick(H, s, bv, sd, tau, fw).world_H_frames

    def pin_tick():
        pin.forwardKinematics(model, data, q, v)
        pin.updateFramePlacements(model, data)
        com = pin.centerOfMass(model, data, q, v).copy()
        vcom = data.vcom[0].copy()
        hg = pin.computeCentroidalMomentum(model, data, q, v).vector.copy()
        g = pin.computeGeneralizedGravity(model, data, q).copy()
        fext = P.make_fext(pin_targets, (wl, wr))
        ddq = pin.aba(model, data, q, v, tau_pin, fext)
        return com, vcom, hg, g, ddq

    fns = {
        "compute_tick": dict(ours=ours_tick, ours_mixed=ours_m_tick, pin=pin_tick),
        "compute_tick + world_H_frames": dict(ours=ours_tick_frames, ours_mixed=ours_m_tick_frames, pin=pin_tick),
    }

    if I is not None:
        kd = I.kd
        idt_targets = I.wrench_targets(feet)
        edges = [(I.frame(p), I.frame(c)) for _, p, c in ours.joint_frames]
        M_buf = idt.MatrixDynSize(6 + n, 6 + n)
        g_buf = np.zeros(6 + n)
        com_buf = np.zeros(3)
        vcom_buf = np.zeros(3)

        def idt_common():
            kd.setRobotState(H, s, bv, sd, GRAVITY)
            kd.getCenterOfMassPosition(com_buf)
            kd.getCenterOfMassVelocity(vcom_buf)
            mom = kd.getCentroidalTotalMomentum().toNumPy()
            kd.generalizedGravityForces(g_buf)
            kd.getFreeFloatingMassMatrix(M_buf)
            kd.inverseDynamics(np.zeros(6), np.zeros(n), I.set_ext(idt_targets, (wl, wr)), I.gen)
            h = np.concatenate([I.gen.baseWrench().toNumPy(), I.gen.jointTorques().toNumPy()])
            rhs = -h
            rhs[6:] += tau
            acc = np.linalg.solve(M_buf.toNumPy(), rhs)
            return com_buf.copy(), vcom_buf.copy(), mom, g_buf[6:].copy(), acc

        def idt_tick():
            out = idt_common()
            tf = [kd.getRelativeTransform(p, c).asHomogeneousTransform().toNumPy() for p, c in edges]
            return out, tf

        def idt_tick_frames():
            out = idt_common()
            return out, kd.getWorldTransformsAsHomogeneous(idt_all_frames)

        fns["compute_tick"]["idt"] = idt_tick
        fns["compute_tick + world_H_frames"]["idt"] = idt_tick_frames

    def check():
        """{lib: max relative error} of each library's tick set against ours (BODY_FIXED)."""
        jt, r = ours_tick()
        errs = {}
        com, vcom, hg, g, ddq = pin_tick()
        ddq = P.vec(ddq)
        world = []
        for k, name in enumerate(r.frame_names):
            world.append((r.world_H_frames[k], data.oMf[P.fid(name)].homogeneous))
        errs["pin"] = rel_err_many([
            (r.com, com), (r.com_velocity, vcom), (r.centroidal_momentum, hg),
            (r.gravity_torques, P.vec(g)[6:]), (r.base_acceleration, ddq[:6]),
            (r.joint_accelerations, ddq[6:])] + world)
        if I is not None:
            (icom, ivcom, imom, ig, iacc), tf = idt_tick()
            # iDynTree's BODY_FIXED centroidal momentum is in base axes (G[B]); ours world axes
            imom = np.kron(np.eye(2), H[:3, :3]) @ imom
            (_, _, _, _, _), frames = idt_tick_frames()
            world = [(r.world_H_frames[r.frame_names.index(nm)], np.array(frames[k].toNumPy()))
                     for k, nm in enumerate(idt_all_frames)]
            errs["idt"] = rel_err_many([
                (r.com, icom), (r.com_velocity, ivcom), (r.centroidal_momentum, imom),
                (r.gravity_torques, ig), (r.base_acceleration, iacc[:6]), (r.joint_accelerations, iacc[6:])]
                + list(zip(jt, tf)) + world)
        return errs

    return fns, check


# ----------------------------------------------------------------------------- output


def fmt_us(t):
    if t is None:
        return "n/a"
    us = t * 1e6
    return f"{us:.1f}" if us < 1000 else f"{us:.0f}"


def cell(res, lib, mark=""):
    if lib not in res:
        return "n/a"
    tmin, tmed, _ = res[lib]
    return f"{fmt_us(tmin)} / {fmt_us(tmed)}{mark}"


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "n/a"


def print_table(headers, rows, markdown, title=None):
    if title:
        print(f"\n### {title}\n" if markdown else f"\n== {title} ==")
    if markdown:
        print("| " + " | ".join(headers) + " |")
        print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    line = "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def agrees_cell(errs):
    parts = []
    for lib, short in (("pin", "P"), ("idt", "I"), ("adam", "A")):
        if lib in errs:
            e = errs[lib]
            parts.append(f"{short}:ok" if e <= RTOL else f"{short}:NO({e:.0e})")
    return " ".join(parts) if parts else "-"


TICK_SETS = [
    ("ours", "compute_tick(w_H_b, s, base_vel, s_dot, tau, {l_sole: (l_sole, w), r_sole: (r_sole, w)}): "
             "joint_transforms (32 parent_link_H_child_link), CoM, CoM velocity, centroidal momentum, gravity "
             "torques, forward dynamics; '+ world_H_frames' also reads the 213 link poses (lazy attribute)."),
    ("Pinocchio", "forwardKinematics(q, v) + updateFramePlacements (every frame) + centerOfMass(q, v) + "
                  "computeCentroidalMomentum(q, v) + computeGeneralizedGravity(q) + fext on the two foot joints + "
                  "aba(q, v, tau, fext); the same set in both rows (it always places every frame)."),
    ("iDynTree", "setRobotState + getCenterOfMassPosition/Velocity + getCentroidalTotalMomentum + "
                 "generalizedGravityForces + forward dynamics as solve(M, [0; tau] - inverseDynamics(0, fext)) "
                 "(iDynTree has no ABA); poses: getRelativeTransform(parent, child) for the 32 joints "
                 "(= joint_transforms); '+ world_H_frames': getWorldTransformsAsHomogeneous(all 213 links) "
                 "(one getWorldTransform call per frame is slower)."),
]


def print_notes(items, markdown, title=None):
    if title:
        print(f"\n{title}\n" if markdown else f"\n{title}")
    elif not markdown:
        print()
    for name, text in items:
        print(f"- **{name}**: {text}" if markdown else f"  - {name}: {text}")


# ----------------------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few repetitions (smoke run)")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument("--seed", type=int, default=7, help="seed of the benchmark state")
    ap.add_argument("--model", action="append", default=[], metavar="URDF",
                    help="also time compute_tick against Pinocchio on this robot (a URDF path, "
                    "or g1 (29 joints), talos (44), talos_reduced (32) from example-robot-data: "
                    "bench/models.py); repeatable")
    args = ap.parse_args(argv)
    for name in args.model:
        try:
            found = model_path(name)
        except FileNotFoundError as exc:
            ap.error(f"--model {name}: {exc}")
        if not found.is_file():
            ap.error(f"--model {name}: no such file (a URDF path, or one of {', '.join(NAMED)})")
    opts = argparse.Namespace(
        passes=1 if args.quick else 3, repeats=3 if args.quick else 12, adam_repeats=1 if args.quick else 3,
        target=0.002 if args.quick else 0.008, adam_target=0.0,
    )
    md = args.markdown
    t_start = time.perf_counter()

    def progress(what):
        print(f"  [{time.perf_counter() - t_start:6.1f} s] {what}", file=sys.stderr)

    info = machine_info()
    if md:
        print("| machine | |\n|---|---|")
        for k, v in info:
            print(f"| {k} | {v} |")
    else:
        print("== machine ==")
        for k, v in info:
            print(f"{k:>26}: {v}")
    print(f"\nsamples per library and row: {opts.passes * opts.repeats} (adam {opts.passes * opts.adam_repeats}, "
          f"one call each), each ~{opts.target * 1e3:.0f} ms, taken in {opts.passes} pass(es) over all rows, "
          f"libraries interleaved; times are microseconds per call, 'min / median' over the samples.")

    icub = build_icub()
    raw, text, joints, root, ours, ours_m, P, I, adam = icub
    st = make_state(text, joints, args.seed)
    print(f"model: {ICUB}, {len(joints)} joints, {len(ours.frame_names)} links, base '{root}'; "
          f"single-frame calls on '{FRAME}', wrenches on {FEET}; "
          f"all libraries BODY_FIXED (Pinocchio's free-flyer velocity), "
          f"'ours MIXED' = ours in the default MIXED representation (timing only).")
    print(axis_note(icub, st))
    timer = Timer(opts)

    # ---- standalone calls: agreement now, timing later
    standalone = []
    for call, fns, conv in standalone_cases(icub, st):
        ref = np.asarray(fns["ours"](), float)
        outs = {lib: conv[lib](np.array(fns[lib](), dtype=float)) for lib in conv}
        errs = {lib: rel_err(ref, out) for lib, out in outs.items()}
        vs_pin = {lib: rel_err(out, outs["pin"]) for lib, out in outs.items() if lib != "pin" and "pin" in outs}
        standalone.append((call, errs, vs_pin, timer.add(fns)))
    fd_rows = finite_difference_checks(icub, st)

    # ---- per-tick
    fns, check = tick_functions(ours, ours_m, P, I, joints, st, FEET, idt_all_frames=list(ours.frame_names))
    tick_errs = check()
    ticks = [(variant, timer.add(f)) for variant, f in fns.items()]

    # ---- per-tick on other robots (--model)
    models = []
    for name in args.model:
        label, m_joints, m_frames, m_feet, m_fns, m_check = build_model_tick(name, args.seed)
        models.append((label, len(m_joints), len(m_frames), m_feet, m_check(),
                       timer.add(m_fns["compute_tick"])))

    # ---- cost growth
    growth = []
    for nj in (8, 16, 32, 64, 128):
        tree = normalize_axes(random_tree_urdf(nj, seed=nj, branching=True,
                                               joint_types=("revolute", "prismatic"), n_fixed=4))
        t_ours = KinDynComputations(tree)
        t_ours.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
        t_joints = t_ours.joints_name_list
        t_pin = Pin(tree, t_joints, t_ours.model.root_link)
        t_st = make_state(tree, t_joints, nj)
        f, chk = tick_functions(t_ours, t_ours, t_pin, None, t_joints, t_st, ("frame_000", "frame_001"))
        growth.append((nj, chk(), timer.add({k: f["compute_tick"][k] for k in ("ours", "pin")})))
    progress("agreement checked, rows calibrated")

    timer.run(progress)

    # ---- standalone table
    rows, err_rows, misses = [], [], []
    for call, errs, vs_pin, row in standalone:
        res = Timer.result(row)
        t_ours = res["ours"][0]
        t_pin = res.get("pin", (None,))[0]
        t_adam = res.get("adam", (None,))[0]
        speed = t_adam / t_ours if t_adam else None
        target = "n/a" if speed is None else ("met" if speed >= 100 else "MISSED")
        if target == "MISSED":
            misses.append(call)
        star = {lib: ("*" if (call, lib) in COMPOSITE else "") for lib in LIBS}
        t_kernel = res.get("kernel", (None,))[0]
        rows.append([call, cell(res, "ours"), cell(res, "ours_mixed"), cell(res, "pin", star["pin"]),
                     cell(res, "idt", star["idt"]), cell(res, "adam", star["adam"]),
                     ratio(t_ours, t_pin), cell(res, "kernel"), ratio(t_kernel, t_pin) if t_kernel else "n/a",
                     f"{speed:.0f}" if speed else "n/a", target, agrees_cell(errs)])
        err_rows.append([call] + [f"{errs[lib]:.1e}" if lib in errs else "n/a" for lib in ("pin", "idt", "adam")]
                        + [f"{vs_pin[lib]:.1e}" if lib in vs_pin else "n/a" for lib in ("idt", "adam")])
    headers = ["call", "ours µs", "ours MIXED µs", "Pinocchio µs", "iDynTree µs", "adam µs",
               "ours/pin", "kernel alone µs", "kernel/pin", "adam/ours", ">=100x adam", "agrees"]
    print_table(headers, rows, md, "standalone calls, iCub (min / median µs per call)")
    print_notes([(f"{call}, {lib} (*)", what) for (call, lib), what in COMPOSITE.items()]
                + [(f"{call}, {lib}", what) for (call, lib), what in NOTES.items()], md,
                "(*) composite: the library has no such call, timed as what its user would write. Notes:")
    print_table(["call", "ours vs Pinocchio", "ours vs iDynTree", "ours vs adam", "iDynTree vs Pinocchio",
                 "adam vs Pinocchio"], err_rows, md,
                f"agreement: max|x - ref| / max|ref| (tolerance {RTOL:g}; all BODY_FIXED, our joint order)")
    print_table(["check (BODY_FIXED, iCub)", "ours", "Pinocchio", "iDynTree", "adam"], fd_rows, md,
                "where the libraries disagree: finite differences decide "
                f"(central, dt = {FD_DT:g}; ~1e-10 is the differencing error)")

    # ---- per-tick table
    tick_rows, tick_ratio = [], None
    for variant, row in ticks:
        res = Timer.result(row)
        t_o, t_p = res["ours"][0], res["pin"][0]
        tick_ratio = tick_ratio or t_o / t_p
        tick_rows.append([variant, cell(res, "ours"), cell(res, "ours_mixed"), cell(res, "pin"), cell(res, "idt"),
                          ratio(t_o, t_p), "met" if t_o <= TICK_TARGET_ICUB * t_p else "MISSED",
                          agrees_cell(tick_errs)])
    print_table(["per-tick set", "ours µs", "ours MIXED µs", "Pinocchio µs", "iDynTree µs", "ours/pin",
                 f"<={TICK_TARGET_ICUB:g}x pin", "agrees"], tick_rows, md,
                "per-tick call, iCub (min / median µs per call)")
    print_notes(TICK_SETS, md)

    # ---- per-tick on every robot (iCub and --model)
    res = Timer.result(ticks[0][1])
    robot_rows = [[ICUB, str(len(joints)), str(len(ours.frame_names)), " ".join(FEET), cell(res, "ours"),
                   cell(res, "ours_mixed"), cell(res, "pin"), ratio(res["ours"][0], res["pin"][0]),
                   ratio(res["ours_mixed"][0], res["pin"][0]), f"{TICK_TARGET_ICUB:g}x",
                   "met" if res["ours"][0] <= TICK_TARGET_ICUB * res["pin"][0] else "MISSED",
                   agrees_cell(tick_errs)]]
    verdicts = [(ICUB, res["ours"][0] / res["pin"][0], TICK_TARGET_ICUB)]
    for label, nj, nf, feet, errs, row in models:
        res = Timer.result(row)
        r_o, r_p = res["ours"][0], res["pin"][0]
        robot_rows.append([label, str(nj), str(nf), " ".join(feet), cell(res, "ours"), cell(res, "ours_mixed"),
                           cell(res, "pin"), ratio(r_o, r_p), ratio(res["ours_mixed"][0], r_p),
                           f"{TICK_TARGET_OTHER:g}x", "met" if r_o <= TICK_TARGET_OTHER * r_p else "MISSED",
                           agrees_cell(errs)])
        verdicts.append((label, r_o / r_p, TICK_TARGET_OTHER))
    print_table(["robot", "joints", "links", "wrenches on", "ours µs", "ours MIXED µs", "Pinocchio µs",
                 "ours/pin", "MIXED/pin", "target", "met", "agrees"], robot_rows, md,
                "compute_tick vs Pinocchio's same set, per robot (BODY_FIXED; min / median µs per call)")
    print("\nsame set as the iCub table (joint_transforms read; Pinocchio places every frame); targets "
          f"(issue 22): <= {TICK_TARGET_ICUB:g}x Pinocchio on iCub, <= {TICK_TARGET_OTHER:g}x on the others."
          + ("" if models else " Add robots with --model (e.g. --model g1 --model talos)."))

    # ---- growth table
    growth_rows, prev = [], None
    for nj, e, row in growth:
        res = Timer.result(row)
        to, tp = res["ours"][0], res["pin"][0]
        growth_rows.append([str(nj), cell(res, "ours"), cell(res, "pin"), ratio(to, tp),
                            ratio(to, prev[0]) if prev else "-", ratio(tp, prev[1]) if prev else "-",
                            agrees_cell(e)])
        prev = (to, tp)
    print_table(["joints", "ours µs", "Pinocchio µs", "ours/pin", "ours t(2n)/t(n)", "pin t(2n)/t(n)", "agrees"],
                growth_rows, md, "per-tick cost growth, random branching trees (BODY_FIXED, min / median µs)")
    print("\ntrees: random_tree_urdf(n, seed=n, branching=True, joint_types=(revolute, prismatic), n_fixed=4),"
          " axes normalized; wrenches on frame_000 and frame_001. t(2n)/t(n): 2 = O(n), 4 = O(n^2).")
    ns = np.array([nj for nj, _, _ in growth], float)
    t_o = np.array([Timer.result(row)["ours"][0] for _, _, row in growth])
    t_p = np.array([Timer.result(row)["pin"][0] for _, _, row in growth])
    upper = ns >= 32
    k_all, k_up = fitted_exponent(ns, t_o), fitted_exponent(ns[upper], t_o[upper])
    # without the fixed per-call cost: t - t(8) (the smallest tree's time stands for it)
    k_net = fitted_exponent(ns[upper], t_o[upper] - t_o[0])
    growth_ok = k_up <= 2.0 and k_net <= 2.0
    print(f"fitted exponent k of t ~ n^k, ours: {k_all:.2f} over {int(ns[0])}-{int(ns[-1])} joints, "
          f"{k_up:.2f} over 32-{int(ns[-1])}, {k_net:.2f} over 32-{int(ns[-1])} after subtracting t({int(ns[0])}) "
          f"(the fixed per-call cost); Pinocchio: {fitted_exponent(ns, t_p):.2f} and "
          f"{fitted_exponent(ns[upper], t_p[upper]):.2f}. Target (issue 22): O(n) to O(n^2), k <= 2: "
          f"{'met' if growth_ok else 'MISSED'}")

    print(f"\nsummary: standalone calls >= 100x faster than adam-NumPy: "
          f"{'all' if not misses else 'missed on ' + ', '.join(misses)}; "
          f"compute_tick / Pinocchio's per-tick set: "
          + ", ".join(f"{label} {r:.2f}x (<= {tgt:g}x: {'met' if r <= tgt else 'MISSED'})"
                      for label, r, tgt in verdicts)
          + f"; growth exponent {k_up:.2f} over 32-{int(ns[-1])} joints ({'met' if growth_ok else 'MISSED'}); "
          f"total run {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
