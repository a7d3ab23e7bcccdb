"""Unit tests of the demo's motion source (pure NumPy, no ROS).

The motion must be kinematically exact (feet fixed, velocities and accelerations the
derivatives of the positions) and dynamically exact (contact wrenches balance the base rows
of the equations of motion, forward dynamics gives the motion's accelerations back), on iCub
(hand-made posture), on Talos and Unitree G1 (example-robot-data: the squat made from their
leg kinematics, on the feet the demo guesses, with G1's soles 3.5 cm below its foot links)
and on a random tree (fixed base). For the other humanoids also: the soles flat on the
ground, the CoM at a plausible height that goes down and up by centimetres, and Newton's law
for the CoM (the contact forces sum to m (c'' - g), with c'' by finite differences: no
inverse dynamics involved).
"""

import numpy as np
import pytest

import icub_models

from kin_dyn_ros.dynamics import KinDynComputations, Representations
from kin_dyn_ros.dynamics.contacts import convex_hull
from kin_dyn_ros.dynamics.representations import base_transform, parse_representation
from kin_dyn_ros.demo.robot import load_robot
from random_tree import random_tree_urdf  # test/support
from kin_dyn_ros.demo.motion import (NOMINAL_FOOT, JointTrajectory, Motion,
                                     base_acceleration_in, body_twist, foot_outline,
                                     rotation_log, wrench_in_frame)

H = 1e-4             # step of the central differences [s]
TIMES = np.linspace(0.0, 4.0, 9)[:-1] + 0.13


@pytest.fixture(scope="module")
def icub_motion():
    kd = KinDynComputations(icub_models.get_model_file("iCubGazeboV2_5"))
    return Motion(kd)


@pytest.fixture(scope="module")
def tree_motion():
    kd = KinDynComputations(random_tree_urdf(8, seed=3))
    return Motion(kd)


def _humanoid(path):
    robot = load_robot(path)
    motion = Motion(robot.kd, feet=robot.feet,
                    sole_heights={f: s.height for f, s in robot.soles.items()})
    return robot, motion


@pytest.fixture(scope="module")
def talos(talos_urdf):
    return _humanoid(talos_urdf)


@pytest.fixture(scope="module")
def g1(g1_urdf):
    return _humanoid(g1_urdf)


@pytest.fixture
def motion_of(request):
    """motion_of(name): the Motion of 'icub', 'tree', 'talos' or 'g1'."""
    def get(name):
        value = request.getfixturevalue(name if name in ("talos", "g1") else f"{name}_motion")
        return value[1] if isinstance(value, tuple) else value
    return get


ALL = ["icub", "tree", "talos", "g1"]
# CoM height range [m] above the soles, plausible for each robot standing (knees bent)
COM_HEIGHT = {"talos": (0.80, 1.00), "g1": (0.55, 0.75)}


def test_icub_is_a_biped_with_a_six_joint_right_leg(icub_motion):
    assert icub_motion.mode == "biped"
    assert icub_motion.contacts == ["l_sole", "r_sole"]
    assert [icub_motion.joints[k] for k in icub_motion.ik] == [
        "r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"]


def test_feet_are_flat_on_the_ground(icub_motion):
    for pose in (icub_motion.w_H_left, icub_motion.w_H_right):
        np.testing.assert_allclose(pose[:3, :3], np.eye(3), atol=1e-12)
        assert pose[2, 3] == 0.0


def test_feet_stay_fixed(icub_motion):
    kd = icub_motion.kd
    for t in TIMES:
        x = icub_motion.sample(t)
        for frame, fixed in (("l_sole", icub_motion.w_H_left), ("r_sole", icub_motion.w_H_right)):
            np.testing.assert_allclose(kd.forward_kinematics(frame, x.w_H_b, x.s), fixed,
                                       rtol=0, atol=1e-9, err_msg=f"{frame} at t={t}")
            np.testing.assert_allclose(x.contact_poses[frame], fixed, rtol=0, atol=1e-9)


