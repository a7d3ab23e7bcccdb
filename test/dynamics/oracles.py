"""Reference implementations ("oracles") of every quantity of the dynamics API.

Two independent libraries are wrapped behind the same interface:

* :class:`IDynTreeOracle` — iDynTree's ``KinDynComputations`` on a reduced model (fixed
  joints lumped), with the floating base set explicitly and iDynTree's own handling of
  the three velocity representations.  iDynTree has no forward dynamics, so ``aba`` is
  ``M^-1 ([0; tau] - rnea(nu_dot = 0, wrenches))`` from iDynTree's own M and RNEA.
* :class:`PinocchioOracle` — Pinocchio with a ``JointModelFreeFlyer`` root.  Pinocchio's
  free-flyer velocity is BODY_FIXED; every quantity is converted here to the requested
  representation with the transforms of :func:`velocity_transform`, so this oracle also
  checks iDynTree's representation handling (and ours) independently.

Conventions (as the dynamics core's): spatial vectors are ``[linear; angular]``,
generalised vectors ``[base linear, base angular, joints]`` with the joints in the order
given to the oracle, representations are named ``'MIXED'``, ``'BODY_FIXED'`` or
``'INERTIAL_FIXED'``, and an external wrench ``w`` on frame ``F`` contributes
``J_F^T w`` with ``J_F`` in the active representation.

Every method takes the representation and the full state explicitly; nothing is cached
between calls except the loaded model.  Quirks handled here: iDynTree moves the base of a
massless root unless ``setFloatingBase`` is called (it is, always); iDynTree's centroidal
momentum Jacobian is expressed in G[B] under BODY_FIXED (rotated to world axes here);
Pinocchio's ``crba`` and ``computeMinverse`` fill only the upper triangle (symmetrised).
Both oracles load the URDF with unit joint axes (``normalize_axes``) unless told not to.

The module also holds what the test files share: :class:`State`, :class:`ModelCase`,
``random_state``, ``core_representation`` and :func:`assert_close`.
"""

from dataclasses import dataclass, field
import pathlib
import sys
import xml.etree.ElementTree as ET

import idyntree.swig as idt
import numpy as np
import pinocchio as pin

REPRESENTATIONS = ("MIXED", "BODY_FIXED", "INERTIAL_FIXED")
GRAVITY = np.array([0.0, 0.0, -9.80665])
MOVABLE = ("revolute", "continuous", "prismatic")


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class State:
    """A floating-base state; velocities and accelerations in ``rep``'s representation.

    ``base_acc``/``s_ddot`` feed ``rnea`` and ``tau`` feeds ``aba``.
    """

    w_H_b: np.ndarray  # (4, 4)
    s: np.ndarray  # (n,)
    base_vel: np.ndarray  # (6,)
    s_dot: np.ndarray  # (n,)
    base_acc: np.ndarray  # (6,)
    s_ddot: np.ndarray  # (n,)
    tau: np.ndarray  # (n,)

    @property
    def nu(self):
        return np.concatenate([self.base_vel, self.s_dot])

    @property
    def nu_dot(self):
        return np.concatenate([self.base_acc, self.s_ddot])


# --------------------------------------------------------------------------- SE(3) helpers


def pose(rotation=np.eye(3), translation=(0.0, 0.0, 0.0)):
    """A_H_B (4, 4) of a rotation (3, 3) and a translation (3,) [m]."""
    out = np.eye(4)
    out[:3, :3] = rotation
    out[:3, 3] = translation
    return out


def rot_x(a):
    """Rotation (3, 3) by ``a`` [rad] about x."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    """Rotation (3, 3) by ``a`` [rad] about y."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1.0, 0], [-s, 0, c]])


