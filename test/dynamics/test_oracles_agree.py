"""The harness proves itself: iDynTree and Pinocchio agree to 1e-12 on every quantity.

The two libraries share no code, handle the velocity representations differently
(iDynTree natively, Pinocchio through this harness's own transforms) and order and
parametrise joints differently, so their agreement validates the oracles used against
the core.  Runs without the core.
"""

import numpy as np
import pytest

from oracles import (
    IDynTreeOracle,
    PinocchioOracle,
    assert_close,
    default_joint_order,
    load_random_tree,
    make_case,
    random_state,
    urdf_structure,
)

random_tree_urdf = load_random_tree()

RTOL = 1e-12  # both are double-precision O(n) recursions: agreement is at round-off level


@pytest.fixture
def pair(oracles, model_name):
    return oracles["idyntree", model_name], oracles["pinocchio", model_name]


def test_forward_kinematics_of_every_link(pair, case, state):
    a, b = pair
    for frame in case.links:
        assert_close(a.forward_kinematics(frame, state.w_H_b, state.s),
                     b.forward_kinematics(frame, state.w_H_b, state.s), f"FK {frame}", RTOL)


def test_jacobians(pair, case, rep, state):
    a, b = pair
    st = state
    for frame in case.jacobian_frames:
        assert_close(a.jacobian(rep, frame, st.w_H_b, st.s), b.jacobian(rep, frame, st.w_H_b, st.s),
                     f"J {frame}", RTOL)
        assert_close(a.relative_jacobian(rep, frame, st.s), b.relative_jacobian(rep, frame, st.s),
                     f"relative J {frame}", RTOL)
        assert_close(a.jacobian_dot_nu(rep, frame, st.w_H_b, st.s, st.base_vel, st.s_dot),
                     b.jacobian_dot_nu(rep, frame, st.w_H_b, st.s, st.base_vel, st.s_dot),
                     f"Jdot nu {frame}", RTOL)
        assert_close(a.frame_velocity(rep, frame, st.w_H_b, st.s, st.base_vel, st.s_dot),
                     a.jacobian(rep, frame, st.w_H_b, st.s) @ st.nu, f"iDynTree v = J nu {frame}", RTOL)


def test_com_and_mass(pair, case, rep, state):
    a, b = pair
    st = state
    assert_close(a.com_position(st.w_H_b, st.s), b.com_position(st.w_H_b, st.s), "CoM", RTOL)
    assert_close(a.com_jacobian(rep, st.w_H_b, st.s), b.com_jacobian(rep, st.w_H_b, st.s), "CoM J", RTOL)
    assert_close(a.total_mass(), b.total_mass(), "total mass", RTOL)


def test_mass_and_centroidal_matrices(pair, rep, state):
    a, b = pair
    st = state
    assert_close(a.mass_matrix(rep, st.w_H_b, st.s), b.mass_matrix(rep, st.w_H_b, st.s), "M", RTOL)
    assert_close(a.inverse_mass_matrix(rep, st.w_H_b, st.s), b.inverse_mass_matrix(rep, st.w_H_b, st.s),
                 "M^-1", RTOL)
    assert_close(a.centroidal_momentum_matrix(rep, st.w_H_b, st.s),
                 b.centroidal_momentum_matrix(rep, st.w_H_b, st.s), "CMM", RTOL)


def test_bias_gravity_coriolis(pair, rep, state):
    a, b = pair
    st = state
    v = (st.w_H_b, st.s, st.base_vel, st.s_dot)
    assert_close(a.bias_force(rep, *v), b.bias_force(rep, *v), "bias", RTOL)
    assert_close(a.bias_force(rep, *v), b.nonlinear_effects(rep, *v), "bias vs pin.nonLinearEffects", RTOL)
    assert_close(a.bias_force(rep, *v, gravity=np.zeros(3)), b.bias_force(rep, *v, gravity=np.zeros(3)),
                 "coriolis", RTOL)
    assert_close(a.gravity_term(rep, st.w_H_b, st.s), b.gravity_term(rep, st.w_H_b, st.s), "gravity", RTOL)


