"""How the core reads URDFs: errors that name the offender, defaults, odd but legal input."""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from urdf_parser_py.urdf import URDF

from oracles import (
    assert_close,
    compare_with_idyntree,
    core_representation,
    default_joint_order,
    load_random_tree,
    make_case,
    normalize_axes,
    random_state,
)

random_tree_urdf = load_random_tree()
RTOL = 1e-10


def KDC(*args, **kwargs):
    from kin_dyn_ros.dynamics import KinDynComputations

    return KinDynComputations(*args, **kwargs)


def edit(urdf, fn):
    """Apply ``fn(root_element)`` to a parsed copy of ``urdf`` and return the new text."""
    root = ET.fromstring(urdf)
    fn(root)
    return ET.tostring(root, encoding="unicode")


def joint_el(root, name):
    return next(j for j in root.findall("joint") if j.get("name") == name)


@pytest.fixture(scope="module")
def tree():
    return random_tree_urdf(6, seed=21, n_fixed=3)


# ------------------------------------------------------------------------ invalid URDFs


@pytest.mark.parametrize("jtype", ["floating", "planar"])
def test_floating_or_planar_joint_rejected(tree, jtype):
    def change(root):
        j = joint_el(root, "joint_002")
        j.set("type", jtype)
        if j.find("limit") is not None:
            j.remove(j.find("limit"))

    with pytest.raises(ValueError, match="joint_002"):
        KDC(edit(tree, change))


def with_floating_world(urdf, root="link_000", world_mass=None):
    """``urdf`` with a link ``world`` (massless, or of ``world_mass``) above ``root``, joined
    by a floating joint, as URDFs written for simulators have."""
    def change(robot):
        world = ET.SubElement(robot, "link", name="world")
        if world_mass is not None:
            inertial = ET.SubElement(world, "inertial")
            ET.SubElement(inertial, "mass", value=str(world_mass))
            ET.SubElement(inertial, "inertia", ixx="1", ixy="0", ixz="0", iyy="1", iyz="0",
                          izz="1")
        joint = ET.SubElement(robot, "joint", name="world_to_base", type="floating")
        ET.SubElement(joint, "parent", link="world")
        ET.SubElement(joint, "child", link=root)
        ET.SubElement(joint, "origin", xyz="0 0 1", rpy="0 0 0.5")
    return edit(urdf, change)


def test_a_massless_root_on_a_floating_joint_is_the_implicit_floating_base(tree):
    """The floating joint restates the floating base: the robot is the same as without it,
    floating from its child."""
    plain, floating = KDC(tree), KDC(with_floating_world(tree))
    assert floating.frame_names == plain.frame_names and "world" not in floating.frame_names
    assert plain.model_notes == () and len(floating.model_notes) == 1
    assert "'world_to_base'" in floating.model_notes[0]
    assert floating.joints_name_list == plain.joints_name_list
    st = random_state(make_case("tree", tree), np.random.default_rng(4))
    v = (st.w_H_b, st.s, st.base_vel, st.s_dot)
    assert_close(floating.mass_matrix(st.w_H_b, st.s), plain.mass_matrix(st.w_H_b, st.s),
                 "M", 0.0)
    assert_close(floating.aba(*v, st.tau), plain.aba(*v, st.tau), "aba", 0.0)


@pytest.mark.parametrize("where", ["massive world", "inside the tree"])
def test_other_floating_joints_are_rejected(tree, where):
    urdf = (with_floating_world(tree, world_mass=1.0) if where == "massive world"
            else with_floating_world(tree, root="link_003"))
    with pytest.raises(ValueError, match="world_to_base"):
        KDC(urdf)


def test_joint_naming_missing_link(tree):
    def change(root):
        joint_el(root, "joint_003").find("parent").set("link", "ghost_link")

    with pytest.raises(ValueError, match="ghost_link|joint_003"):
        KDC(edit(tree, change))


def test_several_roots(tree):
    def change(root):
        ET.SubElement(root, "link", name="orphan_link")

    with pytest.raises(ValueError, match="orphan_link"):
        KDC(edit(tree, change))