def test_joint_positions_stay_inside_the_limits(icub_motion):
    kd = icub_motion.kd
    for x in icub_motion.table(20):
        for name, q in zip(kd.joints_name_list, x.s):
            lower, upper = kd.model.limits[name][:2]
            assert lower <= q <= upper, (name, q)


def _central(f, t):
    return (f(t + H) - f(t - H)) / (2 * H)


@pytest.mark.parametrize("which", ALL)
def test_velocities_and_accelerations_match_finite_differences(which, motion_of):
    motion = motion_of(which)
    for t in TIMES[:4]:
        x = motion.sample(t)
        plus, minus = motion.sample(t + H), motion.sample(t - H)
        # error of the central difference: h^2/6 |x'''| ~ 1e-8 |x'''|
        np.testing.assert_allclose((plus.s - minus.s) / (2 * H), x.s_dot, rtol=0, atol=1e-6)
        np.testing.assert_allclose((plus.s_dot - minus.s_dot) / (2 * H), x.s_ddot, rtol=0,
                                   atol=1e-5)
        lin = (plus.w_H_b[:3, 3] - minus.w_H_b[:3, 3]) / (2 * H)
        ang = rotation_log(plus.w_H_b[:3, :3] @ minus.w_H_b[:3, :3].T) / (2 * H)
        np.testing.assert_allclose(np.concatenate([lin, ang]), x.base_velocity, rtol=0,
                                   atol=1e-6)
        np.testing.assert_allclose((plus.base_velocity - minus.base_velocity) / (2 * H),
                                   x.base_acceleration, rtol=0, atol=1e-5)


@pytest.mark.parametrize("which", ALL)
def test_wrenches_balance_the_base_rows(which, motion_of):
    motion = motion_of(which)
    kd = motion.kd
    for t in TIMES:
        x = motion.sample(t)
        args = (x.w_H_b, x.s, x.base_velocity, x.s_dot, x.base_acceleration, x.s_ddot)
        base = kd.rnea(*args)[:6]
        total = sum(kd.jacobian(f, x.w_H_b, x.s).T @ w for f, w in x.wrenches.items())
        np.testing.assert_allclose(total[:6], base, rtol=0, atol=1e-9)
        residual = kd.rnea(*args, external_wrenches=x.wrenches)
        np.testing.assert_allclose(residual[:6], 0.0, atol=1e-9)
        np.testing.assert_allclose(residual[6:], x.tau, rtol=0, atol=1e-12)


@pytest.mark.parametrize("which", ALL)
def test_forward_dynamics_returns_the_motion(which, motion_of):
    """What the node computes: compute_tick with the torques and the sole-frame wrenches."""
    motion = motion_of(which)
    kd = motion.kd
    for t in TIMES[::2]:
        x = motion.sample(t)
        frame_wrenches = {f: (f, wrench_in_frame(x.contact_poses[f], w))
                          for f, w in x.wrenches.items()}
        tick = kd.compute_tick(x.w_H_b, x.s, x.base_velocity, x.s_dot, x.tau, frame_wrenches)
        np.testing.assert_allclose(tick.joint_accelerations, x.s_ddot, rtol=0, atol=1e-8)
        np.testing.assert_allclose(tick.base_acceleration, x.base_acceleration, rtol=0,
                                   atol=1e-8)


def test_icub_load_is_plausible(icub_motion):
    """Both feet push (fz > 0), centres of pressure stay under the soles, CoM between them."""
    for x in icub_motion.table(10):
        for frame, w in x.wrenches.items():
            local = wrench_in_frame(x.contact_poses[frame], w)
            assert local[2] > 50.0
            cop = np.array([-local[4], local[3]]) / local[2]
            assert -0.05 < cop[0] < 0.10 and abs(cop[1]) < 0.03, (frame, cop)
        assert icub_motion.w_H_right[1, 3] < x.com[1] < icub_motion.w_H_left[1, 3]


def test_model_without_feet_falls_back_to_a_fixed_base(tree_motion):
    assert tree_motion.mode == "fixed-base"
    assert "no frame" in tree_motion.reason
    assert tree_motion.contacts == [tree_motion.kd.model.root_link]
    x = tree_motion.sample(0.3)
    np.testing.assert_array_equal(x.w_H_b, np.eye(4))
    np.testing.assert_array_equal(x.base_velocity, np.zeros(6))
    assert np.abs(x.s_dot).max() > 0


