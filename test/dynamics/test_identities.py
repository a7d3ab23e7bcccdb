"""Physics identities of the core against itself (no oracle involved).

Exact identities use ``assert_close`` at 1e-10 relative.  Finite-difference identities
use central differences with step ``H = 1e-6`` along the motion (the base pose integrated
with the exponential map of the representation in use, joints ``s + t s_dot``), checked
at ``FD_RTOL = 1e-6`` relative to ``max(1, max|ref|)``.  Justification: the truncation
error of a central difference is ``h^2 |f'''| / 6 ~ 1e-12 |f'''|`` and the round-off
``eps |f| / h ~ 2e-10 |f|``; with ``|f|`` of order 1..100 on these robots both are at
least 50x below 1e-6, while any wrong term (a missing Coriolis contribution, a wrong
representation transform) is of the order of ``|M| |nu|``, i.e. >= 1e-2.
"""

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation
from urdf_parser_py.urdf import URDF

from oracles import (
    REPRESENTATIONS,
    assert_close,
    core_representation,
    skew,
    velocity_transform,
)

RTOL = 1e-10
H = 1e-6
FD_RTOL = 1e-6


# ------------------------------------------------------------------------ helpers


def wedge(xi):
    """[v; w] (6,) -> (4, 4) se(3) matrix."""
    out = np.zeros((4, 4))
    out[:3, :3] = skew(xi[3:])
    out[:3, 3] = xi[:3]
    return out


def base_pose_at(rep, w_H_b, base_vel, t):
    """Base pose after time t at constant velocity ``base_vel`` in ``rep`` (exponential map)."""
    if rep == "BODY_FIXED":  # left-trivialised: H(t) = H exp(t v^)
        return w_H_b @ expm(t * wedge(base_vel))
    if rep == "INERTIAL_FIXED":  # right-trivialised: H(t) = exp(t v^) H
        return expm(t * wedge(base_vel)) @ w_H_b
    out = np.eye(4)  # MIXED: p(t) = p + t v, R(t) = exp(t w^) R
    out[:3, :3] = expm(t * skew(base_vel[3:])) @ w_H_b[:3, :3]
    out[:3, 3] = w_H_b[:3, 3] + t * base_vel[:3]
    return out


def along(rep, st, t):
    """(w_H_b, s) at time t along the motion of state ``st``."""
    return base_pose_at(rep, st.w_H_b, st.base_vel, t), st.s + t * st.s_dot


def central_difference(f, rep, st, h=H):
    """d/dt f(w_H_b(t), s(t)) at t = 0."""
    return (np.asarray(f(*along(rep, st, h))) - np.asarray(f(*along(rep, st, -h)))) / (2 * h)


def velocity_from_pose_rate(rep, w_H_f, w_H_f_dot):
    """Frame velocity in ``rep`` from the pose and its time derivative."""
    body = np.linalg.inv(w_H_f) @ w_H_f_dot
    v_body = np.concatenate([body[:3, 3], 0.5 * np.array([body[2, 1] - body[1, 2], body[0, 2] - body[2, 0],
                                                          body[1, 0] - body[0, 1]])])
    return velocity_transform(rep, w_H_f) @ v_body


def assert_fd_close(ours, fd, what):
    assert_close(ours, fd, what + " (finite difference)", FD_RTOL)


def rpy_matrix(rpy):
    return Rotation.from_euler("xyz", rpy).as_matrix()  # URDF: Rz(y) Ry(p) Rx(r)


# ------------------------------------------------------------------------ mass matrix


def test_mass_matrix_symmetric_positive_definite(kd, rep, state):
    M = np.asarray(kd.mass_matrix(state.w_H_b, state.s))
    # symmetry is structural: only round-off of the representation transforms may remain
    assert_close(M, M.T, f"M - M^T {rep}", 1e-12)
    np.linalg.cholesky(0.5 * (M + M.T))  # raises if not positive definite
    assert np.linalg.eigvalsh(0.5 * (M + M.T)).min() > 0.0