CYCLE = """<robot name="cycle">
  <link name="link_a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="link_b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="link_c"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <link name="link_d"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="j_ab" type="revolute"><parent link="link_a"/><child link="link_b"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="1" lower="-1" upper="1"/></joint>
  <joint name="j_cd" type="revolute"><parent link="link_c"/><child link="link_d"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="1" lower="-1" upper="1"/></joint>
  <joint name="j_dc" type="fixed"><parent link="link_d"/><child link="link_c"/></joint>
</robot>"""


def test_cycle_rejected():
    with pytest.raises(ValueError, match="link_c|link_d|j_cd|j_dc"):
        KDC(CYCLE)


def test_two_parents_rejected(tree):
    def change(root):
        ET.SubElement(root, "joint", name="loop_joint", type="fixed")
        j = joint_el(root, "loop_joint")
        ET.SubElement(j, "parent", link="link_003")
        ET.SubElement(j, "child", link="link_001")

    with pytest.raises(ValueError, match="link_001|loop_joint"):
        KDC(edit(tree, change))


@pytest.mark.parametrize("bad", ["fixed_000", "no_such_joint"])
def test_joints_name_list_must_name_movable_joints(tree, bad):
    joints = default_joint_order(tree)
    with pytest.raises(ValueError, match=bad):
        KDC(tree, joints_name_list=joints[:2] + [bad] + joints[2:])


def test_unknown_frame_and_wrong_shapes(icub_urdf, icub_joints):
    kd = KDC(icub_urdf)
    n = len(icub_joints)
    s = np.zeros(n)
    with pytest.raises(ValueError, match="no_such_frame"):
        kd.forward_kinematics("no_such_frame", np.eye(4), s)
    with pytest.raises(ValueError, match=re.escape(f"expected s with shape ({n},), got ({n - 1},)")):
        kd.mass_matrix(np.eye(4), np.zeros(n - 1))
    with pytest.raises(ValueError, match="w_H_b"):
        kd.mass_matrix(np.eye(4)[:3], s)
    with pytest.raises(ValueError, match="base_vel"):
        kd.bias_force(np.eye(4), s, np.zeros(5), s)


# ------------------------------------------------------------------------ singular forward dynamics


# (parametrised over the representations by conftest.pytest_generate_tests)
def test_massless_subtree_on_moving_joint(rep):
    """A joint that moves only a massless leaf: its acceleration is NaN (undefined), named
    in ``massless_joints``; the others are computed (checked against Pinocchio's model with
    it locked in test_massless_joints.py) and every other output of the tick is there."""
    urdf = random_tree_urdf(6, seed=4, massless_leaf=True)
    kd = KDC(urdf)
    kd.set_frame_velocity_representation(core_representation(rep))
    st = random_state(make_case("leaf", urdf), np.random.default_rng(0))
    last = kd.joints_name_list.index("joint_005")
    nu_dot = kd.aba(st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau)
    assert np.isnan(nu_dot[6 + last]) and np.isfinite(np.delete(nu_dot, 6 + last)).all()
    v = (st.w_H_b, st.s, st.base_vel, st.s_dot)
    tick, without = kd.compute_tick(*v, st.tau), kd.compute_tick(*v)
    assert tick.forward_dynamics_error == "" and tick.massless_joints == ("joint_005",)
    assert without.massless_joints == () and without.joint_accelerations is None
    np.testing.assert_allclose(np.concatenate([tick.base_acceleration,   # NaN where NaN
                                               tick.joint_accelerations]), nu_dot,
                               rtol=1e-12, atol=1e-12)
    for name in ("joint_transforms", "com", "com_velocity", "centroidal_momentum",
                 "gravity_torques"):
        np.testing.assert_array_equal(getattr(tick, name), getattr(without, name), err_msg=name)
    # M^-1 does not exist: it still says why, naming the joint
    with pytest.raises(ValueError, match="joint_005"):
        kd.inverse_mass_matrix(st.w_H_b, st.s)


