"""The demo's feet and model checks (kin_dyn_ros/demo/feet.py, robot.py, the command line).

- The guess of the feet from link names: on iCub (its config/icub.yaml names the feet), Talos
  (its SRDF, shipped beside the URDF, names the foot end effectors) and Unitree G1 (the
  feet are the last links of the legs: links that are nobody's parent), and on small
  hand-written trees for each step of the rule, including the failures.
- The soles: iCub's are the corners of config/icub.yaml (hand-written from its collision
  boxes); G1's are its four collision spheres' lowest points (the numbers of its URDF);
  Talos (no collision primitive on the feet) gets the nominal rectangle.
- The one-line errors for a bad model file and bad option values (exit code 2, no
  traceback).
"""

import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import icub_models
import numpy as np
import pytest
import yaml

from kin_dyn_ros.demo.feet import (NOMINAL_FOOT, FeetError, NoFootLinks, UrdfTree, check_feet,
                                   contacts_yaml, guess_feet, side_of, sole_geometry)
from kin_dyn_ros.demo.robot import ModelError, load_robot, read_urdf
from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.node.settings import contact_geometry

REPO = pathlib.Path(__file__).resolve().parents[2]
ICUB_YAML = REPO / "config" / "icub.yaml"


def _urdf(joints, collisions=None):
    """URDF text of a tree: joints (child, parent, type), revolute ones about y; every link
    has a small mass. ``collisions``: {link: [geometry XML, origin xyz]}."""
    links = {"base"} | {c for c, _, _ in joints} | {p for _, p, _ in joints}
    out = ['<robot name="t">']
    for link in sorted(links):
        extra = "".join(
            f'<collision><origin xyz="{xyz}"/><geometry>{geom}</geometry></collision>'
            for geom, xyz in (collisions or {}).get(link, []))
        out.append(f'<link name="{link}"><inertial><mass value="1"/><inertia ixx="0.01" '
                   f'iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>{extra}</link>')
    for child, parent, kind in joints:
        limit = '<limit lower="-1" upper="1" effort="10" velocity="1"/>' if kind != "fixed" else ""
        out.append(f'<joint name="{child}_j" type="{kind}"><parent link="{parent}"/>'
                   f'<child link="{child}"/><origin xyz="0 0 -0.1"/><axis xyz="0 1 0"/>'
                   f'{limit}</joint>')
    return "\n".join(out + ["</robot>"])


def _legs(prefix_left, prefix_right, words=("thigh", "shin", "foot")):
    joints = []
    for side in (prefix_left, prefix_right):
        parent = "base"
        for word in words:
            joints.append((f"{side}{word}", parent, "revolute"))
            parent = f"{side}{word}"
    return joints


# ------------------------------------------------------------------------------ names
@pytest.mark.parametrize("name, side", [
    ("l_sole", "left"), ("r_sole", "right"), ("left_sole_link", "left"),
    ("right_ankle_roll_link", "right"), ("leg_left_6_link", "left"), ("LeftFoot", "left"),
    ("RFoot", "right"), ("l_sole_skin_3", "left"), ("foot", None), ("sole_lr", None),
    ("lrfoot", None), ("pelvis", None), ("realfoot", None)])
def test_side_from_the_words_of_a_name(name, side):
    assert side_of(name) == side


def test_icub_feet_are_its_soles():
    urdf = pathlib.Path(icub_models.get_model_file("iCubGazeboV2_5")).read_text()
    expected = yaml.safe_load(ICUB_YAML.read_text())["kin_dyn_node"]["ros__parameters"]
    # l_sole among its 29 sibling l_sole_skin_* frames: the shortest name
    assert list(guess_feet(urdf)) == expected["contacts"]


def test_talos_feet_are_the_srdf_foot_end_effectors(talos_urdf):
    srdf = ET.parse(talos_urdf.parents[1] / "srdf" / "talos.srdf").getroot()
    feet = {e.get("name"): e.get("parent_link") for e in srdf.iter("end_effector")}
    assert guess_feet(talos_urdf.read_text()) == (feet["l_foot"], feet["r_foot"])


def test_g1_feet_are_the_last_links_of_the_legs(g1_urdf):
    root = ET.parse(g1_urdf).getroot()
    parents = {j.find("parent").get("link") for j in root.iter("joint")}
    leaves = {link.get("name") for link in root.iter("link")} - parents
    left = [n for n in leaves if n.startswith("left_") and "ankle" in n]
    right = [n for n in leaves if n.startswith("right_") and "ankle" in n]
    assert len(left) == len(right) == 1
    assert guess_feet(g1_urdf.read_text()) == (left[0], right[0])


