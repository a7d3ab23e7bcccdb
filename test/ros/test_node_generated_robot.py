"""kin_dyn_node end to end on generated robots with what humanoids from elsewhere have.

The robot (``random_tree_urdf``): 24 movable joints of which a quarter are mimic joints, a
massless root link, 300 fixed frames, and a 600 KB description (a long comment, as xacro
output with gazebo and transmission tags is). The inputs use them: the odometry is of a
fixed frame deep in the tree, the contacts are fixed frames and one wrench is expressed in
yet another frame, and the JointState comes in two messages, one of which also carries the
mimic joints (their positions and velocities must be ignored, their efforts used) and a
name that is not in the model. Every output is checked against the dynamics core at the
state the inputs define (the core itself is checked against Pinocchio and iDynTree on random
trees with massless roots and fixed frames in test/dynamics; for it mimic joints are
independent coordinates). A second robot moves a massless leaf: that joint has no forward
dynamics, so ~/forward_dynamics carries NaN for it (named on /diagnostics) and the core's
accelerations for the others, and every other output goes on.
"""

import pathlib
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.dynamics.compiled import jit_status
from kin_dyn_ros.node.tick import massless_note
from random_tree import random_tree_urdf  # test/support
from kin_dyn_ros.dynamics.spatial import so3_exp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import (base_from_odometry, from_ns, joint_state_msg,  # noqa: E402
                         load_model, loopback_context, module_namespace, node_and_rig,
                         now_stamp, ns, odometry_msg, tf_matrices, wrench_msg, xyz)

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

URDF = random_tree_urdf(24, seed=11, n_fixed=300, massless_root=True, mimic=True).replace(
    '</robot>', f'<!-- {"gazebo and transmission tags " * 20000} --></robot>')
LEAF_URDF = random_tree_urdf(8, seed=4, massless_leaf=True)
TOL = dict(rtol=1e-12, atol=1e-12)      # node vs the core: same arithmetic up to transport
# forward dynamics of a random tree amplifies the rounding of the odometry's quaternion
FD_TOL = dict(rtol=1e-9, atol=1e-9)
NAMESPACE = module_namespace(__name__)  # the nodes, helpers and clients of this module


def deepest_fixed_frames(kd, count):
    """The ``count`` fixed frames with the most movable joints between them and the base."""
    model = kd.model
    depth = {child: len(model.paths[model.frame_body[model.frame_index[child]]])
             for _, _, child, _ in kd.static_transforms}
    return sorted(depth, key=lambda f: (-depth[f], f))[:count]


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(134, 165)


@pytest.fixture(scope='module')
def ref():
    return KinDynComputations(URDF)


@pytest.fixture(scope='module')
def frames(ref):
    odometry, *contacts = deepest_fixed_frames(ref, 3)
    return SimpleNamespace(odometry=odometry, contacts=contacts)


@pytest.fixture(scope='module')
def system(ros_context, frames):
    params = {'contacts': frames.contacts, 'wrench_timeout': 0.5, 'world_frame': 'odom',
              'diagnostics_period': 0.2}
    topics = {c: f'{c}/wrench' for c in frames.contacts}
    with node_and_rig(ros_context, params, 'kin_dyn_generated_helper', topics,
                      NAMESPACE) as (node, rig):
        load_model(rig, URDF)
        yield SimpleNamespace(node=node, rig=rig)


def mimic_filled(ref, s, s_dot):
    """Positions and velocities with every mimic joint set from its master (the URDF's
    definition: q = m q_master + o, dq = m dq_master)."""
    index = {name: k for k, name in enumerate(ref.joints_name_list)}
    s, s_dot = s.copy(), s_dot.copy()
    for name, (master, mult, offset) in ref.mimic_joints.items():
        s[index[name]] = mult * s[index[master]] + offset
        s_dot[index[name]] = mult * s_dot[index[master]]
    return s, s_dot