def test_motion_is_periodic(icub_motion):
    a, b = icub_motion.sample(0.7), icub_motion.sample(0.7 + icub_motion.period)
    np.testing.assert_allclose(b.s, a.s, atol=1e-12)
    np.testing.assert_allclose(b.w_H_b, a.w_H_b, atol=1e-12)
    np.testing.assert_allclose(b.tau, a.tau, atol=1e-9)


def test_joint_trajectory_derivatives():
    traj = JointTrajectory([0.1, -0.2], [(0, 0.3, 1, 0.5), (1, 0.2, 2, 0.0), (0, 0.1, 2, 1.0)],
                           period=2.0)
    t = 0.37
    q, qd, qdd = traj(t)
    np.testing.assert_allclose(_central(lambda u: traj(u)[0], t), qd, atol=1e-7)
    np.testing.assert_allclose(_central(lambda u: traj(u)[1], t), qdd, atol=1e-7)
    lower, upper = traj.bounds()
    np.testing.assert_allclose(lower, [-0.3, -0.4])
    np.testing.assert_allclose(upper, [0.5, 0.0])


def test_conversions_to_local_axes():
    rng = np.random.default_rng(0)
    rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    rot *= np.linalg.det(rot)
    pose = np.eye(4)
    pose[:3, :3] = rot
    pose[:3, 3] = rng.normal(size=3)
    vec = rng.normal(size=6)
    local = wrench_in_frame(pose, vec)
    np.testing.assert_allclose(rot @ local[:3], vec[:3], atol=1e-12)
    np.testing.assert_allclose(rot @ local[3:], vec[3:], atol=1e-12)
    np.testing.assert_allclose(body_twist(pose, vec), local, atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 0.3, 2.0, np.pi - 1e-6, np.pi])
def test_rotation_log(angle):
    axis = np.array([0.2, -0.5, 0.8]) / np.linalg.norm([0.2, -0.5, 0.8])
    from kin_dyn_ros.dynamics.spatial import so3_exp
    rot = so3_exp(axis * angle)
    log = rotation_log(rot)
    np.testing.assert_allclose(so3_exp(log), rot, atol=1e-9)
    if angle < 3.0:
        np.testing.assert_allclose(log, axis * angle, atol=1e-9)


def test_foot_outline_from_the_collision_box(icub_motion):
    urdf = open(icub_models.get_model_file("iCubGazeboV2_5")).read()
    for sole in ("l_sole", "r_sole"):
        outline = foot_outline(icub_motion.kd, urdf, sole)
        size = outline.max(axis=0) - outline.min(axis=0)
        np.testing.assert_allclose(size, [0.16, 0.072], atol=1e-9)    # l_foot's <box>
        assert outline.min(axis=0)[0] < 0 < outline.max(axis=0)[0]    # sole origin inside


def test_foot_outline_without_a_box_is_nominal(tree_motion):
    urdf = random_tree_urdf(8, seed=3)
    outline = foot_outline(tree_motion.kd, urdf, tree_motion.kd.model.root_link)
    np.testing.assert_allclose(outline.max(axis=0) - outline.min(axis=0), NOMINAL_FOOT)


@pytest.mark.parametrize("rep", ["BODY_FIXED", "INERTIAL_FIXED", "MIXED"])
def test_base_acceleration_in_other_representations(rep, icub_motion):
    """The node may publish forward dynamics in any representation: the motion's base
    acceleration converted must match the core's forward dynamics in that representation."""
    kd = KinDynComputations(icub_models.get_model_file("iCubGazeboV2_5"))
    kd.set_frame_velocity_representation(rep)
    x = icub_motion.sample(0.9)
    mixed = Representations.MIXED_REPRESENTATION
    t_m, t_x = base_transform(mixed, x.w_H_b), base_transform(parse_representation(rep), x.w_H_b)
    nu = np.linalg.solve(t_x, t_m @ x.base_velocity)
    frame_wrenches = {f: (f, wrench_in_frame(x.contact_poses[f], w))
                      for f, w in x.wrenches.items()}
    tick = kd.compute_tick(x.w_H_b, x.s, nu, x.s_dot, x.tau, frame_wrenches)
    expected = base_acceleration_in(parse_representation(rep), x.w_H_b, x.base_velocity,
                                    x.base_acceleration)
    np.testing.assert_allclose(tick.base_acceleration, expected, rtol=0, atol=1e-8)
    np.testing.assert_allclose(tick.joint_accelerations, x.s_ddot, rtol=0, atol=1e-8)