def rot_z(a):
    """Rotation (3, 3) by ``a`` [rad] about z."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def skew(v):
    """(3,) -> (3, 3) cross-product matrix."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def adjoint(a_H_b):
    """Velocity transform ``aX_b`` (6, 6), ``[linear; angular]``: ``v_a = aX_b v_b``."""
    R, p = a_H_b[:3, :3], a_H_b[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[:3, 3:] = skew(p) @ R
    X[3:, 3:] = R
    return X


def velocity_transform(rep, w_H_f):
    """T (6, 6) mapping the BODY_FIXED velocity of frame f to its velocity in ``rep``.

    BODY_FIXED: identity.  MIXED: ``blkdiag(R, R)`` (f's origin, world axes).
    INERTIAL_FIXED: the adjoint ``wX_f`` (point at the world origin, world axes).
    """
    R = w_H_f[:3, :3]
    if rep == "BODY_FIXED":
        return np.eye(6)
    if rep == "MIXED":
        T = np.zeros((6, 6))
        T[:3, :3] = R
        T[3:, 3:] = R
        return T
    if rep == "INERTIAL_FIXED":
        return adjoint(w_H_f)
    raise ValueError(f"unknown representation {rep!r}")


def velocity_transform_dot(rep, w_H_f, v_body):
    """Time derivative of :func:`velocity_transform` when f moves with BODY_FIXED velocity ``v_body``."""
    R, p = w_H_f[:3, :3], w_H_f[:3, 3]
    v, w = v_body[:3], v_body[3:]
    R_dot = R @ skew(w)
    Td = np.zeros((6, 6))
    if rep == "BODY_FIXED":
        return Td
    Td[:3, :3] = R_dot
    Td[3:, 3:] = R_dot
    if rep == "INERTIAL_FIXED":
        p_dot = R @ v
        Td[:3, 3:] = skew(p_dot) @ R + skew(p) @ R_dot
    return Td


def generalized_transform(rep, w_H_b, n):
    """Tn (6+n, 6+n) = blkdiag(velocity_transform(rep, w_H_b), I_n): nu_rep = Tn nu_body."""
    Tn = np.eye(6 + n)
    Tn[:6, :6] = velocity_transform(rep, w_H_b)
    return Tn


def wrench_to_rep(rep, w_H_f, wrench_inertial):
    """Wrench on frame f in ``rep`` equivalent to ``wrench_inertial`` (world origin, world axes).

    Equivalent means same power on every motion: ``T_rep^T w_rep = T_inertial^T w_inertial``.
    """
    T_rep = velocity_transform(rep, w_H_f)
    T_in = velocity_transform("INERTIAL_FIXED", w_H_f)
    return np.linalg.solve(T_rep.T, T_in.T @ wrench_inertial)


def wrench_to_inertial(rep, w_H_f, wrench_rep):
    """Inverse of :func:`wrench_to_rep`: ``w_inertial = T_inertial^-T T_rep^T w_rep``."""
    T_rep = velocity_transform(rep, w_H_f)
    T_in = velocity_transform("INERTIAL_FIXED", w_H_f)
    return np.linalg.solve(T_in.T, T_rep.T @ np.asarray(wrench_rep, dtype=float))


def wrench_in_frame_to_inertial(w_H_e, wrench_e):
    """Wrench given about frame e's origin in e's axes (an F/T sensor reading) -> world origin, world axes."""
    return np.linalg.solve(velocity_transform("INERTIAL_FIXED", w_H_e).T, wrench_e)


# --------------------------------------------------------------------------- URDF helpers


def normalize_axes(urdf_text):
    """URDF text with every ``<axis xyz>`` rescaled to unit length (other content untouched)."""
    root = ET.fromstring(urdf_text)
    for joint in root.iter("joint"):
        axis = joint.find("axis")
        if joint.get("type") in MOVABLE and axis is not None and axis.get("xyz") is not None:
            a = np.array([float(x) for x in axis.get("xyz").split()])
            axis.set("xyz", " ".join(format(x, ".17g") for x in a / np.linalg.norm(a)))
    return ET.tostring(root, encoding="unicode")


def urdf_structure(urdf_text):
    """(root link, link names in file order, {joint: (type, parent, child)} in file order)."""
    root = ET.fromstring(urdf_text)
    links = [link.get("name") for link in root.findall("link")]
    joints = {
        j.get("name"): (j.get("type"), j.find("parent").get("link"), j.find("child").get("link"))
        for j in root.findall("joint")
    }
    children = {c for _, _, c in joints.values()}
    roots = [name for name in links if name not in children]
    assert len(roots) == 1, roots
    return roots[0], links, joints


def default_joint_order(urdf_text):
    """Movable joints in depth-first order from the root, children in file order (the spec's default)."""
    root, _, joints = urdf_structure(urdf_text)
    out = []

    def visit(link):
        for name, (jtype, parent, child) in joints.items():
            if parent == link:
                if jtype in MOVABLE:
                    out.append(name)
                visit(child)

    visit(root)
    return out


def _as_urdf_text(urdf):
    return urdf if urdf.lstrip().startswith("<") else open(urdf).read()


# --------------------------------------------------------------------------- iDynTree

_IDT_REP = {
    "MIXED": idt.MIXED_REPRESENTATION,
    "BODY_FIXED": idt.BODY_FIXED_REPRESENTATION,
    "INERTIAL_FIXED": idt.INERTIAL_FIXED_REPRESENTATION,
}


class IDynTreeOracle:
    """iDynTree ``KinDynComputations`` on the reduced model of ``joints`` with base ``root_link``."""

    name = "idyntree"

    def __init__(self, urdf, joints, root_link=None, gravity=GRAVITY, normalize=True):
        text = _as_urdf_text(urdf)
        if normalize:
            text = normalize_axes(text)
        self.joints = list(joints)
        self.n = len(self.joints)
        self.gravity = np.asarray(gravity, dtype=float)
        self.root_link = root_link if root_link is not None else urdf_structure(text)[0]
        loader = idt.ModelLoader()
        if not loader.loadReducedModelFromString(text, self.joints):
            raise RuntimeError("iDynTree could not load the URDF")
        self.model = loader.model().copy()
        self.kd = idt.KinDynComputations()
        if not self.kd.loadRobotModel(self.model):
            raise RuntimeError("iDynTree could not load the model")
        if not self.kd.setFloatingBase(self.root_link):
            raise RuntimeError(f"iDynTree: setFloatingBase({self.root_link}) failed")
        model = self.kd.model()
        assert self.kd.getNrOfDegreesOfFreedom() == self.n
        for k, name in enumerate(self.joints):  # DOF k must be joints[k]
            assert model.getJoint(model.getJointIndex(name)).getDOFsOffset() == k, name

    # -- state
    def _set(self, rep, w_H_b, s, base_vel=None, s_dot=None, gravity=None):
        base_vel = np.zeros(6) if base_vel is None else base_vel
        s_dot = np.zeros(self.n) if s_dot is None else s_dot
        gravity = self.gravity if gravity is None else gravity
        assert self.kd.setFrameVelocityRepresentation(_IDT_REP[rep])
        ok = self.kd.setRobotState(
            np.asarray(w_H_b, float), np.asarray(s, float), np.asarray(base_vel, float),
            np.asarray(s_dot, float), np.asarray(gravity, float),
        )
        assert ok

    def _frame(self, frame):
        idx = self.kd.getFrameIndex(frame)
        if idx < 0:
            raise KeyError(frame)
        return idx

    def _ff_torques(self):
        return idt.FreeFloatingGeneralizedTorques(self.kd.model())

    @staticmethod
    def _gen(torques):
        return np.concatenate([torques.baseWrench().toNumPy(), torques.jointTorques().toNumPy()])

    def _link_wrenches(self, rep, external_wrenches):
        """LinkNetExternalWrenches in ``rep`` equivalent to ``{frame: w}`` (w in rep, on the frame)."""
        model = self.kd.model()
        ext = idt.LinkWrenches(model)
        ext.zero()
        acc = {}
        for frame, w in (external_wrenches or {}).items():
            fidx = self._frame(frame)
            lidx = model.getFrameLink(fidx)
            w_H_f = self.kd.getWorldTransform(fidx).asHomogeneousTransform().toNumPy()
            w_H_l = self.kd.getWorldTransform(lidx).asHomogeneousTransform().toNumPy()
            acc[lidx] = acc.get(lidx, 0.0) + wrench_to_rep(rep, w_H_l, wrench_to_inertial(rep, w_H_f, w))
        for lidx, w in acc.items():
            ext[lidx] = idt.Wrench.FromPython(w)
        return ext

    # -- kinematics
    def forward_kinematics(self, frame, w_H_b, s):
        self._set("MIXED", w_H_b, s)
        return self.kd.getWorldTransform(self._frame(frame)).asHomogeneousTransform().toNumPy()

    def jacobian(self, rep, frame, w_H_b, s):
        self._set(rep, w_H_b, s)
        J = idt.MatrixDynSize(6, 6 + self.n)
        assert self.kd.getFrameFreeFloatingJacobian(self._frame(frame), J)
        return J.toNumPy()

    def relative_jacobian(self, rep, frame, s):
        return self.jacobian(rep, frame, np.eye(4), s)[:, 6:]

    def jacobian_dot_nu(self, rep, frame, w_H_b, s, base_vel, s_dot):
        self._set(rep, w_H_b, s, base_vel, s_dot)
        return self.kd.getFrameBiasAcc(self._frame(frame)).toNumPy()

    def frame_velocity(self, rep, frame, w_H_b, s, base_vel, s_dot):
        self._set(rep, w_H_b, s, base_vel, s_dot)
        return self.kd.getFrameVel(self._frame(frame)).toNumPy()

    def com_position(self, w_H_b, s):
        self._set("MIXED", w_H_b, s)
        return self.kd.getCenterOfMassPosition().toNumPy()

    def com_jacobian(self, rep, w_H_b, s):
        self._set(rep, w_H_b, s)
        J = idt.MatrixDynSize(3, 6 + self.n)
        assert self.kd.getCenterOfMassJacobian(J)
        return J.toNumPy()

    def total_mass(self):
        return self.kd.model().getTotalMass()

    # -- dynamics
    def mass_matrix(self, rep, w_H_b, s):
        self._set(rep, w_H_b, s)
        M = idt.MatrixDynSize(6 + self.n, 6 + self.n)
        assert self.kd.getFreeFloatingMassMatrix(M)
        return M.toNumPy()

    def inverse_mass_matrix(self, rep, w_H_b, s):
        return np.linalg.inv(self.mass_matrix(rep, w_H_b, s))

    def centroidal_momentum_matrix(self, rep, w_H_b, s):
        self._set(rep, w_H_b, s)
        J = idt.MatrixDynSize(6, 6 + self.n)
        assert self.kd.getCentroidalTotalMomentumJacobian(J)
        if rep == "BODY_FIXED":  # iDynTree expresses it in G[B] there; the API wants G[A] always
            R = np.asarray(w_H_b, float)[:3, :3]
            return np.kron(np.eye(2), R) @ J.toNumPy()
        return J.toNumPy()

    def bias_force(self, rep, w_H_b, s, base_vel, s_dot, gravity=None):
        self._set(rep, w_H_b, s, base_vel, s_dot, gravity)
        out = self._ff_torques()
        assert self.kd.generalizedBiasForces(out)
        return self._gen(out)

    def gravity_term(self, rep, w_H_b, s, gravity=None):
        self._set(rep, w_H_b, s, gravity=gravity)
        out = self._ff_torques()
        assert self.kd.generalizedGravityForces(out)
        return self._gen(out)

    def rnea(self, rep, w_H_b, s, base_vel, s_dot, base_acc, s_ddot, external_wrenches=None, gravity=None):
        self._set(rep, w_H_b, s, base_vel, s_dot, gravity)
        ext = self._link_wrenches(rep, external_wrenches)
        out = self._ff_torques()
        assert self.kd.inverseDynamics(
            idt.Vector6.FromPython(np.asarray(base_acc, float)),
            idt.VectorDynSize.FromPython(np.asarray(s_ddot, float)), ext, out,
        )
        return self._gen(out)

    def aba(self, rep, w_H_b, s, base_vel, s_dot, tau, external_wrenches=None, gravity=None):
        zero = np.zeros(6 + self.n)
        rhs = np.concatenate([np.zeros(6), tau]) - self.rnea(
            rep, w_H_b, s, base_vel, s_dot, zero[:6], zero[6:], external_wrenches, gravity
        )
        return np.linalg.solve(self.mass_matrix(rep, w_H_b, s), rhs)


# --------------------------------------------------------------------------- Pinocchio

_PIN_REF = {"MIXED": pin.LOCAL_WORLD_ALIGNED, "BODY_FIXED": pin.LOCAL, "INERTIAL_FIXED": pin.WORLD}


class PinocchioOracle:
    """Pinocchio with a free-flyer root; BODY_FIXED internally, converted to ``rep`` on the way in and out.

    Pinocchio orders its joints its own way and uses (cos, sin) for continuous joints:
    both are mapped by joint name.  Mimic tags are ignored (independent coordinates).
    :meth:`locked` gives the oracle of the same robot with some joints locked.
    """

    name = "pinocchio"

    def __init__(self, urdf, joints, root_link=None, gravity=GRAVITY, normalize=True):
        text = _as_urdf_text(urdf)
        if normalize:
            text = normalize_axes(text)
        urdf_root = urdf_structure(text)[0]
        if root_link not in (None, urdf_root):
            raise ValueError("the Pinocchio oracle only supports the URDF root as base")
        self.gravity = np.asarray(gravity, dtype=float)
        self._root = urdf_root
        self._setup(pin.buildModelFromXML(text, pin.JointModelFreeFlyer()), joints)

    def locked(self, joints, w_H_b, s):
        """This oracle on Pinocchio's reduced model (``pin.buildReducedModel``) with
        ``joints`` locked at the configuration (w_H_b, s) of this oracle's joints: its
        coordinates are the other joints, in this oracle's order."""
        q = self._q(w_H_b, s)
        out = object.__new__(type(self))
        out.gravity, out._root = self.gravity, self._root
        out._setup(pin.buildReducedModel(self.model, [self.model.getJointId(j) for j in joints],
                                         q),
                   [j for j in self.joints if j not in set(joints)])
        return out

    def _setup(self, model, joints):
        """Take ``model`` (a free-flyer root) with ``joints``, every movable joint of it."""
        self.model = model
        self.data = self.model.createData()
        self.joints = list(joints)
        self.n = len(self.joints)
        nv = self.model.nv
        if nv != 6 + self.n:
            raise ValueError(f"the Pinocchio oracle needs every movable joint: nv={nv}, n={self.n}")
        # P maps our generalised velocity ordering to Pinocchio's: v_pin = P nu_ours.
        self.P = np.zeros((nv, nv))
        self.P[:6, :6] = np.eye(6)
        self._q_slices = []
        for k, name in enumerate(self.joints):
            jid = self.model.getJointId(name)
            assert jid < self.model.njoints, name
            jm = self.model.joints[jid]
            assert jm.nv == 1, name
            self.P[jm.idx_v, 6 + k] = 1.0
            self._q_slices.append((jm.idx_q, jm.nq))
        root_fid = self._fid(self._root)
        assert self.model.frames[root_fid].parentJoint == 1
        assert np.allclose(self.model.frames[root_fid].placement.homogeneous, np.eye(4), atol=0)

    def _fid(self, frame):
        if not self.model.existFrame(frame, pin.BODY):
            raise KeyError(frame)
        return self.model.getFrameId(frame, pin.BODY)

    def _q(self, w_H_b, s):
        q = np.zeros(self.model.nq)
        q[:3] = w_H_b[:3, 3]
        q[3:7] = pin.Quaternion(np.asarray(w_H_b[:3, :3], float)).coeffs()  # x y z w
        for (iq, nq), sk in zip(self._q_slices, s):
            if nq == 1:
                q[iq] = sk
            else:  # continuous joint: unit complex number
                q[iq : iq + 2] = np.cos(sk), np.sin(sk)
        return q

    def _tn(self, rep, w_H_b):
        return generalized_transform(rep, w_H_b, self.n)

    def _v_body(self, rep, w_H_b, base_vel, s_dot):
        """Our nu in ``rep`` -> BODY_FIXED nu (our ordering)."""
        nu = np.concatenate([base_vel, s_dot])
        return np.linalg.solve(self._tn(rep, w_H_b), nu)

    def _tn_dot(self, rep, w_H_b, nu_body):
        Td = np.zeros((6 + self.n, 6 + self.n))
        Td[:6, :6] = velocity_transform_dot(rep, w_H_b, nu_body[:6])
        return Td

    def _fext(self, rep, external_wrenches):
        """Pinocchio fext (LOCAL joint frames) from ``{frame: w}``; needs updated frame placements."""
        fext = [pin.Force.Zero() for _ in range(self.model.njoints)]
        for frame, w in (external_wrenches or {}).items():
            fid = self._fid(frame)
            w_body = velocity_transform(rep, self.data.oMf[fid].homogeneous).T @ np.asarray(w, float)
            jMf = self.model.frames[fid].placement
            j = self.model.frames[fid].parentJoint
            fext[j] = fext[j] + jMf.act(pin.Force(w_body))
        return fext

    def _set_gravity(self, gravity):
        self.model.gravity.linear = self.gravity if gravity is None else np.asarray(gravity, float)

    # -- kinematics
    def forward_kinematics(self, frame, w_H_b, s):
        q = self._q(w_H_b, s)
        pin.forwardKinematics(self.model, self.data, q)
        return pin.updateFramePlacement(self.model, self.data, self._fid(frame)).homogeneous

    def jacobian(self, rep, frame, w_H_b, s):
        q = self._q(w_H_b, s)
        J = pin.computeFrameJacobian(self.model, self.data, q, self._fid(frame), _PIN_REF[rep])
        return J @ self.P @ np.linalg.inv(self._tn(rep, w_H_b))

    def relative_jacobian(self, rep, frame, s):
        return self.jacobian(rep, frame, np.eye(4), s)[:, 6:]

    def _frame_motion(self, rep, frame, w_H_b, s, base_vel, s_dot, nu_dot_rep):
        """(velocity, d/dt velocity) of ``frame`` in ``rep`` for generalised acceleration ``nu_dot_rep``."""
        q = self._q(w_H_b, s)
        nu_b = self._v_body(rep, w_H_b, base_vel, s_dot)
        Tn = self._tn(rep, w_H_b)
        a_b = np.linalg.solve(Tn, nu_dot_rep - self._tn_dot(rep, w_H_b, nu_b) @ nu_b)
        pin.forwardKinematics(self.model, self.data, q, self.P @ nu_b, self.P @ a_b)
        fid = self._fid(frame)
        w_H_f = pin.updateFramePlacement(self.model, self.data, fid).homogeneous
        v_f = pin.getFrameVelocity(self.model, self.data, fid, pin.LOCAL).vector
        a_f = pin.getFrameAcceleration(self.model, self.data, fid, pin.LOCAL).vector  # = d/dt v_f (body)
        T_f = velocity_transform(rep, w_H_f)
        return T_f @ v_f, velocity_transform_dot(rep, w_H_f, v_f) @ v_f + T_f @ a_f

    def jacobian_dot_nu(self, rep, frame, w_H_b, s, base_vel, s_dot):
        return self._frame_motion(rep, frame, w_H_b, s, base_vel, s_dot, np.zeros(6 + self.n))[1]

    def frame_velocity(self, rep, frame, w_H_b, s, base_vel, s_dot):
        return self._frame_motion(rep, frame, w_H_b, s, base_vel, s_dot, np.zeros(6 + self.n))[0]

    def com_position(self, w_H_b, s):
        return pin.centerOfMass(self.model, self.data, self._q(w_H_b, s)).copy()

    def com_jacobian(self, rep, w_H_b, s):
        J = pin.jacobianCenterOfMass(self.model, self.data, self._q(w_H_b, s))
        return J @ self.P @ np.linalg.inv(self._tn(rep, w_H_b))

    def total_mass(self):
        return sum(inertia.mass for inertia in self.model.inertias)

    # -- dynamics
    def mass_matrix(self, rep, w_H_b, s):
        M = pin.crba(self.model, self.data, self._q(w_H_b, s))
        M = np.triu(M) + np.triu(M, 1).T  # Pinocchio fills only the upper triangle
        Tinv = np.linalg.inv(self._tn(rep, w_H_b))
        return Tinv.T @ (self.P.T @ M @ self.P) @ Tinv

    def inverse_mass_matrix(self, rep, w_H_b, s):
        Minv = pin.computeMinverse(self.model, self.data, self._q(w_H_b, s))
        Minv = np.triu(Minv) + np.triu(Minv, 1).T  # upper triangle only, as crba
        Tn = self._tn(rep, w_H_b)
        return Tn @ (self.P.T @ Minv @ self.P) @ Tn.T

    def centroidal_momentum_matrix(self, rep, w_H_b, s):
        Ag = pin.computeCentroidalMap(self.model, self.data, self._q(w_H_b, s))
        return Ag @ self.P @ np.linalg.inv(self._tn(rep, w_H_b))

    def rnea(self, rep, w_H_b, s, base_vel, s_dot, base_acc, s_ddot, external_wrenches=None, gravity=None):
        q = self._q(w_H_b, s)
        Tn = self._tn(rep, w_H_b)
        nu_b = np.linalg.solve(Tn, np.concatenate([base_vel, s_dot]))
        nu_dot = np.concatenate([base_acc, s_ddot])
        a_b = np.linalg.solve(Tn, nu_dot - self._tn_dot(rep, w_H_b, nu_b) @ nu_b)
        pin.framesForwardKinematics(self.model, self.data, q)
        fext = self._fext(rep, external_wrenches)
        self._set_gravity(gravity)
        tau_pin = pin.rnea(self.model, self.data, q, self.P @ nu_b, self.P @ a_b, fext)
        self._set_gravity(None)
        return np.linalg.solve(Tn.T, self.P.T @ tau_pin)

    def bias_force(self, rep, w_H_b, s, base_vel, s_dot, gravity=None):
        zero = np.zeros(6 + self.n)
        return self.rnea(rep, w_H_b, s, base_vel, s_dot, zero[:6], zero[6:], None, gravity)

    def nonlinear_effects(self, rep, w_H_b, s, base_vel, s_dot):
        """Bias via ``pin.nonLinearEffects`` (BODY velocity) + the representation's M Tdot term."""
        q = self._q(w_H_b, s)
        Tn = self._tn(rep, w_H_b)
        nu_b = np.linalg.solve(Tn, np.concatenate([base_vel, s_dot]))
        self._set_gravity(None)
        h_b = self.P.T @ pin.nonLinearEffects(self.model, self.data, q, self.P @ nu_b)
        M_b = self.mass_matrix("BODY_FIXED", w_H_b, s)
        a_b = -np.linalg.solve(Tn, self._tn_dot(rep, w_H_b, nu_b) @ nu_b)
        return np.linalg.solve(Tn.T, h_b + M_b @ a_b)

    def gravity_term(self, rep, w_H_b, s, gravity=None):
        self._set_gravity(gravity)
        g = pin.computeGeneralizedGravity(self.model, self.data, self._q(w_H_b, s))
        self._set_gravity(None)
        return np.linalg.solve(self._tn(rep, w_H_b).T, self.P.T @ g)

    def aba(self, rep, w_H_b, s, base_vel, s_dot, tau, external_wrenches=None, gravity=None):
        q = self._q(w_H_b, s)
        Tn = self._tn(rep, w_H_b)
        nu_b = np.linalg.solve(Tn, np.concatenate([base_vel, s_dot]))
        pin.framesForwardKinematics(self.model, self.data, q)
        fext = self._fext(rep, external_wrenches)
        self._set_gravity(gravity)
        tau_pin = self.P @ np.concatenate([np.zeros(6), tau])
        a_pin = pin.aba(self.model, self.data, q, self.P @ nu_b, tau_pin, fext)
        self._set_gravity(None)
        a_b = self.P.T @ a_pin
        return Tn @ a_b + self._tn_dot(rep, w_H_b, nu_b) @ nu_b


# --------------------------------------------------------------------------- test models


def load_random_tree():
    """``random_tree_urdf`` of test/support/random_tree.py (NumPy only: no core import)."""
    support = pathlib.Path(__file__).resolve().parents[1] / "support"
    if str(support) not in sys.path:
        sys.path.insert(0, str(support))
    from random_tree import random_tree_urdf
    return random_tree_urdf


@dataclass
class ModelCase:
    """A URDF with what the tests need to know about it (read from the XML, not from the core)."""

    name: str
    urdf: str
    joints: list  # joint order of the coordinates
    explicit_joints: bool  # pass ``joints`` to the core (else None: the default order)
    root: str
    links: list  # every URDF link, file order
    fixed_children: list  # links attached to their parent by a fixed joint
    jacobian_frames: list  # frames on which Jacobians are compared
    wrench_frames: tuple  # two fixed-joint children receiving external wrenches
    limits: dict = field(default_factory=dict)  # joint -> (lower, upper)

    @property
    def n(self):
        return len(self.joints)

    @property
    def core_joints(self):
        return self.joints if self.explicit_joints else None


def _limits(urdf, joints):
    out = {}
    by_name = {j.get("name"): j for j in ET.fromstring(urdf).findall("joint")}
    for name in joints:
        j = by_name[name]
        lim = j.find("limit")
        if j.get("type") != "continuous" and lim is not None and lim.get("lower") is not None:
            out[name] = (float(lim.get("lower")), float(lim.get("upper")))
        else:
            out[name] = (-np.pi, np.pi)
    return out


def make_case(name, urdf, *, joints=None, jacobian_frames=None, wrench_frames=None):
    """Build a :class:`ModelCase`; ``joints=None`` means the spec's default order."""
    root, links, jdict = urdf_structure(urdf)
    fixed_children = [c for (t, _, c) in jdict.values() if t == "fixed"]
    order = default_joint_order(urdf) if joints is None else list(joints)
    return ModelCase(
        name=name,
        urdf=urdf,
        joints=order,
        explicit_joints=joints is not None,
        root=root,
        links=links,
        fixed_children=fixed_children,
        jacobian_frames=list(jacobian_frames) if jacobian_frames is not None else links,
        wrench_frames=tuple(wrench_frames) if wrench_frames is not None else tuple(fixed_children[:2]),
        limits=_limits(urdf, order),
    )


def core_representation(rep):
    """The core's ``Representations`` member for 'MIXED' | 'BODY_FIXED' | 'INERTIAL_FIXED'."""
    from kin_dyn_ros.dynamics import Representations

    return getattr(Representations, f"{rep}_REPRESENTATION")


def random_state(case, rng):
    """A random :class:`State` for ``case``: random pose, joints within limits, random rates."""
    n = case.n
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    w_H_b = np.eye(4)
    w_H_b[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    w_H_b[:3, 3] = rng.uniform(-1.0, 1.0, size=3)
    lo = np.array([case.limits[j][0] for j in case.joints])
    hi = np.array([case.limits[j][1] for j in case.joints])
    return State(
        w_H_b=w_H_b,
        s=rng.uniform(lo, hi),
        base_vel=rng.normal(size=6),
        s_dot=rng.normal(size=n),
        base_acc=rng.normal(size=6),
        s_ddot=rng.normal(size=n),
        tau=rng.normal(scale=5.0, size=n),
    )


# --------------------------------------------------------------------------- comparison


def assert_close(ours, ref, what, rtol=1e-10):
    """Assert ``|ours - ref| <= rtol * max(1, max|ref|)`` elementwise (NaN fails).

    On failure the message names the quantity and gives the max error, where it is,
    and the tolerance used.
    """
    ours = np.asarray(ours, dtype=float)
    ref = np.asarray(ref, dtype=float)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape}, reference shape {ref.shape}"
    if ref.size == 0:
        return
    tol = rtol * max(1.0, float(np.abs(ref).max()))
    err = np.abs(ours - ref)
    bad = ~(err <= tol)
    if bad.any():
        worst = np.nan if np.isnan(err).any() else float(err.max())
        where = np.unravel_index(int(np.argmax(np.where(np.isnan(err), np.inf, err))), err.shape)
        raise AssertionError(
            f"{what}: max error {worst:.3e} at index {tuple(int(i) for i in where)} "
            f"(tolerance {tol:.1e}, {int(bad.sum())}/{err.size} entries off, max|ref| {np.abs(ref).max():.3e})"
        )
    return float(err.max())


def compare_with_idyntree(kd, urdf, joints, rep="MIXED", seed=0, normalize=True, what="",
                          root=None, rtol=1e-10):
    """Check the core ``kd`` (floating from ``root``, default the URDF root) against iDynTree
    on ``urdf`` at a random state: FK and Jacobian of every link, M, bias and ABA, in
    representation ``rep``. Returns the :class:`State` used."""
    case = make_case("x", urdf, joints=joints)
    ref = IDynTreeOracle(urdf, joints, root or case.root, GRAVITY, normalize=normalize)
    kd.set_frame_velocity_representation(core_representation(rep))
    st = random_state(case, np.random.default_rng(seed))
    v = (st.w_H_b, st.s, st.base_vel, st.s_dot)
    for frame in case.links:
        assert_close(kd.forward_kinematics(frame, st.w_H_b, st.s),
                     ref.forward_kinematics(frame, st.w_H_b, st.s),
                     f"{what} forward_kinematics({frame})", rtol)
        assert_close(kd.jacobian(frame, st.w_H_b, st.s), ref.jacobian(rep, frame, st.w_H_b, st.s),
                     f"{what} jacobian({frame})", rtol)
    assert_close(kd.mass_matrix(st.w_H_b, st.s), ref.mass_matrix(rep, st.w_H_b, st.s),
                 f"{what} mass_matrix", rtol)
    assert_close(kd.bias_force(*v), ref.bias_force(rep, *v), f"{what} bias_force", rtol)
    assert_close(kd.aba(*v, st.tau), ref.aba(rep, *v, st.tau), f"{what} aba", rtol)
    return st