def test_every_output_matches_the_core(system, ref, frames):
    rng = np.random.default_rng(5)
    names, n = ref.joints_name_list, ref.NDoF
    mimic = [k for k, name in enumerate(names) if name in ref.mimic_joints]
    assert len(mimic) >= 3 and ref.get_total_mass() > 0
    s, s_dot = mimic_filled(ref, rng.uniform(-0.5, 0.5, n), rng.normal(size=n) * 0.5)
    tau = rng.normal(size=n)
    w_H_c = np.eye(4)
    w_H_c[:3, :3], w_H_c[:3, 3] = so3_exp(rng.normal(size=3) * 0.3), rng.normal(size=3)
    twist_c = rng.normal(size=6) * 0.3
    left, right = frames.contacts
    wrenches = {left: ('', rng.normal(size=6) * 20.0),
                right: (frames.odometry, rng.normal(size=6) * 20.0)}

    rig, stamp = system.rig, now_stamp(system.rig)
    rig.odometry.publish(odometry_msg('odom', frames.odometry, w_H_c, twist_c, stamp))
    for contact, (frame, w) in wrenches.items():
        rig.wrenches[contact].publish(wrench_msg(frame, w, stamp))
    node = system.node
    assert rig.spin_until(lambda: node.loop.inputs.odometry is not None
                          and node.loop.inputs.odometry.stamp_ns == ns(stamp)
                          and all(node.loop.inputs.wrenches.get(c) is not None
                                  and node.loop.inputs.wrenches[c].stamp_ns == ns(stamp) for c in wrenches))
    plain = [k for k in range(n) if k not in mimic]
    junk = rng.normal(size=len(mimic)) + 3.0          # mimic positions/velocities: ignored
    first = plain[0::2] + mimic
    rig.joint_states.publish(joint_state_msg(
        [names[k] for k in first] + ['not_a_joint'],
        [*s[plain[0::2]], *junk, 1.0], [*s_dot[plain[0::2]], *junk, 1.0],
        [*tau[first], 1.0], from_ns(ns(stamp) - 1_000_000)))
    rig.joint_states.publish(joint_state_msg([names[k] for k in plain[1::2]], s[plain[1::2]],
                                             s_dot[plain[1::2]], tau[plain[1::2]], stamp))
    out = rig.wait_outputs(stamp, ('tf', 'com', 'momentum', 'gravity', 'forward_dynamics'))

    w_H_b, nu = base_from_odometry(ref, frames.odometry, w_H_c, twist_c, s, s_dot)
    result = ref.compute_tick(w_H_b, s, nu, s_dot, tau,
                              {c: (frame or c, w) for c, (frame, w) in wrenches.items()})
    got = tf_matrices(out['tf'])
    want = {(p, c): h for (_, p, c), h in zip(ref.joint_frames, result.joint_transforms)}
    want['odom', ref.model.root_link] = result.base_pose
    assert set(got) == set(want)
    for key, h in want.items():
        np.testing.assert_allclose(got[key], h, atol=1e-12, err_msg=str(key))
    static = tf_matrices(rig.received['tf_static'][-1])
    assert len(static) == len(ref.static_transforms) >= 300
    for _, parent, child, h in ref.static_transforms:
        np.testing.assert_allclose(static[parent, child], h, atol=1e-12)
    np.testing.assert_allclose(xyz(out['com'].point), result.com, **TOL)
    momentum = out['momentum'].twist
    np.testing.assert_allclose(np.concatenate([xyz(momentum.linear), xyz(momentum.angular)]),
                               result.centroidal_momentum, **TOL)
    assert list(out['gravity'].name) == names
    np.testing.assert_allclose(out['gravity'].effort, result.gravity_torques, **TOL)
    fd = out['forward_dynamics']
    assert sorted(fd.active_contacts) == sorted(wrenches)
    acc = np.concatenate([xyz(fd.base_acceleration.linear), xyz(fd.base_acceleration.angular),
                          fd.joint_accelerations])
    np.testing.assert_allclose(acc, np.concatenate([result.base_acceleration,
                                                    result.joint_accelerations]), **FD_TOL)