def test_inverse_mass_matrix(kd, rep, state):
    M = np.asarray(kd.mass_matrix(state.w_H_b, state.s))
    Minv = np.asarray(kd.inverse_mass_matrix(state.w_H_b, state.s))
    # a backward-stable inverse leaves ~ n eps cond(M) in Minv M - I; n < 1000
    tol = 1e3 * np.finfo(float).eps * np.linalg.cond(M)
    err = np.abs(Minv @ M - np.eye(len(M))).max()
    assert err <= tol, f"inverse_mass_matrix @ M - I: max error {err:.3e} > {tol:.1e} ({rep})"


def test_com_jacobian_is_cmm_linear_part_over_mass(kd, rep, state):
    A = np.asarray(kd.centroidal_momentum_matrix(state.w_H_b, state.s))
    assert_close(kd.CoM_jacobian(state.w_H_b, state.s), A[:3] / kd.get_total_mass(), f"CoM_jacobian vs CMM {rep}", RTOL)


# ------------------------------------------------------------------------ RNEA / ABA / bias


def test_bias_gravity_coriolis_from_rnea(kd, core_models, model_name, case, rep, state):
    st = state
    zero6, zero_n = np.zeros(6), np.zeros(case.n)
    h = kd.bias_force(st.w_H_b, st.s, st.base_vel, st.s_dot)
    g = kd.gravity_term(st.w_H_b, st.s)
    c = kd.coriolis_term(st.w_H_b, st.s, st.base_vel, st.s_dot)
    assert_close(h, kd.rnea(st.w_H_b, st.s, st.base_vel, st.s_dot, zero6, zero_n), f"bias = rnea(a=0) {rep}", RTOL)
    assert_close(g, kd.rnea(st.w_H_b, st.s, zero6, zero_n, zero6, zero_n), f"gravity = rnea(v=0, a=0) {rep}", RTOL)
    assert_close(c, h - g, f"coriolis_term = bias - gravity {rep}", RTOL)
    no_gravity = core_models(model_name, (0.0, 0.0, 0.0))
    no_gravity.set_frame_velocity_representation(core_representation(rep))
    assert_close(c, no_gravity.bias_force(st.w_H_b, st.s, st.base_vel, st.s_dot),
                 f"coriolis_term = bias without gravity {rep}", RTOL)
    # M nu_dot + h = rnea(nu_dot)
    M = np.asarray(kd.mass_matrix(st.w_H_b, st.s))
    assert_close(kd.rnea(st.w_H_b, st.s, st.base_vel, st.s_dot, st.base_acc, st.s_ddot), M @ st.nu_dot + h,
                 f"rnea = M nu_dot + h {rep}", RTOL)


def test_aba_inverts_rnea(kd, case, rep, state, rng):
    """aba(rnea(a)) = a, the base part of rnea(a) applied as an external wrench on the base.

    The base frame's Jacobian in any representation is [I_6, 0], so a wrench w on the
    root link is the generalised force [w; 0].  And rnea(aba(tau, W), W) = [0; tau].
    """
    st = state
    kin = (st.w_H_b, st.s, st.base_vel, st.s_dot)
    r = np.asarray(kd.rnea(*kin, st.base_acc, st.s_ddot))
    assert_close(kd.aba(*kin, r[6:], external_wrenches={case.root: r[:6]}), st.nu_dot, f"aba(rnea(a)) = a {rep}", RTOL)
    wrenches = {f: rng.normal(scale=10.0, size=6) for f in case.wrench_frames}
    a = np.asarray(kd.aba(*kin, st.tau, external_wrenches=wrenches))
    assert_close(kd.rnea(*kin, a[:6], a[6:], external_wrenches=wrenches), np.concatenate([np.zeros(6), st.tau]),
                 f"rnea(aba(tau, W), W) = [0; tau] {rep}", RTOL)
    # the wrench enters as J^T w
    M = np.asarray(kd.mass_matrix(st.w_H_b, st.s))
    h = np.asarray(kd.bias_force(*kin))
    JtW = sum(np.asarray(kd.jacobian(f, st.w_H_b, st.s)).T @ w for f, w in wrenches.items())
    assert_close(M @ a, np.concatenate([np.zeros(6), st.tau]) - h + JtW, f"M aba = [0; tau] - h + J^T w {rep}", RTOL)


