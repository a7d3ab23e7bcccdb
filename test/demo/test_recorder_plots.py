"""Unit tests of the demo's recorder (MCAP, ros2msg schemas), analysis, plots and summary,
without running ROS."""

import struct
from types import SimpleNamespace

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from mcap_ros2._dynamic import serialize_dynamic

from kin_dyn_ros.dynamics.contacts import convex_hull
from kin_dyn_ros.demo.__main__ import _report
from kin_dyn_ros.demo.analysis import (_balance, forward_dynamics_figures, motion_zmp,
                                       polygon_margins)
from kin_dyn_ros.demo.plots import (Series, _busiest_joints, _with_gaps, joint_groups,
                                    joint_label, plot_all, plot_balance, plot_forward_dynamics,
                                    torques_note)
from kin_dyn_ros.demo.runner import Summary, equilibrium_report
from kin_dyn_ros.node.diagnostics import InputsReport, build_diagnostics
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


SQUARE = np.array([[-0.05, -0.1], [0.1, -0.1], [0.1, 0.1], [-0.05, 0.1]])


def _balance_fields(t, changing=False):
    """Balance fields of a Series: ZMP and capture point swaying about the CoM, a support
    polygon every 5th tick (moving when ``changing``), the node's margins every 10th."""
    k = len(t)
    com = np.stack([0.01 * np.sin(t), 0.02 * np.cos(t), 0.5 + 0.01 * t], axis=1)
    zmp = com * [1.2, 1.2, 0.0]
    cp = com * [1.1, 1.1, 0.0]
    support_t = t[::5]
    polygons = [SQUARE + (0.002 * i if changing else 0.0) for i in range(len(support_t))]
    tick = polygon_margins(t, [com, zmp, cp], support_t, polygons)
    return dict(zmp=zmp, capture_point=cp, motion_zmp=zmp[:, :2].copy(),
                node_cop={"l_sole": np.tile([0.02, 0.07, 0.0], (k, 1)),
                          "r_sole": np.tile([0.02, -0.07, 0.0], (k, 1))},
                support_t=support_t, support_polygons=polygons, margin_t=t[::10],
                stability_margins=tick[::10], margin_in_sync=t[::10] < 1.5,
                tick_margins=tick)