@pytest.mark.parametrize("solver", ["cholesky", "lu"])
def test_degenerate_inertia_of_the_whole_robot(solver, monkeypatch):
    """Point masses on one line (here a single point mass): no joint is massless, but the
    base's inertia has no rotational part, so M is singular and the solve fails (SciPy's
    Cholesky, or NumPy's LU without SciPy)."""
    from kin_dyn_ros.dynamics import algorithms as alg

    if solver == "lu":
        monkeypatch.setattr(alg, "_dposv", None)
    urdf = ('<robot name="point"><link name="a"><inertial><mass value="2"/><inertia ixx="0" '
            'iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')
    kd = KDC(urdf)
    with pytest.raises(ValueError, match="degenerate inertia of the floating base"):
        kd.aba(np.eye(4), [], np.zeros(6), [], [])
    with pytest.raises(ValueError, match="degenerate inertia of the floating base"):
        kd.inverse_mass_matrix(np.eye(4), [])
    tick = kd.compute_tick(np.eye(4), [], np.zeros(6), [], [])
    assert tick.joint_accelerations is None and "degenerate" in tick.forward_dynamics_error


# ------------------------------------------------------------------------ odd but legal URDFs


def test_joints_and_inertials_without_origin():
    urdf = random_tree_urdf(8, seed=31, n_fixed=4)

    def strip(root):
        for parent in list(root.iter("joint")) + list(root.iter("inertial")):
            for origin in parent.findall("origin"):
                parent.remove(origin)

    urdf = edit(urdf, strip)
    assert "<origin" not in urdf
    compare_with_idyntree(KDC(urdf), urdf, default_joint_order(urdf), what="no <origin>")


# (parametrised over the representations by conftest.pytest_generate_tests)
def test_non_unit_axes_are_normalised(rep):
    urdf = random_tree_urdf(10, seed=32)
    axes = [np.linalg.norm([float(x) for x in a.get("xyz").split()]) for a in ET.fromstring(urdf).iter("axis")]
    assert max(abs(a - 1.0) for a in axes) > 0.1  # the test tree really has non-unit axes
    unit = normalize_axes(urdf)
    joints = default_joint_order(urdf)
    compare_with_idyntree(KDC(urdf), unit, joints, rep=rep, normalize=False, what=f"non-unit axes {rep}")


@pytest.mark.parametrize("which", ["icub", "tree"])
def test_massive_root_is_kept(which, icub_urdf, tree):
    urdf = icub_urdf if which == "icub" else tree
    robot = URDF.from_xml_string(urdf)
    root = robot.get_root()
    assert next(link for link in robot.links if link.name == root).inertial is not None
    total = sum(link.inertial.mass for link in robot.links if link.inertial is not None)
    kd = KDC(urdf)
    assert_close(kd.get_total_mass(), total, "total mass = sum of URDF link masses", RTOL)
    kd.set_frame_velocity_representation(core_representation("MIXED"))
    M = np.asarray(kd.mass_matrix(np.eye(4), np.zeros(kd.NDoF)))
    assert_close(M[:3, :3], total * np.eye(3), "MIXED M[:3, :3] = m I", RTOL)


# (parametrised over the representations by conftest.pytest_generate_tests)
def test_massless_urdf_root_stays_the_base(rep):
    urdf = random_tree_urdf(7, seed=33, massless_root=True, n_fixed=6)
    robot = URDF.from_xml_string(urdf)
    root = robot.get_root()
    assert next(link for link in robot.links if link.name == root).inertial is None
    kd = KDC(urdf)
    kd.set_frame_velocity_representation(core_representation(rep))
    st = random_state(make_case("massless", urdf), np.random.default_rng(1))
    assert_close(kd.forward_kinematics(root, st.w_H_b, st.s), st.w_H_b, "FK of the massless root", RTOL)
    J = np.asarray(kd.jacobian(root, st.w_H_b, st.s))
    assert_close(J, np.eye(6, 6 + kd.NDoF), f"jacobian of the massless root {rep}", RTOL)
    compare_with_idyntree(kd, urdf, default_joint_order(urdf), rep=rep, what=f"massless root {rep}")


def test_default_joint_order_is_depth_first_in_file_order():
    urdf = random_tree_urdf(15, seed=34)  # written in shuffled order
    file_order = [j.get("name") for j in ET.fromstring(urdf).findall("joint") if j.get("type") != "fixed"]
    expected = default_joint_order(urdf)
    assert expected != file_order  # the test is not trivial
    kd = KDC(urdf)
    assert list(kd.joints_name_list) == expected
    assert kd.NDoF == 15
    assert sorted(kd.frame_names) == sorted(link.get("name") for link in ET.fromstring(urdf).findall("link"))