def test_sole_before_foot_before_ankle():
    joints = _legs("l_", "r_", ("hip", "ankle", "foot")) + [
        ("l_sole", "l_foot", "fixed"), ("r_sole", "r_foot", "fixed")]
    assert guess_feet(_urdf(joints)) == ("l_sole", "r_sole")
    assert guess_feet(_urdf(_legs("l_", "r_", ("hip", "ankle", "foot")))) == ("l_foot", "r_foot")
    assert guess_feet(_urdf(_legs("left_", "right_", ("hip", "ankle_pitch", "ankle_roll")))) \
        == ("left_ankle_roll", "right_ankle_roll")


def test_a_one_sided_word_falls_through_to_the_next():
    joints = _legs("l_", "r_", ("hip", "knee", "foot")) + [("l_sole", "l_foot", "fixed")]
    assert guess_feet(_urdf(joints)) == ("l_foot", "r_foot")


def test_no_pair_names_the_candidates():
    joints = _legs("l_", "r_", ("hip", "knee", "shin")) + [("l_sole", "l_shin", "fixed"),
                                                           ("sole_b", "r_shin", "fixed")]
    with pytest.raises(FeetError) as info:
        guess_feet(_urdf(joints))
    message = str(info.value)
    assert "\n" not in message and "l_sole" in message and "sole_b" in message
    assert "--feet LEFT RIGHT" in message


def test_candidates_on_two_branches_are_ambiguous():
    joints = _legs("l_", "r_", ("hip", "knee")) + [
        ("l_foot_front", "l_knee", "revolute"), ("l_foot_back", "l_knee", "revolute"),
        ("r_foot", "r_knee", "revolute")]
    with pytest.raises(FeetError, match=r"left foot among .*l_foot_back.*l_foot_front"):
        guess_feet(_urdf(joints))


def test_a_tie_of_names_on_one_body_is_ambiguous():
    joints = _legs("l_", "r_", ("hip", "knee")) + [
        ("l_foot_a", "l_knee", "fixed"), ("l_foot_b", "l_knee", "fixed"),
        ("r_foot", "r_knee", "revolute")]
    with pytest.raises(FeetError, match="between l_foot_a and l_foot_b"):
        guess_feet(_urdf(joints))


def test_no_foot_like_link_is_its_own_error():
    with pytest.raises(NoFootLinks, match="sole, foot, ankle"):
        guess_feet(_urdf(_legs("l_", "r_", ("hip", "knee"))))


def test_given_feet_are_checked():
    tree = UrdfTree(_urdf(_legs("l_", "r_")))
    assert check_feet(tree, ("l_foot", "r_foot")) == ("l_foot", "r_foot")
    with pytest.raises(FeetError, match="no link l_sole; the guess from the link names is "
                                        "--feet l_foot r_foot"):
        check_feet(tree, ("l_sole", "r_foot"))
    tree = UrdfTree(_urdf(_legs("l_", "x_")))
    with pytest.raises(FeetError, match="no link l_sole or r_sole; links named like feet: "
                                        "l_foot, x_foot"):
        check_feet(tree, ("l_sole", "r_sole"))
    with pytest.raises(FeetError, match="same link"):
        check_feet(tree, ("l_foot", "l_foot"))


# ------------------------------------------------------------------------------ soles
def _sorted_rows(points):
    return sorted(tuple(np.round(p, 12)) for p in np.asarray(points).reshape(-1, 3))


def test_icub_soles_are_the_corners_of_its_config():
    urdf = pathlib.Path(icub_models.get_model_file("iCubGazeboV2_5")).read_text()
    kd = KinDynComputations(urdf)
    params = yaml.safe_load(ICUB_YAML.read_text())["kin_dyn_node"]["ros__parameters"]
    for foot in params["contacts"]:
        sole = sole_geometry(kd, urdf, foot)
        assert _sorted_rows(sole.points) == _sorted_rows(params["contact"][foot]["points"])
        assert sole.height == 0.0


def test_g1_soles_are_its_collision_spheres(g1_urdf):
    urdf = g1_urdf.read_text()
    kd = KinDynComputations(urdf)
    # the URDF: spheres of radius 0.005 at z = -0.03, x = -0.05 (y +-0.025) and 0.12 (+-0.03)
    expected = [(-0.05, -0.025, -0.035), (-0.05, 0.025, -0.035), (0.12, -0.03, -0.035),
                (0.12, 0.03, -0.035)]
    for foot in ("left_ankle_roll_link", "right_ankle_roll_link"):
        sole = sole_geometry(kd, urdf, foot)
        np.testing.assert_allclose(sorted(map(tuple, sole.points)), expected, atol=1e-12)
        assert sole.height == pytest.approx(0.035)


def test_talos_soles_are_nominal_rectangles_at_the_sole_frames(talos_urdf):
    urdf = talos_urdf.read_text()
    kd = KinDynComputations(urdf)
    for foot in ("left_sole_link", "right_sole_link"):
        sole = sole_geometry(kd, urdf, foot)
        assert "default" in sole.source
        np.testing.assert_allclose(sole.outline.max(axis=0) - sole.outline.min(axis=0),
                                   NOMINAL_FOOT)
        np.testing.assert_allclose(sole.outline.mean(axis=0), 0.0, atol=1e-15)
        assert sole.height == 0.0


