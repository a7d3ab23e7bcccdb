"""Forward dynamics with massless moving links (issue 33).

A joint whose subtree carries no inertia (finger links without mass, a sensor on a joint)
has a zero row and column in the mass matrix: its acceleration is undefined, and every
other coordinate's is defined and does not depend on it. ``aba`` and ``compute_tick`` give
NaN for those joints (``TickResult.massless_joints`` names them) and solve for the others.

The reference is Pinocchio's reduced model with the massless joints locked at the state's
configuration (``pinocchio.buildReducedModel``, :meth:`oracles.PinocchioOracle.locked`):
the base's and every other joint's acceleration must be its ABA's, with two F/T wrenches on
massive links, in the three representations. The models:

- ``leaf``: a generated tree whose last joint moves a massless leaf
  (``random_tree_urdf(massless_leaf=True)``, the robot of test/ros/test_node_generated_robot.py);
- ``middle``: a generated tree with a massless subtree of 2-3 joints in the middle of a
  branch (a massive link above it, massive links beside it on the same parent): its links'
  inertials removed, one of them left as an explicit zero mass and inertia;
- ``romeo``: Romeo of example-robot-data (55 joints), a real humanoid URDF whose 24 hand
  and finger joints move links of mass 0 (the robot of the issue). Its mimic tags are
  ignored here, as by the core's ``aba``: independent coordinates.

The massless joints are also found here from the URDF text (subtrees without mass), not
from the core. Run on both paths: ``KIN_DYN_JIT=0`` for the NumPy core.
"""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from example_robots import example_robot_data_file

from oracles import (
    GRAVITY,
    PinocchioOracle,
    assert_close,
    core_representation,
    default_joint_order,
    load_random_tree,
    make_case,
    random_state,
    urdf_structure,
    wrench_in_frame_to_inertial,
    wrench_to_rep,
)

random_tree_urdf = load_random_tree()
RTOL = 1e-10          # against Pinocchio
SAME = 1e-12          # the massive joints' accelerations when the massless ones change
ROMEO = "romeo_description/urdf/romeo.urdf"
CASE_NAMES = ("leaf", "middle", "romeo")


# ------------------------------------------------------------------------ the models


def link_masses(urdf):
    """{link: mass} of the URDF (0 without <inertial>)."""
    out = {}
    for link in ET.fromstring(urdf).findall("link"):
        mass = link.find("inertial/mass")
        out[link.get("name")] = 0.0 if mass is None else float(mass.get("value"))
    return out


def subtree_links(urdf, link):
    """``link`` and every link below it."""
    _, _, joints = urdf_structure(urdf)
    out, todo = [], [link]
    while todo:
        parent = todo.pop()
        out.append(parent)
        todo += [c for _, p, c in joints.values() if p == parent]
    return out


def massless_joints_of(urdf):
    """The movable joints of ``urdf`` whose subtree has no mass, from the XML alone (the
    random trees' and Romeo's inertias vanish with their masses)."""
    _, _, joints = urdf_structure(urdf)
    masses = link_masses(urdf)
    return {name for name, (jtype, _, child) in joints.items() if jtype != "fixed"
            and not any(masses[link] > 0.0 for link in subtree_links(urdf, child))}


def without_inertia(urdf, links):
    """``urdf`` with the <inertial> of ``links`` removed, but the first one's, whose mass
    and inertia are set to 0 (as URDFs written for simulators have them)."""
    root = ET.fromstring(urdf)
    by_name = {link.get("name"): link for link in root.findall("link")}
    for k, name in enumerate(links):
        inertial = by_name[name].find("inertial")
        if inertial is None:
            continue
        if k == 0:
            inertial.find("mass").set("value", "0")
            for key in inertial.find("inertia").keys():
                inertial.find("inertia").set(key, "0")
        else:
            by_name[name].remove(inertial)
    return ET.tostring(root, encoding="unicode")


def middle_subtree(urdf):
    """(joint, its subtree's links) of the first movable joint, in name order, that moves
    2-3 movable joints, hangs on a link moved by a joint (not the root) and has a massive
    sibling subtree with a movable joint."""
    root, _, joints = urdf_structure(urdf)
    movable = {n for n, (t, _, _) in joints.items() if t != "fixed"}
    children = {}
    for name, (_, parent, _) in joints.items():
        children.setdefault(parent, []).append(name)

    def movable_below(joint):
        links = subtree_links(urdf, joints[joint][2])
        return [n for n in movable if joints[n][1] in links] + [joint]

    for name in sorted(movable):
        _, parent, child = joints[name]
        if parent == root or not 2 <= len(movable_below(name)) <= 3:
            continue
        if any(n != name and n in movable for n in children[parent]):
            return name, subtree_links(urdf, child)
    raise AssertionError("no massless subtree candidate in this tree")