def test_gravity_as_six_vector(tree):
    kd3 = KDC(tree, gravity=np.array([0.0, 0.0, -9.81]))
    kd6 = KDC(tree, gravity=np.array([0.0, 0.0, -9.81, 0.0, 0.0, 0.0]))
    s = np.full(kd3.NDoF, 0.1)
    assert_close(kd6.gravity_term(np.eye(4), s), kd3.gravity_term(np.eye(4), s), "gravity from a 6-vector", RTOL)


# ------------------------------------------------------------------------ mimic joints


def test_mimic_joints():
    urdf = random_tree_urdf(12, seed=35, mimic=True)
    robot = URDF.from_xml_string(urdf)
    expected = {j.name: (j.mimic.joint, j.mimic.multiplier, j.mimic.offset) for j in robot.joints if j.mimic}
    assert len(expected) >= 2
    kd = KDC(urdf)
    assert set(kd.joints_name_list) == {j.name for j in robot.joints if j.type != "fixed"}  # independent coordinates
    got = kd.mimic_joints
    assert set(got) == set(expected)
    for name, (master, mult, off) in expected.items():
        assert got[name][0] == master
        assert got[name][1] == pytest.approx(mult, rel=1e-15)
        assert got[name][2] == pytest.approx(off, rel=1e-15, abs=1e-15)
    s = np.random.default_rng(0).uniform(-1.0, 1.0, kd.NDoF)
    s_before = s.copy()
    out = np.asarray(kd.apply_mimic(s))
    np.testing.assert_array_equal(s, s_before)  # a copy, input untouched
    index = {name: k for k, name in enumerate(kd.joints_name_list)}
    want = s.copy()
    for name, (master, mult, off) in expected.items():
        want[index[name]] = mult * s[index[master]] + off
    assert_close(out, want, "apply_mimic", 1e-15)


def with_mimics(urdf, mimics):
    """``urdf`` with ``<mimic>`` tags {joint: (master, multiplier, offset)}."""
    def change(root):
        for name, (master, mult, off) in mimics.items():
            ET.SubElement(joint_el(root, name), "mimic",
                          joint=master, multiplier=repr(mult), offset=repr(off))
    return edit(urdf, change)


def test_a_chain_of_mimics_follows_the_first_master():
    """joint_002 mimics joint_003, which mimics joint_001, which mimics joint_000 (declared
    in that order): every one follows joint_000, as the tags applied one after the other."""
    tags = {"joint_001": ("joint_000", 2.0, 0.1), "joint_002": ("joint_003", 1.5, -0.2),
            "joint_003": ("joint_001", -0.5, 0.3)}
    kd = KDC(with_mimics(random_tree_urdf(4, seed=3, branching=False,
                                          joint_types=("revolute",)), tags))
    assert {name: master for name, (master, *_) in kd.mimic_joints.items()} == dict.fromkeys(
        tags, "joint_000")
    index = {name: k for k, name in enumerate(kd.joints_name_list)}
    s = np.random.default_rng(1).uniform(-1.0, 1.0, kd.NDoF)
    want = s.copy()
    for name in ("joint_001", "joint_003", "joint_002"):         # masters first
        master, mult, off = tags[name]
        want[index[name]] = mult * want[index[master]] + off
    assert_close(kd.apply_mimic(s), want, "apply_mimic along the chain", 1e-15)


def test_fill_mimic_gives_the_positions_and_velocities_of_the_tags():
    """kd.fill_mimic (what the node's JointState merger and services use): every mimic of
    the chain above at ``m q + o`` and ``m dq`` (the time derivative) of its tag, applied
    masters first; the inputs are left untouched; a wrong size names the argument."""
    tags = {"joint_001": ("joint_000", 2.0, 0.1), "joint_002": ("joint_003", 1.5, -0.2),
            "joint_003": ("joint_001", -0.5, 0.3)}
    kd = KDC(with_mimics(random_tree_urdf(4, seed=3, branching=False,
                                          joint_types=("revolute",)), tags))
    index = {name: k for k, name in enumerate(kd.joints_name_list)}
    rng = np.random.default_rng(2)
    s, s_dot = rng.uniform(-1.0, 1.0, kd.NDoF), rng.normal(size=kd.NDoF)
    given = s.copy(), s_dot.copy()
    want, want_dot = s.copy(), s_dot.copy()
    for name in ("joint_001", "joint_003", "joint_002"):         # masters first
        master, mult, off = tags[name]
        want[index[name]] = mult * want[index[master]] + off
        want_dot[index[name]] = mult * want_dot[index[master]]
    got, got_dot = kd.fill_mimic(s, s_dot)
    assert_close(got, want, "fill_mimic positions", 1e-15)
    assert_close(got_dot, want_dot, "fill_mimic velocities", 1e-15)
    np.testing.assert_array_equal(s, given[0])
    np.testing.assert_array_equal(s_dot, given[1])
    with pytest.raises(ValueError, match=r"expected s_dot with shape \(4,\)"):
        kd.fill_mimic(s, s_dot[:3])


