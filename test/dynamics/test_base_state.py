"""The base state from other data: a base velocity in another representation, and the
base pose and velocity from the odometry of any link (REP-105), checked against the core's
Jacobians and the twist identities of each representation."""

import numpy as np
import pytest

from kin_dyn_ros.dynamics import KinDynComputations, Representations
from kin_dyn_ros.dynamics.base_state import base_state_from_odometry, change_base_representation
from kin_dyn_ros.dynamics.spatial import so3_exp

REPS = list(Representations)


@pytest.fixture(scope='module')
def icub(icub_urdf):
    return KinDynComputations(icub_urdf)


@pytest.fixture(scope='module')
def icub_body(icub_urdf):
    kd = KinDynComputations(icub_urdf)
    kd.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
    return kd


def random_pose(rng):
    h = np.eye(4)
    h[:3, :3] = so3_exp(rng.normal(size=3))
    h[:3, 3] = rng.normal(size=3)
    return h


@pytest.mark.parametrize('representation', REPS, ids=lambda r: r.name)
@pytest.mark.parametrize('child', ['root_link', 'l_sole', 'r_hand'])
def test_base_state_from_odometry_reproduces_the_child_twist(icub, icub_body, representation,
                                                             child):
    """J_child(q) [nu_b; s_dot] (core, in rep) equals the odometry twist given in the child
    frame (REP-105), and the child's pose is reproduced."""
    rep = representation     # (the conftest parametrises 'rep' with oracle names)
    rng = np.random.default_rng(2)
    n = icub.NDoF
    s, s_dot = rng.uniform(-1, 1, n), rng.normal(size=n)
    w_H_c, twist_c = random_pose(rng), rng.normal(size=6)
    w_H_b, nu = base_state_from_odometry(
        w_H_c, twist_c, icub_body.forward_kinematics(child, np.eye(4), s),
        icub_body.relative_jacobian(child, s), s_dot, rep)
    icub.set_frame_velocity_representation(rep)
    try:
        np.testing.assert_allclose(icub.forward_kinematics(child, w_H_b, s), w_H_c, atol=1e-12)
        v_rep = icub.jacobian(child, w_H_b, s) @ np.concatenate([nu, s_dot])
    finally:
        icub.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
    # the child's twist in rep, from its body twist
    r, p = w_H_c[:3, :3], w_H_c[:3, 3]
    v_lin, w = r @ twist_c[:3], r @ twist_c[3:]
    expected = {Representations.BODY_FIXED_REPRESENTATION: twist_c,
                Representations.MIXED_REPRESENTATION: np.concatenate([v_lin, w]),
                Representations.INERTIAL_FIXED_REPRESENTATION:
                    np.concatenate([v_lin - np.cross(w, p), w])}[rep]
    np.testing.assert_allclose(v_rep, expected, atol=1e-10)


def test_change_base_representation_round_trip():
    rng = np.random.default_rng(3)
    h, nu = random_pose(rng), rng.normal(size=6)
    for a in REPS:
        for b in REPS:
            there = change_base_representation(nu, h, a, b)
            np.testing.assert_allclose(change_base_representation(there, h, b, a), nu,
                                       atol=1e-12)


def test_a_body_velocity_in_mixed_is_its_rotation_to_world_axes():
    """BODY_FIXED -> MIXED (the node's odometry, every message): the base origin's velocity
    and the angular velocity, each rotated into world axes: [R v; R w]."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        h, nu = random_pose(rng), rng.normal(size=6)
        got = change_base_representation(nu, h, Representations.BODY_FIXED_REPRESENTATION,
                                         Representations.MIXED_REPRESENTATION)
        np.testing.assert_allclose(got, np.concatenate([h[:3, :3] @ nu[:3], h[:3, :3] @ nu[3:]]),
                                   rtol=0, atol=1e-15)
        assert got.shape == (6,) and got.flags.c_contiguous