@pytest.mark.parametrize("which, feet, squat", [
    ("talos", ("left_sole_link", "right_sole_link"),
     ["leg_left_3_joint", "leg_left_4_joint", "leg_left_5_joint"]),
    ("g1", ("left_ankle_roll_link", "right_ankle_roll_link"),
     ["left_hip_pitch_joint", "left_knee_joint", "left_ankle_pitch_joint"])])
def test_other_humanoids_squat_on_their_feet(which, feet, squat, request):
    robot, motion = request.getfixturevalue(which)
    assert motion.mode == "biped" and motion.posture == "kinematic", motion.reason
    assert tuple(motion.contacts) == feet
    assert motion.squat_joints == squat and len(motion.sway_joints) == 2
    kd, mass = motion.kd, motion.kd.get_total_mass()
    fixed = {feet[0]: motion.w_H_left, feet[1]: motion.w_H_right}
    heights = []
    for x in motion.table(20):
        for foot, pose in fixed.items():
            h = kd.forward_kinematics(foot, x.w_H_b, x.s)
            np.testing.assert_allclose(h, pose, atol=1e-9)
            np.testing.assert_allclose(h[:3, 2], [0, 0, 1], atol=1e-12)   # sole flat
            corners = robot.soles[foot].points @ h[:3, :3].T + h[:3, 3]
            np.testing.assert_allclose(corners[:, 2], 0.0, atol=1e-9)   # on the ground
        for name, q in zip(kd.joints_name_list, x.s):
            lower, upper = kd.model.limits[name][:2]
            assert lower <= q <= upper, (name, q)
        # the CoM above the support polygon (the motion is slow: nearly static)
        hull = convex_hull(np.vstack([
            (robot.soles[f].points @ fixed[f][:3, :3].T + fixed[f][:3, 3])[:, :2]
            for f in feet]))
        edges = np.roll(hull, -1, axis=0) - hull
        cross = edges[:, 0] * (x.com[1] - hull[:, 1]) - edges[:, 1] * (x.com[0] - hull[:, 0])
        assert (cross > 0).all(), (x.t, x.com)
        heights.append(x.com[2])
        # Newton: the contact forces sum to m (c'' - g)
        c_ddot = (motion.sample(x.t + H).com - 2 * x.com + motion.sample(x.t - H).com) / H ** 2
        total = sum(w[:3] for w in x.wrenches.values())
        np.testing.assert_allclose(total, mass * (c_ddot - kd.gravity), rtol=0, atol=2e-3)
        for foot in feet:
            assert wrench_in_frame(x.contact_poses[foot], x.wrenches[foot])[2] > 0.15 * mass * 9.8
    low, high = COM_HEIGHT[which]
    assert low < min(heights) and max(heights) < high, (min(heights), max(heights))
    assert max(heights) - min(heights) > 0.03     # the squat


def test_sampling_out_of_order_gives_the_same_state(g1):
    _, motion = g1
    in_order = [motion.sample(t) for t in (0.5, 0.502, 0.504)]
    for t, x in zip((3.1, 0.504, 1.9, 0.5, 0.502), (None, in_order[2], None, in_order[0],
                                                    in_order[1])):
        y = motion.sample(t)
        if x is not None:
            np.testing.assert_allclose(y.s, x.s, atol=1e-10)
            np.testing.assert_allclose(y.w_H_b, x.w_H_b, atol=1e-10)


def test_feet_none_is_a_fixed_base(icub_motion):
    motion = Motion(icub_motion.kd, feet=None)
    assert motion.mode == "fixed-base" and motion.contacts == ["root_link"]