def test_a_mimic_of_a_joint_that_does_not_move_is_an_ordinary_joint():
    """A <mimic> naming a fixed joint (a gripper made rigid by xacro) or no joint at all: the
    model loads, the joint moves on its own, and model_notes says so."""
    kd = KDC(with_mimics(random_tree_urdf(4, seed=3, branching=False, n_fixed=2,
                                          joint_types=("revolute",)),
                         {"joint_001": ("fixed_000", 2.0, 0.0),
                          "joint_002": ("joint_000", -1.0, 0.2),
                          "joint_003": ("no_such_joint", 1.0, 0.0)}))
    assert kd.mimic_joints == {"joint_002": ("joint_000", -1.0, 0.2)}
    assert len(kd.model_notes) == 2
    for joint, master in (("joint_001", "fixed_000"), ("joint_003", "no_such_joint")):
        assert any(f"'{joint}' follows '{master}'" in note for note in kd.model_notes)


def test_a_cycle_of_mimics_is_rejected():
    urdf = with_mimics(random_tree_urdf(3, seed=3, branching=False, joint_types=("revolute",)),
                       {"joint_001": ("joint_002", 1.0, 0.0), "joint_002": ("joint_001", 1.0, 0.0)})
    with pytest.raises(ValueError, match="mimic joints form a cycle: joint_001 -> joint_002 -> "
                                         "joint_001"):
        KDC(urdf)


# ------------------------------------------------------------------------ input forms and noise


def test_a_byte_order_mark_is_ignored(tmp_path, tree):
    """Text or a file that starts with a UTF-8 byte-order mark (some editors write one)."""
    path = tmp_path / "bom.urdf"
    path.write_bytes(b"\xef\xbb\xbf" + tree.encode("utf-8"))
    st = random_state(make_case("t", tree), np.random.default_rng(3))
    want = KDC(tree).mass_matrix(st.w_H_b, st.s)
    for urdf in ("\ufeff" + tree, str(path)):
        np.testing.assert_array_equal(KDC(urdf).mass_matrix(st.w_H_b, st.s), want)


def test_urdf_as_path_or_text_identical(tmp_path, tree):
    path = tmp_path / "robot.urdf"
    path.write_text(tree)
    a, b = KDC(tree), KDC(str(path))
    assert list(a.joints_name_list) == list(b.joints_name_list)
    assert list(a.frame_names) == list(b.frame_names)
    st = random_state(make_case("t", tree), np.random.default_rng(2))
    for frame in a.frame_names:
        np.testing.assert_array_equal(a.forward_kinematics(frame, st.w_H_b, st.s), b.forward_kinematics(frame, st.w_H_b, st.s))
    np.testing.assert_array_equal(a.mass_matrix(st.w_H_b, st.s), b.mass_matrix(st.w_H_b, st.s))
    np.testing.assert_array_equal(a.bias_force(st.w_H_b, st.s, st.base_vel, st.s_dot),
                                  b.bias_force(st.w_H_b, st.s, st.base_vel, st.s_dot))


def test_parser_noise_not_printed(capfd, icub_urdf):
    """iCub's <sensor> and <gazebo> tags make urdf_parser_py print 'Unknown tag': not ours to show."""
    capfd.readouterr()
    KDC(icub_urdf)
    out, err = capfd.readouterr()
    assert err == "", f"stderr: {err[:300]!r}"
    assert out == "", f"stdout: {out[:300]!r}"