def _series(n=4, k=200, equilibrium=True, balance=True):
    t = np.arange(k) / 100.0
    acc = np.sin(t[:, None] * np.arange(1, n + 1))
    eq_t = t[::5] if equilibrium else np.zeros(0)
    return Series(**(_balance_fields(t) if balance else {}),
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
    assert set(paths) == {"com", "momentum", "gravity_torques", "forward_dynamics", "latency",
                          "balance"}
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


def test_without_equilibrium_torques_the_note_gives_the_nodes_reason():
    """The reason is the node's own (its /diagnostics, as the node builds them), the last
    one received."""
    why = "40 due, 0 published; 40 replaced by a newer tick while the worker was busy"
    msgs = [build_diagnostics("kin_dyn_node", None, None, InputsReport(), (0,) * 6, text)
            for text in ("1 due, 0 published", why)]
    assert equilibrium_report(msgs) == why and equilibrium_report([]) == ""
    series = _series(equilibrium=False)
    series.equilibrium_report = equilibrium_report(msgs)
    assert why in torques_note(series, False)
    assert "none received" in torques_note(_series(equilibrium=False), False)


def test_fd_error_per_tick():
    s = _series()
    np.testing.assert_allclose(s.fd_error(), 1e-13, rtol=1e-3)
    s.fd_joint_acc[5, :] = s.fd_base_acc[5, :] = np.nan     # no ~/forward_dynamics
    assert np.isnan(s.fd_error()[5]) and not s.fd_undefined().any()


def test_joints_without_forward_dynamics_are_left_out_and_named(tmp_path, capsys):
    """A joint with no inertia moving with it (a massless subtree): the node publishes NaN
    for it on every tick. The comparison leaves it out, the summary names it and says why,
    and gives the max error over the others (before, a NaN joint made every tick's error
    NaN: "max |node - motion| = nan over the 0 ticks")."""
    s = _series()
    s.fd_joint_acc[:, 2] = np.nan                        # r_shoulder_roll: massless hand
    s.fd_joint_acc[7] = s.fd_base_acc[7] = np.nan        # a tick without ~/forward_dynamics
    s.fd_joint_acc[3, 1] += 0.5                          # the largest error, on a tick in sync
    s.fd_base_acc[160, 0] += 2.0                         # larger, but not in sync (t >= 1.5)
    assert s.fd_undefined().tolist() == [False, False, True, False]
    err = s.fd_error()
    assert np.isnan(err[7]) and np.isfinite(np.delete(err, 7)).all()
    assert err[3] == pytest.approx(0.5) and err[160] == pytest.approx(2.0)
    figures, warnings = forward_dynamics_figures(s)
    assert figures == {'ticks_in_sync': int(s.in_sync.sum()) - 1,
                       'fd_error_max': pytest.approx(0.5),
                       'fd_error_joints_max': pytest.approx(0.5),
                       'fd_error_all_ticks_max': pytest.approx(2.0),
                       'fd_undefined_joints': ['r_shoulder_roll']}
    assert len(warnings) == 1 and 'max forward-dynamics error over those ticks 2.00e+00' \
        in warnings[0]
    summary = Summary(
        model='test', mode='biped', duration_s=2.0, rate_hz=100.0, ticks_published=200,
        ticks_dropped=0, ticks_answered=199, ticks_per_second=100.0, answers_per_second=99.5,
        latency_ms={'p50': 1.0, 'p95': 2.0, 'p99': 3.0, 'max': 4.0}, **figures,
        cpu_percent={'demo': 10.0, 'node': 20.0}, message_counts={}, files={},
        feet=['l_sole', 'r_sole'], feet_source='--feet', warnings=warnings)
    _report(summary)
    out = capsys.readouterr().out
    assert (f"forward dynamics  max |node - motion| = 5.00e-01 over the "
            f"{figures['ticks_in_sync']} ticks computed from their own inputs (all ticks: "
            f"2.00e+00), base and the joints that have it") in out
    assert ("none for 1 joint, NaN from the node (no inertia moves with them: massless "
            "subtree): r_shoulder_roll") in out
    assert plot_forward_dynamics(s, tmp_path / 'fd.png').read_bytes()[:4] == b"\x89PNG"


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


def _png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return len(data), width, height


@pytest.mark.parametrize("case", ["full", "changing polygon", "no balance topics",
                                  "no stability_margin", "no zmp", "all ticks stale"])
def test_plot_balance_with_or_without_its_topics(tmp_path, case):
    s = _series(balance=case != "no balance topics")
    if case == "changing polygon":
        t = s.t
        for name, value in _balance_fields(t, changing=True).items():
            setattr(s, name, value)
    elif case == "no stability_margin":      # e.g. equilibrium_rate 0
        s.support_t, s.support_polygons = np.zeros(0), []
        s.margin_t, s.stability_margins = np.zeros(0), np.zeros((0, 3))
        s.margin_in_sync = np.zeros(0, bool)
        s.tick_margins = np.full((len(s.t), 3), np.nan)
    elif case == "no zmp":                    # no loaded contact
        s.zmp[:], s.capture_point[:], s.motion_zmp[:] = np.nan, np.nan, np.nan
        s.node_cop = {}
        s.stability_margins[:, 1:] = -np.inf
    elif case == "all ticks stale":
        s.in_sync[:] = False
        s.margin_in_sync[:] = False
    size, width, height = _png(plot_balance(s, tmp_path / "balance.png"))
    assert width >= 1500 and height >= 900 and size > 40_000, (size, width, height)


def test_balance_series_defaults_are_empty():
    s = _series(balance=False)
    k = len(s.t)
    assert s.zmp.shape == (k, 3) and np.isnan(s.zmp).all()
    assert s.capture_point.shape == (k, 3) and s.motion_zmp.shape == (k, 2)
    assert s.tick_margins.shape == (k, 3) and np.isnan(s.tick_margins).all()
    assert s.stability_margins.shape == (0, 3) and s.margin_in_sync.shape == (0,)
    assert s.support_polygons == [] and s.node_cop == {}


def test_polygon_margins_use_the_latest_polygon():
    t = np.array([0.0, 1.0, 2.0, 3.0])
    points = np.array([[0.0, 0.0, 0.7], [0.0, 0.0, 0.7], [0.225, 0.0, 0.7], [np.nan] * 3])
    shifted = SQUARE + [0.2, 0.0]
    out = polygon_margins(t, [points, points[:, :2]], np.array([0.5, 1.5]), [SQUARE, shifted])
    # t = 0 is before the first polygon: the first one serves; (0, 0) is 5 cm from the back
    np.testing.assert_allclose(out[:2, 0], [0.05, 0.05])
    np.testing.assert_allclose(out[2, 0], 0.075)    # in the shifted one (not the first: outside)
    assert np.isnan(out[3]).all()                         # NaN point: NaN margin
    np.testing.assert_array_equal(out[:, 0], out[:, 1])   # (k, 3) and (k, 2) alike
    outside = polygon_margins(np.zeros(1), [np.array([[0.4, 0.0]])], np.zeros(1), [SQUARE])
    np.testing.assert_allclose(outside, [[-0.3]])          # outside: minus the distance
    empty = polygon_margins(np.zeros(1), [np.zeros((1, 2))], np.zeros(1), [np.zeros((0, 2))])
    assert empty[0, 0] == -np.inf
    assert np.isnan(polygon_margins(t, [points], np.zeros(0), [])).all()   # no polygon


def _pose(x, y, z=0.0):
    h = np.eye(4)
    h[:3, 3] = [x, y, z]
    return h


def test_motion_zmp_of_the_summed_contact_wrenches():
    feet = {"l": _pose(0.1, 0.1), "r": _pose(0.1, -0.1)}
    sample = SimpleNamespace(contact_poses=feet, wrenches={
        "l": np.array([0, 0, 100.0, 0, 0, 0]), "r": np.array([0, 0, 300.0, 0, 0, 0])})
    np.testing.assert_allclose(motion_zmp([sample]), [[0.1, -0.05]])
    # a moment about y at the left foot moves its CoP back by tau_y / f_z; a tangential force
    # at a foot above the ground plane moves the ZMP by its height times f_x / f_z
    tilted = SimpleNamespace(contact_poses={"l": _pose(0.0, 0.0, 0.02)}, wrenches={
        "l": np.array([10.0, 0, 100.0, 0, 5.0, 0])})
    np.testing.assert_allclose(motion_zmp([tilted]), [[-0.05 - 0.02 * 10 / 100, 0.0]])
    up = SimpleNamespace(contact_poses=feet, wrenches={"l": np.array([0, 0, -1.0, 0, 0, 0])})
    assert np.isnan(motion_zmp([up])).all()                # no normal force: undefined


def _stamped(**fields):
    return SimpleNamespace(**fields)


def test_balance_fields_from_the_node_messages():
    p = lambda x, y, z=0.0: SimpleNamespace(x=x, y=y, z=z)   # noqa: E731
    stamps = [10, 20, 30]
    stamp_tick = {10: 0, 20: 1, 30: 2, 40: 3}
    outputs = {
        "zmp": {10: _stamped(point=p(0.01, 0.02)), 30: _stamped(point=p(0.03, 0.04))},
        "cop": {10: _stamped(contacts=["l_sole", "r_sole"], points=[p(0.1, 0.2), p(0, 0)],
                             defined=[True, False], normal_forces=[300.0, 0.0])},
        "support_polygon": {20: _stamped(polygon=_stamped(points=[p(*v) for v in SQUARE])),
                            99: _stamped(polygon=_stamped(points=[]))},  # not ours: left out
        "stability_margin": {20: _stamped(margin=0.05, zmp_margin=0.04,
                                          capture_point_margin=-np.inf)},
    }
    out = _balance(outputs, stamps, stamp_tick, 10.0, ("l_sole", "r_sole"),
                   np.array([0.0, 0.1, 0.2]), np.array([True, False, True]))
    np.testing.assert_allclose(out["zmp"][[0, 2], :2], [[0.01, 0.02], [0.03, 0.04]])
    assert np.isnan(out["zmp"][1]).all() and np.isnan(out["capture_point"]).all()
    np.testing.assert_allclose(out["node_cop"]["l_sole"][0], [0.1, 0.2, 0.0])
    assert np.isnan(out["node_cop"]["r_sole"]).all()          # undefined: NaN
    assert np.isnan(out["node_cop"]["l_sole"][1:]).all()      # no message
    np.testing.assert_allclose(out["support_t"], [0.1])
    np.testing.assert_allclose(out["support_polygons"][0], SQUARE)
    np.testing.assert_allclose(out["margin_t"], [0.1])
    np.testing.assert_array_equal(out["stability_margins"], [[0.05, 0.04, -np.inf]])
    np.testing.assert_array_equal(out["margin_in_sync"], [False])   # tick 1 is stale
