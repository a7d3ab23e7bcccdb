"""Unit tests of the demo's recorder (MCAP, ros2msg schemas) and plots, without ROS."""

import struct

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from mcap_ros2._dynamic import serialize_dynamic

from kin_dyn_ros.dynamics.contacts import convex_hull
from kin_dyn_ros.demo.plots import (Series, _busiest_joints, _with_gaps, joint_groups,
                                    joint_label, plot_all)
from kin_dyn_ros.demo.recorder import SEPARATOR, McapRecorder, message_definition


@pytest.fixture
def prefix(tmp_path):
    """An install prefix with share/<pkg>/msg/*.msg files, like the ament index."""
    files = {
        "demo_msgs/msg/Outer.msg": "# a comment line\nstd_msgs/Header header\n"
                                   "Inner[] inners      # same package, unqualified\n"
                                   "other_msgs/Other other\nInner[3] fixed\n"
                                   "string<=8 bounded\nint32 LIMIT=4\n",
        "demo_msgs/msg/Inner.msg": "float64 x 0.5\nbuiltin_interfaces/Time t\n",
        "other_msgs/msg/Other.msg": "demo_msgs/Inner inner\nuint8[<=2] small\n",
        "std_msgs/msg/Header.msg": "builtin_interfaces/Time stamp\nstring frame_id\n",
        "builtin_interfaces/msg/Time.msg": "int32 sec\nuint32 nanosec\n",
    }
    for name, text in files.items():
        pkg, _, file = name.split("/")
        path = tmp_path / "share" / pkg / "msg" / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(tmp_path)


def test_message_definition_is_rosbag2s_ros2msg(prefix):
    text = message_definition("demo_msgs/msg/Outer", [prefix])
    parts = text.split(SEPARATOR + "\n")
    assert parts[0].startswith("# a comment line\nstd_msgs/Header header")
    names = [p.splitlines()[0] for p in parts[1:]]
    assert names == ["MSG: std_msgs/msg/Header", "MSG: builtin_interfaces/msg/Time",
                     "MSG: demo_msgs/msg/Inner", "MSG: other_msgs/msg/Other"]
    assert len(SEPARATOR) == 80
    assert message_definition("demo_msgs/Outer", [prefix]) == text


def test_message_definition_names_a_missing_file(prefix):
    with pytest.raises(FileNotFoundError, match="nope_msgs/msg/Missing.msg"):
        message_definition("nope_msgs/msg/Missing", [prefix])
    with pytest.raises(ValueError, match="expected a message type"):
        message_definition("Missing", [prefix])


def test_recorder_writes_cdr_that_decodes_with_its_schema(prefix, tmp_path):
    encode = serialize_dynamic("demo_msgs/msg/Inner",
                               message_definition("demo_msgs/msg/Inner", [prefix])
                               )["demo_msgs/msg/Inner"]
    path = tmp_path / "rec.mcap"
    with McapRecorder(path, prefixes=[prefix]) as rec:
        rec.add_topic("/inner", "demo_msgs/msg/Inner")
        rec.add_topic("/inner", "demo_msgs/msg/Inner")       # again: no-op
        with pytest.raises(ValueError, match="already recorded"):
            rec.add_topic("/inner", "other_msgs/msg/Other")
        for k in range(3):
            rec.write("/inner", encode({"x": 0.25 * k, "t": {"sec": k, "nanosec": 7}}),
                      log_time_ns=1000 + k)
        rec.add_metadata("demo", {"rate": 500})
        assert rec.counts == {"/inner": 3}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        assert reader.get_header().profile == "ros2"
        got = [(ch.topic, sch.name, sch.encoding, ch.message_encoding, msg.log_time, dec.x,
                dec.t.sec) for sch, ch, msg, dec in reader.iter_decoded_messages()]
    assert got == [("/inner", "demo_msgs/msg/Inner", "ros2msg", "cdr", 1000 + k, 0.25 * k, k)
                   for k in range(3)]


