"""The demo starts the node with the robot-neutral config/kin_dyn.yaml and, for its default
model (iCub), config/icub.yaml on top of it: iCub's contacts and their sole geometry. With
``--model`` (any URDF), or other feet, not icub.yaml (iCub's sole corners would be wrong
there) but <output>/contacts.yaml, written from the model's feet and soles; a model held by
its root gets no contacts file and no contact mechanics.

Also: an earlier run's files in the output folder are replaced with a one-line notice, and
the progress line reports the joint states really sent and the outputs received, and the
summary warns when the demo's own process was too busy for its latencies to be the node's."""

from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from kin_dyn_ros.demo.runner import (DEMO_BUSY_PERCENT, Options, UsageError, _clear_earlier_run,
                                     _config_files, _motion, _node_parameters, _Progress,
                                     busy_warning, node_command, prepare_robot)
from random_tree import random_tree_urdf  # test/support


def _params_files(cmd):
    return [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--params-file"]


def test_the_default_model_gets_icubs_contacts_on_top_of_the_neutral_defaults():
    files = _config_files(Options())
    assert [f.name for f in files] == ["kin_dyn.yaml", "icub.yaml"]
    assert files[0].parent == files[1].parent
    neutral, icub = (yaml.safe_load(f.read_text())["kin_dyn_node"]["ros__parameters"]
                     for f in files)
    assert "contacts" not in neutral and "contact" not in neutral
    assert icub["contacts"] == ["l_sole", "r_sole"]
    assert set(icub["contact"]) == {"l_sole", "r_sole"}
    cmd = node_command(["l_sole", "r_sole"], files)
    assert _params_files(cmd) == [str(f) for f in files]          # icub.yaml applied last
    assert cmd.index("contacts:=[l_sole, r_sole]") > cmd.index(str(files[1]))


def test_another_model_gets_only_the_neutral_defaults(tmp_path):
    files = _config_files(Options(model=str(tmp_path / "robot.urdf")))
    assert [f.name for f in files] == ["kin_dyn.yaml"]
    cmd = node_command(["link_000"], files)
    assert _params_files(cmd) == [str(files[0])]
    assert "contacts:=[link_000]" in cmd
    assert _params_files(node_command(["a"], [])) == []


# ------------------------------------------------------------------ other models, other feet
def test_the_default_model_on_other_feet_gets_no_icub_contacts():
    files = _config_files(Options(feet=("l_foot", "r_foot")))
    assert [f.name for f in files] == ["kin_dyn.yaml"]
    assert [f.name for f in _config_files(Options(feet=("l_sole", "r_sole")))] == \
        ["kin_dyn.yaml", "icub.yaml"]


def test_another_humanoid_gets_a_contacts_file_of_its_soles(tmp_path, g1_urdf):
    options = Options(model=str(g1_urdf), output=str(tmp_path))
    robot = prepare_robot(options)
    warnings = []
    motion = _motion(robot, options, warnings)
    assert motion.mode == "biped" and not warnings
    params, overrides, contacts = _node_parameters(options, tmp_path, robot, motion)
    assert [p.name for p in params] == ["kin_dyn.yaml", "contacts.yaml"] and overrides == []
    assert contacts == tmp_path / "contacts.yaml" == params[1]
    values = yaml.safe_load(contacts.read_text())["kin_dyn_node"]["ros__parameters"]
    assert values["contacts"] == list(robot.feet) == motion.contacts
    for foot in robot.feet:
        np.testing.assert_allclose(np.reshape(values["contact"][foot]["points"], (-1, 3)),
                                   robot.soles[foot].points, atol=1e-6)
    cmd = node_command(motion.contacts, params, overrides)
    assert _params_files(cmd) == [str(p) for p in params]
    assert f"contacts:=[{', '.join(robot.feet)}]" in cmd


def test_a_model_held_by_its_root_gets_no_contact_mechanics(tmp_path):
    urdf = tmp_path / "tree.urdf"
    urdf.write_text(random_tree_urdf(4, seed=2))
    options = Options(model=str(urdf), output=str(tmp_path))
    robot = prepare_robot(options)
    assert robot.feet is None and "sole, foot, ankle" in robot.note
    motion = _motion(robot, options, [])
    params, overrides, contacts = _node_parameters(options, tmp_path, robot, motion)
    assert [p.name for p in params] == ["kin_dyn.yaml"] and contacts is None
    assert overrides == ["equilibrium_rate:=0.0"]
    assert node_command(motion.contacts, params, overrides)[-2:] == ["-p",
                                                                    "equilibrium_rate:=0.0"]


def test_feet_that_cannot_carry_the_robot():
    options = Options(feet=("l_sole", "l_foot"))     # both on the left leg
    robot = prepare_robot(options)
    with pytest.raises(UsageError, match=r"^--feet l_sole l_foot: only 0 joints move l_foot"):
        _motion(robot, options, [])
    warnings = []
    guessed = Options()
    robot.feet_source = "guessed from the link names"
    motion = _motion(robot, guessed, warnings)      # a guess: a warning and a fixed base
    assert motion.mode == "fixed-base" and "--feet LEFT RIGHT" in warnings[0]


def test_feet_whose_z_axis_points_down_are_refused():
    options = Options(feet=("l_foot", "r_foot"))   # iCub's l_foot: z into the ground
    with pytest.raises(UsageError, match="CoM is 0.5. m under the ground: the foot frames' z "
                                         "axes must point up"):
        _motion(prepare_robot(options), options, [])


# ------------------------------------------------------------------ output folder, progress
def test_an_earlier_run_is_replaced_and_said_so(tmp_path, capsys):
    assert _clear_earlier_run(tmp_path) == [] and capsys.readouterr().out == ""
    for name in ("com.png", "summary.json", "kin_dyn_demo.mcap", "notes.txt"):
        (tmp_path / name).write_text("x")
    assert _clear_earlier_run(tmp_path) == ["kin_dyn_demo.mcap", "summary.json", "com.png"]
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "overwriting the earlier run" in out
    assert "com.png" in out and "notes.txt" not in out
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_the_progress_line_counts_what_was_sent_and_received(monkeypatch):
    """Over 2 s: 1000 ticks due, 40 of them dropped by a late timer, 960 joint states sent,
    900 outputs received: the line says 480 and 450 per second, not 500."""
    demo = SimpleNamespace(sent=0, answered=0, next_tick=0, late_ticks=0, latencies=[],
                           table=SimpleNamespace(rate=500.0),
                           options=SimpleNamespace(duration=10.0))
    progress = _Progress(demo, enabled=True)
    start = progress.last[0]
    demo.sent, demo.answered, demo.next_tick, demo.late_ticks = 960, 900, 1000, 40
    demo.latencies = [1.0, 2.0, 3.0]
    line = progress.line(start + 2.0)
    assert "sent  480 joint states/s" in line and "node answered  450/s" in line, line
    assert "40 dropped" in line and "[  2.0/10.0 s]" in line
    demo.sent, demo.answered, demo.next_tick = 1960, 1900, 2000   # the next 2 s: no drops
    assert "sent  500 joint states/s" in progress.line(start + 4.0)


def test_a_saturated_demo_process_is_named_in_a_warning():
    """At or above DEMO_BUSY_PERCENT of a core the demo's own queue delays what it receives:
    the warning says so, with its figure, and names the rate that halves the load; below it,
    or with no figure (NaN), none."""
    text = busy_warning(96.4, 500.0)
    assert "96 % of a core" in text and "500 Hz" in text and "--rate 250 " in text
    assert busy_warning(DEMO_BUSY_PERCENT, 1000.0).endswith("--rate 500 halves its load")
    assert busy_warning(DEMO_BUSY_PERCENT - 0.1, 500.0) == ""
    assert busy_warning(float("nan"), 500.0) == ""