@pytest.fixture
def leaf_system():
    """A node on a robot whose last joint moves a massless leaf: no inertia moves with that
    joint, its acceleration is undefined. In a domain of its own (the module's node also
    runs), unless ROS_DOMAIN_ID is explicit: then a name of its own keeps its /diagnostics and
    the module node's apart."""
    contexts = loopback_context(200, 215)
    params = {'use_odometry': False, 'diagnostics_period': 0.2}
    try:
        with node_and_rig(next(contexts), params, 'kin_dyn_leaf_helper', {},
                          f'{NAMESPACE}/leaf', node_name='kin_dyn_leaf') as (node, rig):
            load_model(rig, LEAF_URDF, odometry=False)
            yield SimpleNamespace(node=node, rig=rig)
    finally:
        contexts.close()


def test_a_massless_joint_gets_nan_and_every_other_output_goes_on(leaf_system):
    ref = KinDynComputations(LEAF_URDF)
    rng = np.random.default_rng(6)
    n, names = ref.NDoF, ref.joints_name_list
    s, s_dot, tau = rng.uniform(-0.5, 0.5, n), rng.normal(size=n), rng.normal(size=n)
    rig, stamp = leaf_system.rig, now_stamp(leaf_system.rig)
    rig.joint_states.publish(joint_state_msg(names, s, s_dot, tau, stamp))
    out = rig.wait_outputs(stamp, ('tf', 'com', 'momentum', 'gravity', 'forward_dynamics'))
    result = ref.compute_tick(np.eye(4), s, np.zeros(6), s_dot, tau)   # fixed_base_pose
    assert result.forward_dynamics_error == '' and result.massless_joints == ('joint_007',)
    got = tf_matrices(out['tf'])
    for (_, parent, child), h in zip(ref.joint_frames, result.joint_transforms):
        np.testing.assert_allclose(got[parent, child], h, atol=1e-12)
    np.testing.assert_allclose(xyz(out['com'].point), result.com, **TOL)
    np.testing.assert_allclose(out['gravity'].effort, result.gravity_torques, **TOL)
    fd = out['forward_dynamics']
    assert list(fd.joint_names) == names and not fd.base_from_odometry
    acc = np.asarray(fd.joint_accelerations)
    assert [names[k] for k in np.flatnonzero(np.isnan(acc))] == ['joint_007']
    np.testing.assert_allclose(acc, result.joint_accelerations, **FD_TOL)   # NaN where NaN
    np.testing.assert_allclose(
        np.concatenate([xyz(fd.base_acceleration.linear), xyz(fd.base_acceleration.angular)]),
        result.base_acceleration, **FD_TOL)
    assert np.isfinite(result.base_acceleration).all()

    def fd_note():
        diagnostics = rig.received['diagnostics']
        inputs = diagnostics and [x for x in diagnostics[-1].status if x.name.endswith('inputs')]
        return inputs and {kv.key: kv.value for kv in inputs[0].values}['forward dynamics']
    assert rig.spin_until(lambda: fd_note() == massless_note(('joint_007',)))
    assert 'joint_007' in fd_note()


def test_diagnostics_name_the_generated_model(system, ref):
    rig = system.rig
    count = len(rig.received['diagnostics'])
    assert rig.spin_until(lambda: len(rig.received['diagnostics']) > count)
    status = {s.name: s for s in rig.received['diagnostics'][-1].status}
    model = {kv.key: kv.value for kv in status['kin_dyn_node: model'].values}
    assert model == {'robot': ref.model.name, 'root_link': ref.model.root_link,
                     'joints': str(ref.NDoF), 'frames': str(len(ref.frame_names)),
                     'dynamics path': jit_status().describe()}