def _series(n=4, k=200, equilibrium=True):
    t = np.arange(k) / 100.0
    acc = np.sin(t[:, None] * np.arange(1, n + 1))
    eq_t = t[::5] if equilibrium else np.zeros(0)
    return Series(
        t=t, joint_names=["l_hip_pitch", "l_knee", "r_shoulder_roll", "torso_yaw"][:n],
        com=np.stack([0.01 * np.sin(t), 0.02 * np.cos(t), 0.5 + 0.01 * t], axis=1),
        momentum=np.tile(np.arange(6.0), (k, 1)), gravity_torques=acc * 2.0, mass=30.0,
        motion_com=np.zeros((k, 3)), fd_joint_acc=acc + 1e-13, motion_joint_acc=acc,
        fd_base_acc=np.zeros((k, 6)), motion_base_acc=np.zeros((k, 6)),
        feet={"l_sole": np.array([[0, 0.04], [0.1, 0.04], [0.1, 0.1], [0, 0.1]]),
              "r_sole": np.array([[0, -0.1], [0.1, -0.1], [0.1, -0.04], [0, -0.04]])},
        cop={"l_sole": np.zeros((k, 2)), "r_sole": np.zeros((k, 2))},
        latency_ms=np.linspace(1, 5, 100), in_sync=t < 1.5, title="test", eq_t=eq_t,
        equilibrium_torques=np.cos(eq_t[:, None] * np.arange(1, n + 1)),
        eq_gravity_torques=np.sin(eq_t[:, None] * np.arange(1, n + 1)), period=0.5)


@pytest.mark.parametrize("equilibrium", [True, False])
def test_plot_all_writes_png_images(tmp_path, equilibrium):
    paths = plot_all(_series(equilibrium=equilibrium), tmp_path)
    assert set(paths) == {"com", "momentum", "gravity_torques", "forward_dynamics", "latency"}
    sizes = {}
    for name, path in paths.items():
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", data[16:24])
        assert width >= 800 and height >= 400 and len(data) > 20_000
        sizes[name] = width
    # g(q), the equilibrium torques and their difference side by side; g(q) alone without
    assert sizes["gravity_torques"] > (2000 if equilibrium else 0)
    assert sizes["gravity_torques"] < (10_000 if equilibrium else 1500)


def test_fd_error_per_tick():
    s = _series()
    np.testing.assert_allclose(s.fd_error(), 1e-13, rtol=1e-3)
    s.fd_joint_acc[5, :] = np.nan
    assert np.isnan(s.fd_error()[5])


def test_joint_groups_per_limb():
    names = ["l_hip_pitch", "r_knee", "l_elbow", "torso_pitch", "neck_yaw", "gripper",
             "leg_left_1_joint", "arm_right_7_joint", "gripper_right_joint", "waist_yaw_joint",
             "head_2_joint", "left_ankle_roll_joint", "tail"]
    assert joint_groups(names) == {"left leg": [0, 6, 11], "right leg": [1],
                                   "left arm": [2], "right arm": [7, 8], "arms": [5],
                                   "torso & head": [3, 4, 9, 10], "other": [12]}
    assert list(joint_groups(names)) == ["left leg", "right leg", "left arm", "right arm",
                                         "arms", "torso & head", "other"]
    assert joint_groups(["joint_000", "joint_001"]) == {"joints": [0, 1]}
    assert joint_label("leg_left_1_joint") == "leg_left_1"
    assert joint_label("l_knee") == "l_knee" and joint_label("_joint") == "_joint"


def test_lines_break_at_gaps():
    t = np.array([0.0, 0.01, 0.02, 0.5, 0.51, 0.52])
    values = np.arange(12.0).reshape(6, 2)
    tg, vg = _with_gaps(t, values)
    np.testing.assert_array_equal(np.isnan(tg), [0, 0, 0, 1, 0, 0, 0])
    assert np.isnan(vg[3]).all() and vg.shape == (7, 2)
    np.testing.assert_array_equal(vg[[0, 1, 2, 4, 5, 6]], values)
    short = np.array([0.0, 0.01, 0.02, 0.1, 0.11])      # 80 ms: below the 0.25 s minimum
    assert not np.isnan(_with_gaps(short, np.zeros((5, 1)))[0]).any()


def test_busiest_joints_skip_joints_that_move_alike():
    s = _series(n=4)
    s.motion_joint_acc[:, 3] = s.motion_joint_acc[:, 2]      # hip and ankle of a squat
    s.motion_joint_acc[:, 2] *= 5                             # now the busiest
    s.motion_joint_acc[:, 3] *= 5
    chosen = _busiest_joints(s, count=3)
    assert chosen[0] in (2, 3) and chosen[1:] == [1, 0], chosen     # one of the pair


def test_convex_hull():
    rng = np.random.default_rng(0)
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    points = np.vstack([square, rng.uniform(0.1, 0.9, size=(20, 2))])
    hull = convex_hull(points)
    assert {tuple(p) for p in hull} == {tuple(p) for p in square}
    area = 0.5 * np.sum(hull[:, 0] * np.roll(hull[:, 1], -1) - np.roll(hull[:, 0], -1)
                        * hull[:, 1])
    assert area == pytest.approx(1.0)        # counter-clockwise