def _case(name):
    """(ModelCase with an explicit joint order, [two (link, expressed frame)] for the F/T
    wrenches, the massless joints by the URDF)."""
    rng = np.random.default_rng(3)
    if name == "romeo":
        path = example_robot_data_file(ROMEO)
        if path is None:
            pytest.skip("example-robot-data is not installed (pip install "
                        "example-robot-data==6.0.0: Romeo's URDF)")
        urdf = path.read_text()
        # a sole in its own frame, a hand (above the massless fingers) in the wrist's
        wrenches = [("l_sole", "l_sole"), ("r_gripper", "r_wrist")]
    else:
        if name == "leaf":
            urdf = random_tree_urdf(8, seed=4, massless_leaf=True)
        else:
            tree = random_tree_urdf(14, seed=5, n_fixed=6)
            _, links = middle_subtree(tree)
            urdf = without_inertia(tree, links)
        massless = massless_joints_of(urdf)
        _, _, joints = urdf_structure(urdf)
        masses = link_masses(urdf)
        massive = sorted(c for n, (t, _, c) in joints.items()
                         if t != "fixed" and n not in massless and masses[c] > 0.0)
        root = urdf_structure(urdf)[0]
        wrenches = [(massive[0], massive[0]), (massive[-1], root)]
    joints = list(rng.permutation(default_joint_order(urdf)))    # not the default order
    return make_case(name, urdf, joints=joints), wrenches, massless_joints_of(urdf)


@pytest.fixture(scope="module")
def models():
    """``models(name)`` -> SimpleNamespace(case, wrenches, massless (names, user order),
    kd, oracle, state(k): the k-th random state), built once per module."""
    from types import SimpleNamespace

    from kin_dyn_ros.dynamics import KinDynComputations

    cache = {}

    def build(name):
        if name not in cache:
            case, wrenches, massless = _case(name)
            cache[name] = SimpleNamespace(
                case=case, wrenches=wrenches,
                massless=tuple(j for j in case.joints if j in massless),
                kd=KinDynComputations(case.urdf, case.joints, None, GRAVITY),
                oracle=PinocchioOracle(case.urdf, case.joints, None, GRAVITY),
                state=lambda k, case=case: random_state(
                    case, np.random.default_rng([33, CASE_NAMES.index(name), k])))
        return cache[name]

    return build


def _ft_wrenches(m, seed):
    """{link: (expressed frame, wrench (6,) in that frame)}: two F/T readings."""
    rng = np.random.default_rng([7, seed])
    return {link: (frame, rng.normal(scale=20.0, size=6)) for link, frame in m.wrenches}


def _rep_wrenches(m, rep, st, ft):
    """The F/T readings ``ft`` as external wrenches {link: w in ``rep``} on their links."""
    ref = m.oracle
    out = {}
    for link, (frame, w) in ft.items():
        inertial = wrench_in_frame_to_inertial(ref.forward_kinematics(frame, st.w_H_b, st.s), w)
        out[link] = wrench_to_rep(rep, ref.forward_kinematics(link, st.w_H_b, st.s), inertial)
    return out


def _expected(m, rep, st, wrenches):
    """(base acceleration (6,), the non-massless joints' (r,), their mask (n,)): ABA of
    Pinocchio's model with the massless joints locked at the state's configuration."""
    keep = np.array([j not in m.massless for j in m.case.joints])
    ref = m.oracle.locked(m.massless, st.w_H_b, st.s)
    assert ref.joints == [j for j, k in zip(m.case.joints, keep) if k]
    nu_dot = ref.aba(rep, st.w_H_b, st.s[keep], st.base_vel, st.s_dot[keep], st.tau[keep],
                     wrenches)
    return nu_dot[:6], nu_dot[6:], keep


def _check(m, nu_dot, expected, what):
    base, joints, keep = expected
    assert_close(nu_dot[:6], base, f"{what}: base acceleration", RTOL)
    assert_close(nu_dot[6:][keep], joints, f"{what}: joint accelerations", RTOL)
    assert np.isnan(nu_dot[6:][~keep]).all(), f"{what}: massless joints not NaN"
    assert np.isfinite(nu_dot[:6]).all() and np.isfinite(nu_dot[6:][keep]).all()


