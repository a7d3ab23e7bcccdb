"""Every quantity of the core API against iDynTree.

Parametrised (conftest) over the models of ``MODEL_NAMES`` x the three representations
x ``N_STATES`` random states.  Tolerance: ``|ours - ref| <= 1e-10 max(1, max|ref|)``
(``assert_close``); the two oracles agree with each other to 1e-12
(test_oracles_agree.py), so a failure here is the core's.

The test class is reused by test_against_pinocchio.py with ``oracle_kind`` switched.
"""

import numpy as np
import pytest

from oracles import (
    GRAVITY,
    assert_close,
    compare_with_idyntree,
    urdf_structure,
    wrench_in_frame_to_inertial,
    wrench_to_rep,
)

RTOL = 1e-10


class TestAgainstIDynTree:
    oracle_kind = "idyntree"

    @pytest.fixture
    def ref(self, oracles, model_name):
        return oracles[self.oracle_kind, model_name]

    # ---------------------------------------------------------------- model facts

    def test_model_facts(self, kd, ref, case):
        assert list(kd.joints_name_list) == case.joints
        assert kd.NDoF == case.n
        assert sorted(kd.frame_names) == sorted(case.links)
        assert_close(kd.get_total_mass(), ref.total_mass(), "total mass", RTOL)

    # ---------------------------------------------------------------- kinematics

    def test_forward_kinematics_every_frame(self, kd, ref, case, state):
        for frame in case.links:
            assert_close(kd.forward_kinematics(frame, state.w_H_b, state.s),
                         ref.forward_kinematics(frame, state.w_H_b, state.s), f"forward_kinematics({frame})", RTOL)

    def test_jacobians(self, kd, ref, case, rep, state):
        st = state
        for frame in case.jacobian_frames:
            assert_close(kd.jacobian(frame, st.w_H_b, st.s), ref.jacobian(rep, frame, st.w_H_b, st.s),
                         f"jacobian({frame}) {rep}", RTOL)
            assert_close(kd.relative_jacobian(frame, st.s), ref.relative_jacobian(rep, frame, st.s),
                         f"relative_jacobian({frame}) {rep}", RTOL)

    def test_jacobian_dot_times_nu(self, kd, ref, case, rep, state):
        st = state
        for frame in case.jacobian_frames:
            Jdot = kd.jacobian_dot(frame, st.w_H_b, st.s, st.base_vel, st.s_dot)
            assert np.shape(Jdot) == (6, 6 + case.n)
            assert_close(Jdot @ st.nu, ref.jacobian_dot_nu(rep, frame, st.w_H_b, st.s, st.base_vel, st.s_dot),
                         f"jacobian_dot({frame}) @ nu {rep}", RTOL)

    def test_center_of_mass(self, kd, ref, rep, state):
        st = state
        assert_close(kd.CoM_position(st.w_H_b, st.s), ref.com_position(st.w_H_b, st.s), "CoM_position", RTOL)
        assert_close(kd.CoM_jacobian(st.w_H_b, st.s), ref.com_jacobian(rep, st.w_H_b, st.s),
                     f"CoM_jacobian {rep}", RTOL)

    # ---------------------------------------------------------------- dynamics

    def test_mass_matrix(self, kd, ref, rep, state):
        st = state
        assert_close(kd.mass_matrix(st.w_H_b, st.s), ref.mass_matrix(rep, st.w_H_b, st.s), f"mass_matrix {rep}", RTOL)

    def test_inverse_mass_matrix(self, kd, ref, rep, state):
        st = state
        assert_close(kd.inverse_mass_matrix(st.w_H_b, st.s), ref.inverse_mass_matrix(rep, st.w_H_b, st.s),
                     f"inverse_mass_matrix {rep}", RTOL)

    def test_centroidal_momentum_matrix(self, kd, ref, rep, state):
        st = state
        assert_close(kd.centroidal_momentum_matrix(st.w_H_b, st.s),
                     ref.centroidal_momentum_matrix(rep, st.w_H_b, st.s), f"centroidal_momentum_matrix {rep}", RTOL)

    def test_bias_coriolis_gravity(self, kd, ref, rep, state):
        st = state
        v = (st.w_H_b, st.s, st.base_vel, st.s_dot)
        assert_close(kd.bias_force(*v), ref.bias_force(rep, *v), f"bias_force {rep}", RTOL)
        assert_close(kd.coriolis_term(*v), ref.bias_force(rep, *v, gravity=np.zeros(3)), f"coriolis_term {rep}", RTOL)
        assert_close(kd.gravity_term(st.w_H_b, st.s), ref.gravity_term(rep, st.w_H_b, st.s), f"gravity_term {rep}", RTOL)

    def test_rnea(self, kd, ref, case, rep, state, rng):
        st = state
        v = (st.w_H_b, st.s, st.base_vel, st.s_dot, st.base_acc, st.s_ddot)
        assert_close(kd.rnea(*v), ref.rnea(rep, *v), f"rnea {rep}", RTOL)
        wrenches = {f: rng.normal(scale=10.0, size=6) for f in case.wrench_frames}
        assert_close(kd.rnea(*v, external_wrenches=wrenches), ref.rnea(rep, *v, wrenches),
                     f"rnea with wrenches on {case.wrench_frames} {rep}", RTOL)

    def test_aba(self, kd, ref, case, rep, state, rng):
        st = state
        v = (st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau)
        assert_close(kd.aba(*v), ref.aba(rep, *v), f"aba {rep}", RTOL)
        wrenches = {f: rng.normal(scale=10.0, size=6) for f in case.wrench_frames}
        assert_close(kd.aba(*v, external_wrenches=wrenches), ref.aba(rep, *v, wrenches),
                     f"aba with wrenches on {case.wrench_frames} {rep}", RTOL)

    def test_compute_tick(self, kd, ref, case, rep, state, rng):
        st = state
        kin = (st.w_H_b, st.s, st.base_vel, st.s_dot)
        # wrenches as an F/T sensor reports them: about another frame's origin, in its axes
        moving_links = [link for link in case.links if link not in case.fixed_children and link != case.root]
        link_a, link_b = case.wrench_frames[0], moving_links[len(moving_links) // 2]
        frame_wrenches = {
            link_a: (case.links[0], rng.normal(scale=10.0, size=6)),  # expressed in the root's frame
            link_b: (case.wrench_frames[1], rng.normal(scale=10.0, size=6)),  # on another body
        }
        ext = {}
        for link, (expressed, w) in frame_wrenches.items():
            w_inertial = wrench_in_frame_to_inertial(ref.forward_kinematics(expressed, st.w_H_b, st.s), w)
            ext[link] = wrench_to_rep(rep, ref.forward_kinematics(link, st.w_H_b, st.s), w_inertial)

        tick = kd.compute_tick(*kin, tau=st.tau, frame_wrenches=frame_wrenches)
        assert tuple(tick.frame_names) == tuple(kd.frame_names)
        for k in (0, len(case.links) - 1):      # one link's pose alone, before all of them
            assert_close(tick.world_H_frame(k), ref.forward_kinematics(tick.frame_names[k], st.w_H_b, st.s),
                         f"tick world_H_frame({k})", RTOL)
        poses = np.asarray(tick.world_H_frames)
        assert poses.shape == (len(case.links), 4, 4)
        for k, frame in enumerate(tick.frame_names):
            assert_close(poses[k], ref.forward_kinematics(frame, st.w_H_b, st.s), f"tick world_H_frames[{frame}]", RTOL)
        assert_close(tick.com, ref.com_position(st.w_H_b, st.s), "tick com", RTOL)
        assert_close(tick.com_velocity, ref.com_jacobian(rep, st.w_H_b, st.s) @ st.nu, f"tick com_velocity {rep}", RTOL)
        assert_close(tick.centroidal_momentum, ref.centroidal_momentum_matrix(rep, st.w_H_b, st.s) @ st.nu,
                     f"tick centroidal_momentum {rep}", RTOL)
        assert_close(tick.gravity_torques, ref.gravity_term(rep, st.w_H_b, st.s)[6:], "tick gravity_torques", RTOL)
        acc = ref.aba(rep, *kin, st.tau, ext)
        assert_close(tick.base_acceleration, acc[:6], f"tick base_acceleration {rep}", RTOL)
        assert_close(tick.joint_accelerations, acc[6:], f"tick joint_accelerations {rep}", RTOL)

        no_tau = kd.compute_tick(*kin)
        assert no_tau.base_acceleration is None and no_tau.joint_accelerations is None
        assert_close(no_tau.centroidal_momentum, tick.centroidal_momentum, "tick without tau: momentum", RTOL)


def test_other_root_link(model_cases, rep):
    """``root_link`` other than the URDF root: the same tree floating from another link.

    iDynTree re-roots natively (``setFloatingBase``); Pinocchio cannot, so this one is
    iDynTree only.  The base pose and velocity are then those of ``root_link``.
    """
    from kin_dyn_ros.dynamics import KinDynComputations

    case = model_cases["tree12"]
    _, _, joints = urdf_structure(case.urdf)
    new_root = joints[case.joints[len(case.joints) // 2]][2]  # child link of a movable joint
    kd = KinDynComputations(case.urdf, case.joints, new_root, GRAVITY)
    st = compare_with_idyntree(kd, case.urdf, case.joints, rep, seed=7, what=f"re-rooted {rep}",
                               root=new_root, rtol=RTOL)
    assert_close(kd.forward_kinematics(new_root, st.w_H_b, st.s), st.w_H_b, "FK of the new root", RTOL)