def test_a_sole_below_the_foot_origin_and_a_cylinder():
    box = ('<box size="0.2 0.1 0.02"/>', "0.03 0 -0.05")
    joints = _legs("l_", "r_", ("hip", "knee", "ankle"))
    urdf = _urdf(joints, {"l_ankle": [box],
                          "r_ankle": [('<cylinder radius="0.05" length="0.02"/>', "0 0 -0.04")]})
    kd = KinDynComputations(urdf)
    left = sole_geometry(kd, urdf, "l_ankle")
    np.testing.assert_allclose(sorted(map(tuple, left.points)),
                               [(-0.07, -0.05, -0.06), (-0.07, 0.05, -0.06),
                                (0.13, -0.05, -0.06), (0.13, 0.05, -0.06)], atol=1e-12)
    assert left.height == pytest.approx(0.06)
    right = sole_geometry(kd, urdf, "r_ankle")
    assert right.height == pytest.approx(0.05)
    np.testing.assert_allclose(np.linalg.norm(right.outline, axis=1), 0.05, atol=1e-12)


def test_contacts_yaml_is_valid_node_parameters(g1_urdf):
    robot = load_robot(g1_urdf)
    params = yaml.safe_load(contacts_yaml([robot.soles[f] for f in robot.feet], robot.name))
    values = params["kin_dyn_node"]["ros__parameters"]
    assert values["contacts"] == list(robot.feet)
    for foot in robot.feet:
        c = values["contact"][foot]
        assert all(isinstance(v, float) for v in c["points"] + c["normal"])
        name, points, normal, friction = contact_geometry(foot, c["points"], c["normal"],
                                                          c["friction"])
        np.testing.assert_allclose(np.reshape(points, (-1, 3)), robot.soles[foot].points,
                                   atol=1e-6)
        assert c["topic"] == f"{foot}/wrench"


# ------------------------------------------------------------------------------ errors
def test_model_file_errors_name_the_file(tmp_path):
    cases = {"missing.urdf": None, "folder": "dir", "text.urdf": "just some text\n",
             "binary.urdf": b"\x89PNG\r\n\x1a\n\x00\xff", "model.sdf":
             '<?xml version="1.0"?><sdf version="1.6"><model name="m"/></sdf>',
             "empty.urdf": '<robot name="r"></robot>',
             "still.urdf": '<robot name="r"><link name="a"/></robot>'}
    expected = {"missing.urdf": "no such file", "folder": "is a folder",
                "text.urdf": "not a URDF (not XML", "binary.urdf": "not a URDF (a binary",
                "model.sdf": "its root element is <sdf>", "empty.urdf": "not a usable URDF",
                "still.urdf": "no movable joint"}
    for name, content in cases.items():
        path = tmp_path / name
        if content == "dir":
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content)
        with pytest.raises(ModelError) as info:
            read_urdf(path)
        message = str(info.value)
        assert message.startswith(f"--model {path}: ") and "\n" not in message, message
        assert expected[name] in message, message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file without read permission")
def test_an_unreadable_model_file(tmp_path):
    path = tmp_path / "locked.urdf"
    path.write_text('<robot name="r"/>')
    path.chmod(0)
    with pytest.raises(ModelError, match="cannot read it"):
        read_urdf(path)


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kin_dyn_ros.demo", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("args, words", [
    (["--rate", "0"], ["argument --rate", "a rate in Hz", "> 0", "'0'"]),
    (["--rate", "fast"], ["argument --rate", "a rate in Hz", "'fast'"]),
    (["--rate", "1e9"], ["argument --rate", "at most 10000"]),
    (["--duration", "-2"], ["argument --duration", "a duration in seconds", "> 0"]),
    (["--duration", "nan"], ["argument --duration", "a duration in seconds"]),
])
def test_bad_option_values_are_usage_errors(args, words):
    proc = _cli(*args)
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("python -m kin_dyn_ros.demo: error: "), proc.stderr
    for word in words:
        assert word in last, last
    assert "Traceback" not in proc.stderr


def test_bad_model_and_feet_are_usage_errors(tmp_path):
    text = tmp_path / "hostname"
    text.write_text("myhost\n")
    for args, words in (
            (["--model", str(text)], [f"--model {text}: not a URDF"]),
            (["--model", str(tmp_path / "nope.urdf")], ["no such file"]),
            (["--feet", "l_foot_x", "r_sole"], ["--feet: the model has no link l_foot_x",
                                                 "--feet l_sole r_sole"]),
            (["--output", str(text)], [f"--output {text}: is a file"])):
        proc = _cli(*args, "--output", str(tmp_path / "out")) if args[0] != "--output" \
            else _cli(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        last = proc.stderr.strip().splitlines()[-1]
        assert "Traceback" not in proc.stderr, proc.stderr
        for word in words:
            assert word in last, last
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