# ------------------------------------------------------------------------ the tests


@pytest.mark.parametrize("name", CASE_NAMES)
def test_the_models_have_the_massless_joints_they_should(models, name):
    m = models(name)
    assert m.massless, name
    if name == "leaf":
        assert m.massless == ("joint_007",)
    elif name == "middle":
        assert 2 <= len(m.massless) <= 3
    else:
        assert m.kd.NDoF == 55 and len(m.massless) == 24
        assert all(("Hand" in j) or ("Finger" in j) or ("Thumb" in j) for j in m.massless)
    # the F/T wrenches act on links, and are expressed in frames, that no massless joint moves
    _, _, joints = urdf_structure(m.case.urdf)
    moved = {link for j in m.massless for link in subtree_links(m.case.urdf, joints[j][2])}
    assert not moved & {frame for pair in m.wrenches for frame in pair}


# (rep and state_index: parametrised by conftest.pytest_generate_tests)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_aba_against_pinocchio_with_the_massless_joints_locked(models, name, rep, state_index):
    m, k = models(name), state_index
    st = m.state(k)
    m.kd.set_frame_velocity_representation(core_representation(rep))
    wrenches = _rep_wrenches(m, rep, st, _ft_wrenches(m, k))
    nu_dot = m.kd.aba(st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau, wrenches)
    _check(m, nu_dot, _expected(m, rep, st, wrenches), f"{name} aba {rep}")


@pytest.mark.parametrize("name", CASE_NAMES)
def test_compute_tick_against_pinocchio_with_the_massless_joints_locked(models, name, rep,
                                                                         state_index):
    m, k = models(name), state_index
    st = m.state(k)
    m.kd.set_frame_velocity_representation(core_representation(rep))
    ft = _ft_wrenches(m, k)
    tick = m.kd.compute_tick(st.w_H_b, st.s, st.base_vel, st.s_dot, st.tau, ft)
    assert tick.forward_dynamics_error == ""
    assert tick.massless_joints == m.massless        # in the user's joint order
    nu_dot = np.concatenate([tick.base_acceleration, tick.joint_accelerations])
    _check(m, nu_dot, _expected(m, rep, st, _rep_wrenches(m, rep, st, ft)),
           f"{name} compute_tick {rep}")
    # the rest of the tick is there as without torques
    without = m.kd.compute_tick(st.w_H_b, st.s, st.base_vel, st.s_dot)
    assert without.massless_joints == () and without.joint_accelerations is None
    for field in ("com", "centroidal_momentum", "gravity_torques"):
        assert_close(getattr(tick, field), getattr(without, field), field, SAME)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_the_other_accelerations_do_not_depend_on_the_massless_joints(models, name, rep):
    """A physics identity: nothing with inertia moves with them, so their positions,
    velocities and torques change no other coordinate's acceleration (to rounding)."""
    m = models(name)
    st = m.state(0)
    kd = m.kd
    kd.set_frame_velocity_representation(core_representation(rep))
    ft = _ft_wrenches(m, 0)
    wrenches = _rep_wrenches(m, rep, st, ft)
    free = np.array([j in m.massless for j in m.case.joints])
    lo = np.array([m.case.limits[j][0] for j in m.case.joints])
    hi = np.array([m.case.limits[j][1] for j in m.case.joints])

    def both(s, s_dot, tau):
        tick = kd.compute_tick(st.w_H_b, s, st.base_vel, s_dot, tau, ft)
        assert tick.massless_joints == m.massless
        return (kd.aba(st.w_H_b, s, st.base_vel, s_dot, tau, wrenches),
                np.concatenate([tick.base_acceleration, tick.joint_accelerations]))

    first = both(st.s, st.s_dot, st.tau)
    rng = np.random.default_rng(11)
    for _ in range(3):
        s, s_dot, tau = st.s.copy(), st.s_dot.copy(), st.tau.copy()
        s[free] = rng.uniform(lo[free], hi[free])
        s_dot[free] = rng.normal(scale=10.0, size=free.sum())
        tau[free] = rng.normal(scale=100.0, size=free.sum())
        for what, ref, got in zip(("aba", "compute_tick"), first, both(s, s_dot, tau)):
            assert_close(got[:6], ref[:6], f"{name} {what} {rep}: base", SAME)
            assert_close(got[6:][~free], ref[6:][~free], f"{name} {what} {rep}: joints",
                         SAME)
            assert np.isnan(got[6:][free]).all()