def test_inverse_and_forward_dynamics(pair, case, rep, state, rng):
    a, b = pair
    st = state
    v = (st.w_H_b, st.s, st.base_vel, st.s_dot)
    wrenches = {f: rng.normal(scale=10.0, size=6) for f in case.wrench_frames}
    for ext, tag in ((None, ""), (wrenches, " with wrenches")):
        assert_close(a.rnea(rep, *v, st.base_acc, st.s_ddot, ext), b.rnea(rep, *v, st.base_acc, st.s_ddot, ext),
                     "RNEA" + tag, RTOL)
        assert_close(a.aba(rep, *v, st.tau, ext), b.aba(rep, *v, st.tau, ext), "ABA" + tag, RTOL)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(n_joints=16, seed=11, mimic=True),
        dict(n_joints=7, seed=12, branching=False, joint_types=("continuous",)),
        dict(n_joints=20, seed=13, n_fixed=20, massless_root=True),
    ],
    ids=["mimic16", "continuous_chain7", "tree20_many_frames"],
)
def test_agree_on_more_trees(kwargs, rep):
    urdf = random_tree_urdf(**kwargs)
    case = make_case("extra", urdf)
    joints = list(np.random.default_rng(1).permutation(case.joints))  # any order works
    a = IDynTreeOracle(urdf, joints)
    b = PinocchioOracle(urdf, joints)
    case.joints = joints
    st = random_state(case, np.random.default_rng(2))
    v = (st.w_H_b, st.s, st.base_vel, st.s_dot)
    ext = {f: np.random.default_rng(3).normal(size=6) for f in case.wrench_frames}
    assert_close(a.mass_matrix(rep, st.w_H_b, st.s), b.mass_matrix(rep, st.w_H_b, st.s), "M", RTOL)
    assert_close(a.bias_force(rep, *v), b.bias_force(rep, *v), "bias", RTOL)
    assert_close(a.aba(rep, *v, st.tau, ext), b.aba(rep, *v, st.tau, ext), "ABA", RTOL)
    for frame in case.links:
        assert_close(a.jacobian(rep, frame, st.w_H_b, st.s), b.jacobian(rep, frame, st.w_H_b, st.s),
                     f"J {frame}", RTOL)
        assert_close(a.jacobian_dot_nu(rep, frame, *v), b.jacobian_dot_nu(rep, frame, *v), f"Jdot nu {frame}", RTOL)


def test_default_joint_order_is_depth_first():
    """The harness's reading of the spec's default order, on a tree written in shuffled order."""
    urdf = random_tree_urdf(12, seed=1)
    root, _, joints = urdf_structure(urdf)
    order = default_joint_order(urdf)
    assert sorted(order) == sorted(n for n, (t, _, _) in joints.items() if t != "fixed")
    # every joint comes after the movable joints on its path to the root
    parent_joint = {c: (n, p) for n, (t, p, c) in joints.items()}
    for name in order:
        link = joints[name][1]
        while link != root:
            up, link = parent_joint[link]
            if joints[up][0] != "fixed":
                assert order.index(up) < order.index(name)


def test_random_tree_is_deterministic_and_valid():
    from urdf_parser_py.urdf import URDF

    a = random_tree_urdf(30, seed=5, mimic=True, n_fixed=10)
    assert a == random_tree_urdf(30, seed=5, mimic=True, n_fixed=10)
    assert a != random_tree_urdf(30, seed=6, mimic=True, n_fixed=10)
    robot = URDF.from_xml_string(a)
    assert sum(j.type != "fixed" for j in robot.joints) == 30
    assert sum(j.type == "fixed" for j in robot.joints) == 10
    assert any(j.mimic is not None for j in robot.joints)
    assert any(abs(np.linalg.norm(j.axis) - 1) > 1e-3 for j in robot.joints if j.type != "fixed")
    for link in robot.links:
        if link.inertial is not None:
            i = link.inertial.inertia
            I = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])
            d = np.linalg.eigvalsh(I)
            assert link.inertial.mass > 0 and d.min() > 0
            assert d[0] + d[1] > d[2]  # triangle inequality of the principal moments
    chain = URDF.from_xml_string(random_tree_urdf(6, seed=1, branching=False, n_fixed=0))
    parents = [j.parent for j in chain.joints]
    assert parents == [f"link_{k:03d}" for k in range(6)]