# ------------------------------------------------------------------------ Coriolis matrix


def test_coriolis_matrix(kd, rep, state):
    st = state
    kin = (st.w_H_b, st.s, st.base_vel, st.s_dot)
    C = np.asarray(kd.coriolis_matrix(*kin))
    assert_close(C @ st.nu, kd.coriolis_term(*kin), f"C nu = coriolis_term {rep}", RTOL)
    M_dot = central_difference(kd.mass_matrix, rep, st)
    assert_fd_close(C + C.T, M_dot, f"Mdot = C + C^T {rep}")
    N = M_dot - 2 * C
    assert_fd_close(N + N.T, np.zeros_like(N), f"Mdot - 2C skew-symmetric {rep}")


# ------------------------------------------------------------------------ kinematics by finite differences


def test_jacobian_is_pose_derivative(kd, case, rep, state):
    st = state
    for frame in case.jacobian_frames:
        w_H_f = np.asarray(kd.forward_kinematics(frame, st.w_H_b, st.s))
        H_dot = central_difference(lambda Hb, s: kd.forward_kinematics(frame, Hb, s), rep, st)
        J = np.asarray(kd.jacobian(frame, st.w_H_b, st.s))
        assert_fd_close(J @ st.nu, velocity_from_pose_rate(rep, w_H_f, H_dot), f"J nu of {frame} {rep}")
        Jdot_nu = np.asarray(kd.jacobian_dot(frame, st.w_H_b, st.s, st.base_vel, st.s_dot)) @ st.nu
        J_rate = central_difference(lambda Hb, s: kd.jacobian(frame, Hb, s), rep, st)
        assert_fd_close(Jdot_nu, J_rate @ st.nu, f"Jdot nu of {frame} {rep}")


def test_com_jacobian_is_com_derivative(kd, rep, state):
    st = state
    assert_fd_close(np.asarray(kd.CoM_jacobian(st.w_H_b, st.s)) @ st.nu,
                    central_difference(kd.CoM_position, rep, st), f"CoM velocity {rep}")


def test_relative_jacobian_is_joint_part_at_identity_base(kd, case, rep, state):
    for frame in case.jacobian_frames[:6]:
        J = np.asarray(kd.jacobian(frame, np.eye(4), state.s))
        assert_close(kd.relative_jacobian(frame, state.s), J[:, 6:], f"relative_jacobian({frame}) {rep}", RTOL)


# ------------------------------------------------------------------------ momentum and energy


@pytest.fixture(scope="module")
def urdf_inertials(model_cases):
    """{model: [(link, mass, L_H_C, I_C)]} read with urdf_parser_py."""
    out = {}
    for name, case in model_cases.items():
        robot = URDF.from_xml_string(case.urdf)
        rows = []
        for link in robot.links:
            if link.inertial is None:
                continue
            L_H_C = np.eye(4)
            if link.inertial.origin is not None:
                L_H_C[:3, :3] = rpy_matrix(link.inertial.origin.rpy or [0, 0, 0])
                L_H_C[:3, 3] = link.inertial.origin.xyz or [0, 0, 0]
            i = link.inertial.inertia
            I_C = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])
            rows.append((link.name, link.inertial.mass, L_H_C, I_C))
        out[name] = rows
    return out


