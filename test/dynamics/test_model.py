"""Model building: re-rooting, reduced joint lists and the TF edges, against iDynTree."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from oracles import IDynTreeOracle, assert_close, default_joint_order

from kin_dyn_ros.dynamics import KinDynComputations, Representations
from kin_dyn_ros.dynamics.spatial import homogeneous, so3_exp

REPS = {"MIXED": Representations.MIXED_REPRESENTATION,
        "BODY_FIXED": Representations.BODY_FIXED_REPRESENTATION,
        "INERTIAL_FIXED": Representations.INERTIAL_FIXED_REPRESENTATION}


def _state(rng, n):
    return (homogeneous(so3_exp(rng.normal(size=3)), rng.normal(size=3)),
            rng.uniform(-1, 1, n), rng.normal(size=6), rng.normal(size=n))


@pytest.mark.parametrize("root", ["l_upper_leg", "chest", "r_forearm"])
def test_any_link_can_be_the_floating_base(icub_urdf, icub_joints, root):
    """Re-rooting reverses joints (screw form); iDynTree's setFloatingBase is the reference."""
    kd = KinDynComputations(icub_urdf, icub_joints, root_link=root)
    ref = IDynTreeOracle(icub_urdf, icub_joints, root)
    w_H_b, s, v, sd = _state(np.random.default_rng(1), kd.NDoF)
    for name, rep in REPS.items():
        kd.set_frame_velocity_representation(rep)
        assert_close(kd.mass_matrix(w_H_b, s), ref.mass_matrix(name, w_H_b, s), f"M {name}")
        assert_close(kd.bias_force(w_H_b, s, v, sd), ref.bias_force(name, w_H_b, s, v, sd),
                     f"bias {name}")
        for frame in ("l_sole", "r_hand", "head"):
            assert_close(kd.jacobian(frame, w_H_b, s), ref.jacobian(name, frame, w_H_b, s),
                         f"J {frame} {name}")
    assert_close(kd.forward_kinematics("r_sole", w_H_b, s),
                 ref.forward_kinematics("r_sole", w_H_b, s), "FK r_sole")


def test_a_reduced_joint_list_holds_the_others_at_zero(icub_urdf, icub_joints):
    legs = [j for j in icub_joints if "leg" in j or "ankle" in j or "knee" in j or "hip" in j]
    kd = KinDynComputations(icub_urdf, legs)
    ref = IDynTreeOracle(icub_urdf, legs)
    w_H_b, s, v, sd = _state(np.random.default_rng(2), len(legs))
    assert kd.joints_name_list == legs
    assert_close(kd.mass_matrix(w_H_b, s), ref.mass_matrix("MIXED", w_H_b, s), "reduced M")
    assert_close(kd.CoM_position(w_H_b, s), ref.com_position(w_H_b, s), "reduced CoM")


def test_default_joint_order_is_depth_first_in_file_order(icub_urdf):
    assert KinDynComputations(icub_urdf).joints_name_list == default_joint_order(icub_urdf)


@pytest.mark.parametrize("root", [None, "chest"])
def test_tf_edges_compose_to_the_world_poses(icub_urdf, root):
    """/tf (joint_transforms) and /tf_static (static_transforms) rebuild every link's pose."""
    kd = KinDynComputations(icub_urdf, root_link=root)
    w_H_b, s, v, sd = _state(np.random.default_rng(3), kd.NDoF)
    tick = kd.compute_tick(w_H_b, s, v, sd)
    world = {kd.model.root_link: w_H_b}
    edges = [(p, c, h) for (_, p, c), h in zip(kd.joint_frames, tick.joint_transforms)]
    edges += [(p, c, h) for _, p, c, h in kd.static_transforms]
    assert len(edges) == len(kd.frame_names) - 1
    while len(world) < len(kd.frame_names):
        for p, c, h in edges:
            if p in world and c not in world:
                world[c] = world[p] @ h
    for name in kd.frame_names:
        assert_close(world[name], kd.forward_kinematics(name, w_H_b, s), f"TF chain to {name}")


@pytest.mark.parametrize("name, root", [("icub", None), ("icub", "chest"), ("tree12", None),
                                        ("chain10_prismatic", None), ("massless_root", None)])
def test_tf_quaternions_are_the_edges_rotations(model_cases, name, root):
    """joint_quaternions (from the joint angles) are the rotations of joint_transforms
    (checked above against the world poses), as SciPy converts them: unit, w >= 0, the
    same rotation to 1e-14, SciPy's quaternion to 1e-15; on revolute and prismatic joints,
    reversed ones (another root) and angles up to 3 pi (where the half-angle form changes
    sign)."""
    case = model_cases[name]
    kd = KinDynComputations(case.urdf, case.joints, root_link=root)
    rng = np.random.default_rng(4)
    for scale in (1.0, 3.0 * np.pi):
        w_H_b, s, v, sd = _state(rng, kd.NDoF)
        tick = kd.compute_tick(w_H_b, scale * s, v, sd)
        rotations = tick.joint_transforms[:, :3, :3]
        quats = tick.joint_quaternions
        assert quats.shape == (kd.NDoF, 4) and (quats[:, 3] >= 0.0).all()
        np.testing.assert_allclose(np.linalg.norm(quats, axis=1), 1.0, rtol=0, atol=1e-14)
        np.testing.assert_allclose(Rotation.from_quat(quats).as_matrix(), rotations,
                                   rtol=0, atol=1e-14)
        ref = Rotation.from_matrix(rotations).as_quat()
        ref *= np.where(ref[:, 3:] < 0.0, -1.0, 1.0)
        near_half_turn = np.abs(ref[:, 3]) < 1e-9       # w ~ 0: q and -q both have w >= 0
        np.testing.assert_allclose(quats[~near_half_turn], ref[~near_half_turn],
                                   rtol=0, atol=1e-15)


def test_bad_root_link_and_joint_list_are_named(icub_urdf):
    with pytest.raises(ValueError, match="no_such_link"):
        KinDynComputations(icub_urdf, root_link="no_such_link")
    with pytest.raises(ValueError, match="torso_pitch.*twice"):
        KinDynComputations(icub_urdf, ["torso_pitch", "torso_pitch"])


def test_sharing_model_has_its_own_representation(icub_urdf):
    """sharing_model(): the same model object, no second parse; setting the copy's velocity
    representation leaves the original's, and each computes as a fresh instance would."""
    kd = KinDynComputations(icub_urdf)
    other = kd.sharing_model()
    assert other.model is kd.model
    other.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
    assert kd.rep == Representations.MIXED_REPRESENTATION
    fresh = KinDynComputations(icub_urdf)
    fresh.set_frame_velocity_representation(Representations.BODY_FIXED_REPRESENTATION)
    rng = np.random.default_rng(8)
    w_H_b = homogeneous(so3_exp(rng.normal(size=3)), rng.normal(size=3))
    s, nu, s_dot = rng.normal(size=kd.NDoF), rng.normal(size=6), rng.normal(size=kd.NDoF)
    np.testing.assert_array_equal(other.bias_force(w_H_b, s, nu, s_dot),
                                  fresh.bias_force(w_H_b, s, nu, s_dot))
    assert not np.array_equal(kd.bias_force(w_H_b, s, nu, s_dot),
                              other.bias_force(w_H_b, s, nu, s_dot))