def test_momentum_summed_link_by_link(kd, model_name, rep, state, urdf_inertials):
    """CMM nu = sum over URDF links of [m v_c; (c - G) x m v_c + I w], world axes."""
    st = state
    rows = urdf_inertials[model_name]
    total = sum(m for _, m, _, _ in rows)
    com = sum(m * (np.asarray(kd.forward_kinematics(L, st.w_H_b, st.s)) @ L_H_C)[:3, 3] for L, m, L_H_C, _ in rows) / total
    assert_close(kd.get_total_mass(), total, "total mass = sum of URDF masses", RTOL)
    assert_close(kd.CoM_position(st.w_H_b, st.s), com, "CoM from URDF inertials", RTOL)
    momentum = np.zeros(6)
    for link, m, L_H_C, I_C in rows:
        w_H_L = np.asarray(kd.forward_kinematics(link, st.w_H_b, st.s))
        v_L = np.linalg.solve(velocity_transform(rep, w_H_L), np.asarray(kd.jacobian(link, st.w_H_b, st.s)) @ st.nu)
        R_L = w_H_L[:3, :3]
        c_L = L_H_C[:3, 3]
        v_c = R_L @ (v_L[:3] + np.cross(v_L[3:], c_L))  # world velocity of the link's CoM
        omega = R_L @ v_L[3:]
        R_C = R_L @ L_H_C[:3, :3]
        p_c = (w_H_L @ L_H_C)[:3, 3]
        momentum[:3] += m * v_c
        momentum[3:] += np.cross(p_c - com, m * v_c) + R_C @ I_C @ R_C.T @ omega
    assert_close(np.asarray(kd.centroidal_momentum_matrix(st.w_H_b, st.s)) @ st.nu, momentum,
                 f"CMM nu = link-by-link momentum {rep}", RTOL)


def test_representation_change_preserves_energy_and_momentum(kd, case, state):
    """0.5 nu^T M nu and CMM nu are physical: the same in every representation."""
    st = state
    T = {rep: velocity_transform(rep, st.w_H_b) for rep in REPRESENTATIONS}
    v_body = st.base_vel  # read the random base velocity as BODY_FIXED and convert
    energy, momentum = {}, {}
    for rep in REPRESENTATIONS:
        kd.set_frame_velocity_representation(core_representation(rep))
        nu = np.concatenate([T[rep] @ v_body, st.s_dot])
        energy[rep] = 0.5 * nu @ np.asarray(kd.mass_matrix(st.w_H_b, st.s)) @ nu
        momentum[rep] = np.asarray(kd.centroidal_momentum_matrix(st.w_H_b, st.s)) @ nu
    for rep in REPRESENTATIONS[1:]:
        assert_close(energy[rep], energy[REPRESENTATIONS[0]], f"kinetic energy {rep} vs MIXED", RTOL)
        assert_close(momentum[rep], momentum[REPRESENTATIONS[0]], f"centroidal momentum {rep} vs MIXED", RTOL)
    kd.set_frame_velocity_representation(core_representation("MIXED"))


def test_kept_kinematics_follow_the_state_values(kd, rep, state, rng):
    """A model that keeps the last state's kinematics (``sharing_model(keep_kinematics=True)``,
    as the services' queries do) answers queries on arrays changed in place, and at another
    state and back, bit for bit as one that recomputes them every call."""
    keeping = kd.sharing_model(keep_kinematics=True)
    w_H_b, s = state.w_H_b.copy(), state.s.copy()
    queries = (lambda k: k.mass_matrix(w_H_b, s), lambda k: k.gravity_term(w_H_b, s),
               lambda k: k.centroidal_momentum_matrix(w_H_b, s),
               lambda k: k.CoM_position(w_H_b, s))
    for change in (None, "s", "w_H_b", None):
        if change == "s":
            s += rng.uniform(-0.2, 0.2, s.shape)           # in place: same array, new values
        elif change == "w_H_b":
            w_H_b[:3, 3] += rng.uniform(-1.0, 1.0, 3)
        for query in queries:
            np.testing.assert_array_equal(query(keeping), query(kd))
