"""kin_dyn_node in-process, over real rclpy and loopback DDS, against the dynamics core and
Pinocchio.

One rclpy context, one node and one helper node for the whole module (tests run in file
order and share the node: the model reload test is last), twice: with the node's sensor
thread (the default) and with every callback on the executor (``sensor_thread: false``).
The helper publishes iCub's description on the robot_description topic, joint states (split
over two messages, with an unknown name), odometry of a foot and two foot wrenches (one
expressed in another frame), and records every output.

Run:  source scripts/env.sh && python -m pytest test/ros/test_node.py
"""

import math
import re
import pathlib
import time
import sys
import threading
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402

from kin_dyn_ros.dynamics.base_state import change_base_representation  # noqa: E402
from kin_dyn_ros.dynamics.compiled import jit_status  # noqa: E402
from kin_dyn_ros.node.conversions import matrix_to_pose  # noqa: E402
from kin_dyn_ros.dynamics import KinDynComputations, Representations  # noqa: E402
from kin_dyn_ros.dynamics.spatial import so3_exp  # noqa: E402
from kin_dyn_ros.node.markers import FORCE_SCALE  # noqa: E402
from kin_dyn_ros.node import KinDynNode  # noqa: E402
from kin_dyn_ros.node.kin_dyn_node import MAX_DESCRIPTION_CHARS, PARSE_ERROR_CHARS  # noqa: E402
from kin_dyn_ros.node.loop import CPU_EVERY_S  # noqa: E402
from kin_dyn_ros.node.outputs import LATCHED_QOS  # noqa: E402
from kin_dyn_ros_interfaces.msg import FloatingBaseState  # noqa: E402
from kin_dyn_ros_interfaces.srv import GetDynamics, GetJacobian, GetMassMatrix  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / 'dynamics'))
from oracles import (PinocchioOracle, wrench_in_frame_to_inertial,  # noqa: E402
                     wrench_to_rep)
from ros_helpers import (MIMIC_URDF, TICK_OUTPUTS, Rig, base_from_odometry,  # noqa: E402
                         from_ns, joint_state_msg, load_model, loopback_context,
                         module_namespace, node_and_rig, now_stamp, ns, odometry_msg,
                         tf_matrices, wrench_msg, xyz)

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

CONTACT_TOPICS = {'l_sole': 'l_sole/wrench', 'r_sole': 'ft/right'}
NODE_PARAMS = {'contacts': ['l_sole', 'r_sole'], 'contact.r_sole.topic': 'ft/right',
               'wrench_timeout': 0.5, 'diagnostics_period': 0.2, 'world_frame': 'odom',
               'markers_rate': 1e6}   # every tick's markers (the throttle has its own test)
ODOM_CHILD = 'l_sole'
MIXED = Representations.MIXED_REPRESENTATION
BODY = Representations.BODY_FIXED_REPRESENTATION
TOL = dict(rtol=1e-12, atol=1e-12)      # node vs the core: same arithmetic up to transport
ORACLE = dict(rtol=1e-9, atol=1e-9)     # vs Pinocchio
NAMESPACE = module_namespace(__name__)  # the nodes, helpers and clients of this module


# -- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope='module')
def pin(icub_urdf, ref):
    return PinocchioOracle(icub_urdf, ref.joints_name_list)


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(1, 33)


@pytest.fixture(scope='module', params=[True, False], ids=['sensor_thread', 'executor'])
def system(request, ros_context, icub_urdf):
    """The node with its sensor inputs on its own thread and its services in a process of
    their own (the defaults), then with both in its own process: on the executor, answered
    there (services_process: false), the same answers."""
    params = {**NODE_PARAMS, 'sensor_thread': request.param,
              'services_process': request.param}
    with node_and_rig(ros_context, params, 'kin_dyn_test_helper', CONTACT_TOPICS,
                      NAMESPACE) as (node, rig):
        clients = {name: rig.node.create_client(srv, rig.private(name)) for name, srv in
                   (('get_jacobian', GetJacobian), ('get_mass_matrix', GetMassMatrix),
                    ('get_dynamics', GetDynamics))}
        load_model(rig, icub_urdf)
        assert all(c.wait_for_service(timeout_sec=10.0) for c in clients.values())
        yield SimpleNamespace(node=node, rig=rig, clients=clients)


# -- building inputs and expected outputs -----------------------------------------------------
@dataclass
class Case:
    """One robot state as the helper sends it."""

    s: np.ndarray
    s_dot: np.ndarray
    tau: np.ndarray
    w_H_c: np.ndarray       # odometry pose of ODOM_CHILD
    twist_c: np.ndarray     # its twist in its own axes (REP-105)
    wrenches: dict          # contact -> (header.frame_id, w (6,))


def make_case(ref, seed):
    rng = np.random.default_rng(seed)
    n = ref.NDoF
    w_H_c = np.eye(4)
    w_H_c[:3, :3] = so3_exp(rng.normal(size=3) * 0.3)
    w_H_c[:3, 3] = rng.normal(size=3)
    return Case(rng.uniform(-0.5, 0.5, n), rng.normal(size=n) * 0.5, rng.normal(size=n),
                w_H_c, rng.normal(size=6) * 0.3,
                {'l_sole': ('', rng.normal(size=6) * 20.0),
                 'r_sole': ('r_foot', rng.normal(size=6) * 20.0)})


def base_state(ref, case):
    """(w_H_b, nu) from the odometry of ODOM_CHILD (:func:`base_from_odometry`)."""
    return base_from_odometry(ref, ODOM_CHILD, case.w_H_c, case.twist_c, case.s, case.s_dot)


def frame_wrenches(case, contacts=('l_sole', 'r_sole')):
    return {c: (case.wrenches[c][0] or c, case.wrenches[c][1]) for c in contacts}


def expected(ref, case, contacts=('l_sole', 'r_sole'), tau=True):
    w_H_b, nu = base_state(ref, case)
    return ref.compute_tick(w_H_b, case.s, nu, case.s_dot, case.tau if tau else None,
                            frame_wrenches(case, contacts))


def add_ms(stamp, ms):
    return from_ns(ns(stamp) + int(ms * 1e6))


def send_base_and_wrenches(system, case, stamp, wrench_stamps=None, world='odom'):
    """Publish odometry (in ``world``) and wrenches, and wait until the node holds them."""
    rig, node = system.rig, system.node
    rig.odometry.publish(odometry_msg(world, ODOM_CHILD, case.w_H_c, case.twist_c, stamp))
    for c, (frame, w) in case.wrenches.items():
        rig.wrenches[c].publish(wrench_msg(frame, w, (wrench_stamps or {}).get(c, stamp)))
    want = {c: ns((wrench_stamps or {}).get(c, stamp)) for c in case.wrenches}
    assert rig.spin_until(
        lambda: node.loop.inputs.odometry is not None and node.loop.inputs.odometry.stamp_ns == ns(stamp)
        and all(c in node.loop.inputs.wrenches and node.loop.inputs.wrenches[c].stamp_ns == t for c, t in want.items()))


def send_joints(system, case, stamp, efforts=True):
    """Publish the joint state in two messages: even joints + an unknown name at stamp - 1 ms,
    odd joints at ``stamp`` (the tick whose outputs the tests check)."""
    rig, joints = system.rig, np.array(system.node.loop.model.kd.joints_name_list)
    first = add_ms(stamp, -1.0)
    for part, st in ((slice(0, None, 2), first), (slice(1, None, 2), stamp)):
        extra = ['not_a_joint'] if st is first else []
        pos = list(case.s[part]) + [1.0] * len(extra)
        vel = list(case.s_dot[part]) + [1.0] * len(extra)
        eff = list(case.tau[part]) + [1.0] * len(extra) if efforts else []
        rig.joint_states.publish(joint_state_msg(list(joints[part]) + extra, pos, vel, eff, st))


def send_case(system, case, keys=TICK_OUTPUTS, world='odom'):
    stamp = now_stamp(system.rig)
    send_base_and_wrenches(system, case, stamp, world=world)
    send_joints(system, case, stamp)
    return stamp, system.rig.wait_outputs(stamp, keys)


def call(system, name, request):
    future = system.clients[name].call_async(request)
    assert system.rig.spin_until(future.done), f'{name}: no response'
    return future.result()


def next_diagnostics(rig):
    """{status name: DiagnosticStatus} of the next /diagnostics message."""
    n = len(rig.received['diagnostics'])
    assert rig.spin_until(lambda: len(rig.received['diagnostics']) > n)
    return {s.name: s for s in rig.received['diagnostics'][-1].status}


def assert_tf(msg, ref, result, base=True):
    got = tf_matrices(msg)
    want = {(p, c): h for (_, p, c), h in zip(ref.joint_frames, result.joint_transforms)}
    if base:
        want['odom', 'root_link'] = result.base_pose
    assert set(got) == set(want)
    for key, h in want.items():
        np.testing.assert_allclose(got[key], h, atol=1e-12, err_msg=str(key))


# -- tests ------------------------------------------------------------------------------------
def test_joints_never_received_use_the_default_and_are_reported(system, ref):
    case = make_case(ref, 0)
    names = ref.joints_name_list
    received = names[:20]
    stamp = now_stamp(system.rig)
    send_base_and_wrenches(system, case, stamp)
    system.rig.joint_states.publish(joint_state_msg(received, case.s[:20], case.s_dot[:20],
                                                    case.tau[:20], stamp))
    out = system.rig.wait_outputs(stamp, ('tf', 'com'))
    case.s[20:] = 0.0          # default_joint_position
    case.s_dot[20:] = 0.0
    result = expected(ref, case, tau=False)
    assert_tf(out['tf'], ref, result)
    np.testing.assert_allclose(xyz(out['com'].point), result.com, **TOL)
    assert system.rig.find('forward_dynamics', stamp) is None   # efforts incomplete

    def inputs_status():
        diagnostics = system.rig.received['diagnostics']
        return diagnostics and [s for s in diagnostics[-1].status if s.name.endswith('inputs')][0]

    def missing():
        return {kv.key: kv.value for kv in inputs_status().values}['missing joints'].split()
    assert system.rig.spin_until(lambda: inputs_status() and missing() == names[20:])
    assert f'{len(names) - 20} joints never received' in inputs_status().message


def test_every_output_matches_the_core_and_pinocchio(system, ref, pin):
    case = make_case(ref, 1)
    stamp, out = send_case(system, case)
    result = expected(ref, case)
    w_H_b, nu = base_state(ref, case)

    # the node's base twist reproduces the odometry twist through the core's Jacobian
    measured = system.node.loop.last_tick.state
    np.testing.assert_allclose(measured.w_H_b, w_H_b, atol=1e-12)
    v_child = ref.jacobian(ODOM_CHILD, measured.w_H_b, case.s) @ np.concatenate(
        [measured.base_vel, case.s_dot])
    r = case.w_H_c[:3, :3]
    np.testing.assert_allclose(v_child, np.concatenate([r @ case.twist_c[:3],
                                                        r @ case.twist_c[3:]]), atol=1e-10)

    # /tf and /tf_static
    assert_tf(out['tf'], ref, result)
    static = tf_matrices(system.rig.received['tf_static'][-1])
    want_static = {(p, c): h for _, p, c, h in ref.static_transforms}
    assert set(static) == set(want_static)
    for key, h in want_static.items():
        np.testing.assert_allclose(static[key], h, atol=1e-12)

    # CoM, momentum, gravity torques, forward dynamics: the core, and Pinocchio
    assert out['com'].header.frame_id == 'odom'
    np.testing.assert_allclose(xyz(out['com'].point), result.com, **TOL)
    np.testing.assert_allclose(xyz(out['com'].point), pin.com_position(w_H_b, case.s), **ORACLE)
    mom = out['momentum']
    assert mom.header.frame_id == 'odom'
    np.testing.assert_allclose(np.concatenate([xyz(mom.twist.linear), xyz(mom.twist.angular)]),
                               result.centroidal_momentum, **TOL)
    np.testing.assert_allclose(
        result.centroidal_momentum,
        pin.centroidal_momentum_matrix('MIXED', w_H_b, case.s) @ np.concatenate([nu, case.s_dot]),
        **ORACLE)
    grav = out['gravity']
    assert list(grav.name) == ref.joints_name_list
    np.testing.assert_allclose(grav.effort, result.gravity_torques, **TOL)
    np.testing.assert_allclose(grav.effort, pin.gravity_term('MIXED', w_H_b, case.s)[6:], **ORACLE)
    fd = out['forward_dynamics']
    assert fd.representation == 'MIXED'
    assert list(fd.joint_names) == ref.joints_name_list
    assert sorted(fd.active_contacts) == ['l_sole', 'r_sole']
    acc = np.concatenate([xyz(fd.base_acceleration.linear), xyz(fd.base_acceleration.angular),
                          fd.joint_accelerations])
    np.testing.assert_allclose(acc, np.concatenate([result.base_acceleration,
                                                    result.joint_accelerations]), **TOL)
    ext = {}
    for contact, (frame, w) in frame_wrenches(case).items():
        w_H_e = ref.forward_kinematics(frame, w_H_b, case.s)
        w_H_f = ref.forward_kinematics(contact, w_H_b, case.s)
        ext[contact] = wrench_to_rep('MIXED', w_H_f, wrench_in_frame_to_inertial(w_H_e, w))
    np.testing.assert_allclose(acc, pin.aba('MIXED', w_H_b, case.s, nu, case.s_dot, case.tau, ext),
                               rtol=1e-8, atol=1e-8)

    # markers: CoM, projection, contact forces at the soles in world axes
    markers = {(m.ns, m.id): m for m in out['markers'].markers}
    np.testing.assert_allclose(xyz(markers['com', 0].pose.position), result.com, **TOL)
    np.testing.assert_allclose(xyz(markers['com_projection', 0].pose.position),
                               [*result.com[:2], 0.0], **TOL)
    for k, contact in enumerate(('l_sole', 'r_sole')):
        frame, w = frame_wrenches(case)[contact]
        arrow = markers['contact_forces', k]
        assert arrow.action == Marker.ADD
        start, end = xyz(arrow.points[0]), xyz(arrow.points[1])
        np.testing.assert_allclose(start, ref.forward_kinematics(contact, w_H_b, case.s)[:3, 3],
                                   atol=1e-12)
        r_e = ref.forward_kinematics(frame, w_H_b, case.s)[:3, :3]
        np.testing.assert_allclose(end - start, FORCE_SCALE * r_e @ w[:3], atol=1e-12)


def test_diagnostics_report_model_inputs_and_tick_time(system, ref):
    time.sleep(CPU_EVERY_S)       # the first tick after a pause has its thread CPU time read
    send_case(system, make_case(ref, 2))
    status = next_diagnostics(system.rig)
    assert set(status) == {'kin_dyn_node: model', 'kin_dyn_node: inputs', 'kin_dyn_node: tick'}
    model = {kv.key: kv.value for kv in status['kin_dyn_node: model'].values}
    assert model == {'robot': 'iCub', 'root_link': 'root_link', 'joints': '32', 'frames': '213',
                     'dynamics path': jit_status().describe()}
    assert model['dynamics path'].startswith(('compiled kernels (numba; cache: ', 'NumPy core ('))
    inputs = {kv.key: kv.value for kv in status['kin_dyn_node: inputs'].values}
    assert inputs['missing joints'] == '' and inputs['forward dynamics'] == 'computed'
    for key in ('joint_states age [s]', 'odometry age [s]', 'wrench l_sole age [s]',
                'wrench r_sole age [s]'):
        assert 0.0 <= float(inputs[key]) < 5.0
    values = {kv.key: kv.value for kv in status['kin_dyn_node: tick'].values}
    # this node's contacts publish no equilibrium torques: nothing here subscribes to them
    assert values.pop('equilibrium torques') == \
        'not computed: nothing subscribes to ~/equilibrium_torques'
    tick = {k: float(v) for k, v in values.items()}
    assert 0.0 < tick['mean [ms]'] <= tick['max [ms]']
    # the thread's CPU time is measured inside a tick's wall interval: never longer
    assert 0.0 < tick['CPU mean [ms]'] <= tick['CPU max [ms]'] <= tick['max [ms]']


def test_diagnostics_are_built_and_published_outside_the_lock(system, monkeypatch):
    """/diagnostics is built and published on the executor's thread, which has no real-time
    priority: not under the node's lock, which a thread_priority tick would wait for while
    that thread is preempted. Checked from another thread while the message is built: the
    lock can be taken (a tick holds it < 1 ms; the timer's thread, if it held it, would
    hold it until the check gave up)."""
    from kin_dyn_ros.node import kin_dyn_node
    free, real = [], kin_dyn_node.build_diagnostics

    def build(*args):
        def probe():
            taken = system.node.loop.lock.acquire(timeout=0.2)
            if taken:
                system.node.loop.lock.release()
            free.append(taken)
        thread = threading.Thread(target=probe)
        thread.start()
        thread.join()
        return real(*args)
    monkeypatch.setattr(kin_dyn_node, 'build_diagnostics', build)
    next_diagnostics(system.rig)
    assert free and all(free), free


def test_services_match_the_core_and_pinocchio(system, ref, pin):
    case = make_case(ref, 3)
    send_case(system, case)
    w_H_b, nu = base_state(ref, case)
    n = ref.NDoF

    # measured state, default (MIXED) representation
    res = call(system, 'get_jacobian', GetJacobian.Request(frame='r_hand', use_measured_state=True))
    assert res.success, res.message
    assert (res.rows, res.cols) == (6, 6 + n)
    assert list(res.column_names) == ['base_lin_x', 'base_lin_y', 'base_lin_z', 'base_ang_x',
                                      'base_ang_y', 'base_ang_z'] + ref.joints_name_list
    np.testing.assert_allclose(np.reshape(res.data, (6, -1)),
                               ref.jacobian('r_hand', w_H_b, case.s), **TOL)

    # explicit state in BODY_FIXED, joints in another order: vs Pinocchio
    rng = np.random.default_rng(4)
    order = rng.permutation(n)
    s2 = rng.uniform(-0.5, 0.5, n)
    h2 = make_case(ref, 5).w_H_c
    req_state = FloatingBaseState(joint_names=[ref.joints_name_list[i] for i in order],
                                  positions=list(s2[order]), base_pose=matrix_to_pose(h2))
    res = call(system, 'get_jacobian', GetJacobian.Request(
        frame='l_hand', representation='BODY_FIXED', use_measured_state=False, state=req_state))
    assert res.success, res.message
    np.testing.assert_allclose(np.reshape(res.data, (6, -1)),
                               pin.jacobian('BODY_FIXED', 'l_hand', h2, s2), **ORACLE)
    res = call(system, 'get_mass_matrix', GetMassMatrix.Request(
        representation='BODY_FIXED', use_measured_state=False, state=req_state))
    assert res.success, res.message
    assert (res.rows, res.cols) == (6 + n, 6 + n)
    np.testing.assert_allclose(np.reshape(res.data, (6 + n, 6 + n)),
                               pin.mass_matrix('BODY_FIXED', h2, s2), **ORACLE)

    # everything at the measured state, in INERTIAL_FIXED (the base twist is converted)
    inertial = Representations.INERTIAL_FIXED_REPRESENTATION
    res = call(system, 'get_dynamics', GetDynamics.Request(
        representation='INERTIAL_FIXED', use_measured_state=True, frames=['l_sole', 'head']))
    assert res.success, res.message
    ref.set_frame_velocity_representation(inertial)
    try:
        nu_in = change_base_representation(nu, w_H_b, MIXED, inertial)   # nu is MIXED
        big = 6 + n
        np.testing.assert_allclose(np.reshape(res.mass_matrix, (big, big)),
                                   ref.mass_matrix(w_H_b, case.s), **TOL)
        np.testing.assert_allclose(res.bias_forces,
                                   ref.bias_force(w_H_b, case.s, nu_in, case.s_dot), **TOL)
        np.testing.assert_allclose(res.bias_forces,
                                   pin.bias_force('INERTIAL_FIXED', w_H_b, case.s, nu_in,
                                                  case.s_dot), **ORACLE)
        np.testing.assert_allclose(res.gravity_forces, ref.gravity_term(w_H_b, case.s), **TOL)
        np.testing.assert_allclose(np.reshape(res.centroidal_momentum_matrix, (6, big)),
                                   ref.centroidal_momentum_matrix(w_H_b, case.s), **TOL)
        np.testing.assert_allclose(xyz(res.com), ref.CoM_position(w_H_b, case.s), **TOL)
        np.testing.assert_allclose(np.reshape(res.com_jacobian, (3, big)),
                                   ref.CoM_jacobian(w_H_b, case.s), **TOL)
        jac = np.reshape(res.jacobians, (2, 6, big))
        for k, frame in enumerate(('l_sole', 'head')):
            np.testing.assert_allclose(jac[k], ref.jacobian(frame, w_H_b, case.s), **TOL)
    finally:
        ref.set_frame_velocity_representation(MIXED)
    assert list(res.frames) == ['l_sole', 'head']


def _bad_state(ref, **change):
    state = dict(joint_names=ref.joints_name_list, positions=[0.0] * ref.NDoF,
                 base_pose=matrix_to_pose(np.eye(4)))
    state.update(change)
    return FloatingBaseState(**state)


def test_service_errors_are_reported_not_thrown(system, ref):
    names = ref.joints_name_list
    zero_q = matrix_to_pose(np.eye(4))
    zero_q.orientation.w = 0.0
    def jacobian(**state):
        return GetJacobian.Request(frame='l_sole', state=_bad_state(ref, **state))
    cases = [
        (GetJacobian.Request(frame='no_such_link', use_measured_state=True),
         "unknown frame 'no_such_link'"),
        (GetJacobian.Request(frame='l_sole', representation='LOCAL', use_measured_state=True),
         'unknown velocity representation'),
        (jacobian(joint_names=names[:-1] + ['bogus']), "unknown joints \\['bogus'\\]"),
        (jacobian(positions=[0.0] * 3), '32 joint_names, 3 positions'),
        (jacobian(joint_names=names[:-1], positions=[0.0] * 31),
         f"misses joints \\['{names[-1]}'\\]"),
        (jacobian(base_pose=zero_q), 'base_pose.*unit quaternion'),
        (jacobian(positions=[math.nan] * 32), 'NaN or inf'),
        (GetDynamics.Request(use_measured_state=True, frames=['l_sole', 'nope']),
         "unknown frame 'nope'"),
        (GetMassMatrix.Request(state=_bad_state(ref, velocities=[0.0])), '1 velocities'),
    ]
    services = {GetJacobian.Request: 'get_jacobian', GetDynamics.Request: 'get_dynamics',
                GetMassMatrix.Request: 'get_mass_matrix'}
    for request, match in cases:
        res = call(system, services[type(request)], request)
        assert not res.success
        assert re.search(match, res.message), (match, res.message)
    # the node still answers and still publishes
    res = call(system, 'get_mass_matrix', GetMassMatrix.Request(use_measured_state=True))
    assert res.success
    send_case(system, make_case(ref, 6), keys=('com',))


def test_bad_inputs_are_dropped_and_leave_the_state_unchanged(system, ref):
    rig, node = system.rig, system.node
    case = make_case(ref, 7)
    stamp, before = send_case(system, case)
    names = ref.joints_name_list
    bad_stamp = add_ms(stamp, 1.0)
    nan_q = odometry_msg('odom', ODOM_CHILD, np.eye(4), np.zeros(6), bad_stamp)
    nan_q.pose.pose.orientation.x = math.nan
    zero_q = odometry_msg('odom', ODOM_CHILD, np.eye(4), np.zeros(6), bad_stamp)
    zero_q.pose.pose.orientation.w = 0.0
    bad_twist = odometry_msg('odom', ODOM_CHILD, np.eye(4), [0, 0, math.inf, 0, 0, 0], bad_stamp)
    for msg in (zero_q, nan_q, bad_twist,
                odometry_msg('odom', 'no_link', np.eye(4), np.zeros(6), bad_stamp),
                odometry_msg('map', ODOM_CHILD, np.eye(4), np.zeros(6), bad_stamp)):
        rig.odometry.publish(msg)
    rig.wrenches['l_sole'].publish(wrench_msg('', [math.nan, 0, 0, 0, 0, 0], bad_stamp))
    rig.wrenches['r_sole'].publish(wrench_msg('no_such_frame', np.ones(6), bad_stamp))
    bad_js = [joint_state_msg(names[:2], [0.1]),                              # 2 names, 1 position
              joint_state_msg(names[:2], [0.1, 0.2], [1.0]),                  # velocity length
              joint_state_msg(names[:2], [0.1, 0.2], efforts=[1.0, 2.0, 3.0]),  # effort length
              joint_state_msg(names[:2], [0.1, math.nan]),
              joint_state_msg(names[:2], [0.1, 0.2], [math.inf, 0.0])]
    bad_stamps = [add_ms(stamp, 2.0 + k) for k in range(len(bad_js) + 1)]
    for msg, st in zip(bad_js, bad_stamps):
        msg.header.stamp = st
        rig.joint_states.publish(msg)
    # bytes that end early (the node reads its inputs from their bytes: kin_dyn_ros.node.cdr)
    cut = joint_state_msg(names, case.s, case.s_dot, case.tau, bad_stamps[-1])
    rig.joint_states.publish(serialize_message(cut)[:-12])
    rig.odometry.publish(serialize_message(nan_q)[:80])
    rig.wrenches['l_sole'].publish(serialize_message(wrench_msg('', np.ones(6), bad_stamp))[:30])
    # re-send the good odometry and wrenches (in order after the bad ones on each topic)
    # and probe with the odd joints again (unchanged values) and unknown names only
    probe = add_ms(stamp, 20.0)
    send_base_and_wrenches(system, case, probe)
    nobody = [add_ms(stamp, 18.0), add_ms(stamp, 19.0)]     # no joint of the model: no tick
    rig.joint_states.publish(joint_state_msg([], [], stamp=nobody[0]))
    rig.joint_states.publish(joint_state_msg(['nobody'], [3.0], stamp=nobody[1]))
    rig.joint_states.publish(joint_state_msg(names[1::2], case.s[1::2], case.s_dot[1::2],
                                             case.tau[1::2], probe))
    after = rig.wait_outputs(probe)
    for st in bad_stamps + nobody:
        assert rig.find('com', st) is None          # bad JointStates made no tick
    assert_tf(after['tf'], ref, expected(ref, case))
    for key in ('com', 'momentum', 'gravity', 'forward_dynamics'):
        a, b = before[key], after[key]
        b.header = a.header                         # everything but the stamp is equal
        assert a == b, key
    assert node.loop.model.kd.NDoF == 32


def test_same_stamp_is_published_once_and_backwards_stamps_reset(system, ref):
    rig = system.rig
    case = make_case(ref, 8)
    stamp, _ = send_case(system, case)
    names = ref.joints_name_list
    rig.joint_states.publish(joint_state_msg(names, case.s + 0.1, stamp=stamp))   # same stamp
    later = add_ms(stamp, 5.0)
    rig.joint_states.publish(joint_state_msg(names, case.s, case.s_dot, case.tau, later))
    rig.wait_outputs(later, ('tf',))
    assert rig.count('tf', stamp) == 1 and rig.count('com', stamp) == 1
    past = add_ms(stamp, -10_000.0)                                               # clock jump
    rig.joint_states.publish(joint_state_msg(names, case.s, case.s_dot, case.tau, past))
    rig.wait_outputs(past, ('tf', 'com'))
    again = add_ms(past, 1.0)
    rig.joint_states.publish(joint_state_msg(names, case.s, case.s_dot, case.tau, again))
    rig.wait_outputs(again, ('tf',))


def test_stamps_going_back_again_and_again_warn_once_per_period(system, ref, capfd):
    """Two interleaved timelines (e.g. an unstamped publisher, stamped on arrival, beside a
    simulator's): every other JointState goes back, each is published, the warning is
    throttled (the node's throttle period is 5 s: at most one in this test)."""
    rig = system.rig
    case = make_case(ref, 12)
    stamp, _ = send_case(system, case)
    names, past = ref.joints_name_list, add_ms(stamp, -20_000.0)
    capfd.readouterr()
    stamps = [add_ms(t, k) for k in range(1, 6) for t in (stamp, past)]
    for st in stamps:
        rig.joint_states.publish(joint_state_msg(names, case.s, case.s_dot, case.tau, st))
        rig.wait_outputs(st, ('com',))
    assert rig.spin_until(lambda: False, timeout_s=0.2) is False     # logs flushed
    assert capfd.readouterr().err.count('JointState stamp went back') <= 1


def test_forward_dynamics_needs_every_effort_and_fresh_wrenches(system, ref):
    rig = system.rig
    case = make_case(ref, 9)
    stamp = now_stamp(rig)
    old = add_ms(stamp, -2000.0)                    # older than wrench_timeout (0.5 s)
    send_base_and_wrenches(system, case, stamp, wrench_stamps={'r_sole': old})
    send_joints(system, case, stamp)
    out = rig.wait_outputs(stamp)
    fd = out['forward_dynamics']
    assert list(fd.active_contacts) == ['l_sole']
    result = expected(ref, case, contacts=('l_sole',))
    np.testing.assert_allclose(fd.joint_accelerations, result.joint_accelerations, **TOL)
    markers = {(m.ns, m.id): m for m in out['markers'].markers}
    assert markers['contact_forces', 1].action == Marker.DELETE

    def stale_reported():
        return any('wrench r_sole stale' in s.message
                   for s in rig.received['diagnostics'][-1].status)
    assert rig.spin_until(stale_reported)
    # a joint state without efforts: outputs, but no forward dynamics
    no_effort = add_ms(stamp, 10.0)
    send_joints(system, case, no_effort, efforts=False)
    rig.wait_outputs(no_effort, ('tf', 'com', 'gravity'))
    probe = add_ms(stamp, 20.0)
    send_joints(system, case, probe)
    rig.wait_outputs(probe)
    assert rig.find('forward_dynamics', no_effort) is None


def test_parameters_are_validated_and_applied(system, ref):
    node, rig = system.node, system.rig
    res = node.set_parameters([Parameter('rate', value=-5.0)])[0]
    assert not res.successful and "'rate' must be >= 0" in res.reason
    res = node.set_parameters([Parameter('contacts', value=['x'])])[0]
    assert not res.successful                                    # read-only
    res = node.set_parameters([Parameter('sensor_thread', value=True)])[0]
    assert not res.successful                                    # read-only
    res = node.set_parameters([Parameter('fixed_base_pose', value=[0.0] * 7)])[0]
    assert not res.successful and 'unit quaternion' in res.reason
    res = node.set_parameters([Parameter('velocity_representation', value='BODY_FIXED'),
                               Parameter('publish_tf', value=False)])
    assert all(r.successful for r in res)
    try:
        case = make_case(ref, 10)
        stamp, out = send_case(system, case, keys=('com', 'forward_dynamics'))
        fd = out['forward_dynamics']
        assert fd.representation == 'BODY_FIXED'
        w_H_b, nu = base_state(ref, case)
        ref.set_frame_velocity_representation(BODY)
        try:
            nu_b = change_base_representation(nu, w_H_b, MIXED, BODY)
            r = ref.compute_tick(w_H_b, case.s, nu_b, case.s_dot, case.tau, frame_wrenches(case))
        finally:
            ref.set_frame_velocity_representation(MIXED)
        acc = np.concatenate([xyz(fd.base_acceleration.linear), xyz(fd.base_acceleration.angular)])
        np.testing.assert_allclose(acc, r.base_acceleration, rtol=1e-10, atol=1e-10)
        probe = add_ms(stamp, 5.0)
        send_joints(system, case, probe)
        rig.wait_outputs(probe, ('com', 'markers'))
        assert rig.find('tf', stamp) is None and rig.find('tf', probe) is None
    finally:
        res = node.set_parameters([Parameter('velocity_representation', value='MIXED'),
                                   Parameter('publish_tf', value=True)])
        assert all(r.successful for r in res)


def test_timer_rate_and_frame_prefix(system, ref):
    node, rig = system.node, system.rig
    n_static = len(rig.received['tf_static'])
    res = node.set_parameters([Parameter('rate', value=200.0),
                               Parameter('frame_prefix', value='r1/')])
    assert all(r.successful for r in res)
    try:
        assert rig.spin_until(lambda: len(rig.received['tf_static']) > n_static)
        static = tf_matrices(rig.received['tf_static'][-1])
        assert ('r1/l_foot', 'r1/l_sole') in static and ('l_foot', 'l_sole') not in static
        case = make_case(ref, 12)
        stamp = now_stamp(rig)
        send_base_and_wrenches(system, case, stamp)
        rig.joint_states.publish(joint_state_msg(ref.joints_name_list, case.s, case.s_dot,
                                                 case.tau, stamp))
        out = rig.wait_outputs(stamp, ('tf', 'com'))
        assert ('odom', 'r1/root_link') in tf_matrices(out['tf'])
        assert node.loop.timer.timer_period_ns == 5_000_000
        rig.spin_until(lambda: False, timeout_s=0.1)     # ~20 timer periods, same stamp
        assert rig.count('tf', stamp) == 1 and rig.count('com', stamp) == 1
    finally:
        res = node.set_parameters([Parameter('rate', value=0.0),
                                   Parameter('frame_prefix', value='')])
        assert all(r.successful for r in res)


def test_a_world_frame_that_is_a_model_frame_gets_no_base_tf(system, ref):
    """world_frame naming a frame of the model (a URDF with a `world` link): world -> root on
    /tf would be a self-transform (the root) or close a cycle (any other frame). It is left
    out, the rest is published, and the model's diagnostic says why; a frame prefix that
    keeps them apart brings the base tf back."""
    node, rig = system.node, system.rig
    joints = {(p, c) for _, p, c in ref.joint_frames}
    try:
        for world, prefix in (('root_link', ''), ('r1/l_sole', 'r1/')):
            res = node.set_parameters([Parameter('world_frame', value=world),
                                       Parameter('frame_prefix', value=prefix)])
            assert all(r.successful for r in res)
            _, out = send_case(system, make_case(ref, 14), ('tf', 'com'), world)
            assert set(tf_matrices(out['tf'])) == {(prefix + p, prefix + c) for p, c in joints}
            assert out['com'].header.frame_id == world
            status = next_diagnostics(rig)['kin_dyn_node: model']
            assert status.level == DiagnosticStatus.WARN, status.message
            assert (f"world_frame '{world}' is also the frame of link '{world[len(prefix):]}'"
                    in status.message)
        res = node.set_parameters([Parameter('world_frame', value='l_sole'),
                                   Parameter('frame_prefix', value='r1/')])
        assert all(r.successful for r in res)
        _, out = send_case(system, make_case(ref, 15), ('tf', 'com'), 'l_sole')
        assert set(tf_matrices(out['tf'])) == {('r1/' + p, 'r1/' + c) for p, c in joints} | {
            ('l_sole', 'r1/root_link')}
        assert next_diagnostics(rig)['kin_dyn_node: model'].level == DiagnosticStatus.OK
    finally:
        res = node.set_parameters([Parameter('world_frame', value='odom'),
                                   Parameter('frame_prefix', value='')])
        assert all(r.successful for r in res)


def test_odometry_and_wrenches_are_matched_to_the_joint_state_stamp(system, ref):
    """Inputs that arrive for a later instant do not leak into an earlier JointState's tick."""
    now, later = make_case(ref, 21), make_case(ref, 22)
    later.s, later.s_dot, later.tau = now.s, now.s_dot, now.tau
    stamp = now_stamp(system.rig)
    send_base_and_wrenches(system, now, stamp)
    send_base_and_wrenches(system, later, add_ms(stamp, 10.0))      # newest, not for this tick
    send_joints(system, now, stamp)
    out = system.rig.wait_outputs(stamp, ('com', 'forward_dynamics'))
    result = expected(ref, now)
    np.testing.assert_allclose(xyz(out['com'].point), result.com, **TOL)
    np.testing.assert_allclose(out['forward_dynamics'].joint_accelerations,
                               result.joint_accelerations, **TOL)


@pytest.mark.parametrize('merge', [False, True], ids=['one_tick_each', 'merged'])
def test_joint_states_that_queue_up_are_merged_into_one_tick(system, ref, monkeypatch, merge):
    """With merge_queued_joint_states, JointStates taken by the sensor thread one after
    another, before it finds no input pending (a backlog: the node is behind), make one
    tick, on the newest stamp, with every message merged by joint name (stale values, then
    each half of the joints); the tick statistics (/diagnostics) count the merged ones.
    Without it, and on the executor, each JointState is a tick. The callbacks are called as
    the thread calls them (under the node's lock, raw messages), so that the order is not
    left to the scheduler."""
    node, rig = system.node, system.rig
    assert node.set_parameters([Parameter('merge_queued_joint_states', value=merge)])[0] \
        .successful
    case = make_case(ref, 23)
    stamp = now_stamp(rig)
    send_base_and_wrenches(system, case, stamp)
    names = np.array(ref.joints_name_list)
    halves = (slice(0, None, 2), slice(1, None, 2))
    messages = [(add_ms(stamp, -2.0), slice(None), 0.3)] + [
        (add_ms(stamp, k - 1.0), part, 0.0) for k, part in enumerate(halves)]
    merging = merge and node.loop.sensors is not None
    monkeypatch.setattr(node.loop.sensors or node.loop, 'is_current', lambda: True, raising=False)
    try:
        with node.loop.lock:
            for st, part, stale in messages:
                node.loop.take_joint_state(serialize_message(joint_state_msg(
                    list(names[part]), case.s[part] + stale, case.s_dot[part],
                    case.tau[part], st)))
            node.loop.finish_steps()                      # (contact mechanics of a tick)
            assert node.loop.sensors_idle() == merging    # the tick, if it waited
            merged = node.loop.stats.summary(time.perf_counter())[5]   # (/diagnostics: its 1 s)
    finally:
        monkeypatch.undo()
        node.set_parameters([Parameter('merge_queued_joint_states', value=False)])
    out = rig.wait_outputs(stamp, TICK_OUTPUTS)
    assert_tf(out['tf'], ref, expected(ref, case))
    np.testing.assert_allclose(out['forward_dynamics'].joint_accelerations,
                               expected(ref, case).joint_accelerations, **TOL)
    if merging:
        assert [rig.count('tf', st) for st, _, _ in messages[:2]] == [0, 0]
        assert merged >= 2                          # (others: merged in the last second)
    else:
        assert rig.spin_until(lambda: all(rig.count('tf', st) == 1 for st, _, _ in messages[:2]))


def test_markers_are_throttled_to_markers_rate(system, ref):
    node, rig = system.node, system.rig
    assert node.set_parameters([Parameter('markers_rate', value=2.0)])[0].successful
    try:
        case = make_case(ref, 23)

        def tick():      # send_joints makes two ticks: at stamp - 1 ms and at stamp
            stamp = now_stamp(rig)
            send_base_and_wrenches(system, case, stamp)
            send_joints(system, case, stamp)
            rig.wait_outputs(stamp, ('com',))
            return [add_ms(stamp, -1.0), stamp]
        start = time.monotonic()
        stamps = [s for _ in range(6) for s in tick()]
        elapsed = time.monotonic() - start
        with_markers = [s for s in stamps if rig.find('markers', s) is not None]
        assert len(with_markers) <= int(elapsed * 2.0) + 1, (len(with_markers), elapsed)
        # once a period has passed, the next tick carries markers again
        assert rig.spin_until(lambda: time.monotonic() - start > elapsed + 0.6)
        last = tick()
        assert rig.spin_until(lambda: any(rig.find('markers', s) for s in last))
    finally:
        assert node.set_parameters([Parameter('markers_rate', value=1e6)])[0].successful
    assert not node.set_parameters([Parameter('markers_rate', value=0.0)])[0].successful


def _parse_watching_the_lock(node, monkeypatch, during=None):
    """Patch KinDynNode._parse to record, at each parse, whether another thread could take
    the node's lock (and to run ``during()`` in that thread at the first parse)."""
    taken, parse = [], KinDynNode._parse

    def watched(urdf, settings):
        def try_lock():
            if during is not None and not taken:
                during()
            taken.append(node.loop.lock.acquire(timeout=5.0 if not taken else 0.5))
            if taken[-1]:
                node.loop.lock.release()
        other = threading.Thread(target=try_lock, daemon=True)
        other.start()
        other.join(10.0)
        if other.is_alive():       # ``during`` waits for the lock: this parse holds it
            taken.append(False)
        return parse(urdf, settings)
    monkeypatch.setattr(KinDynNode, '_parse', staticmethod(watched))
    return taken


def _set_parameters_service(system, *params):
    """Set ``params`` through the node's set_parameters service (as `ros2 param set`)."""
    rig = system.rig
    client = rig.node.create_client(SetParameters, rig.private('set_parameters'))
    try:
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(SetParameters.Request(
            parameters=[p.to_parameter_msg() for p in params]))
        assert rig.spin_until(future.done)
        return future.result().results
    finally:
        rig.node.destroy_client(client)


def test_a_description_parameter_is_parsed_outside_the_lock(system, ref, icub_urdf,
                                                            monkeypatch):
    """Setting robot_description through the parameter service: the parse happens while
    another thread can take the node's lock, so the sensor thread goes on ticking."""
    node = system.node
    taken = _parse_watching_the_lock(node, monkeypatch)
    new = icub_urdf.replace('</robot>', '<!-- by the parameter service --></robot>')
    try:
        results = _set_parameters_service(system, Parameter('robot_description', value=new))
        assert [r.successful for r in results] == [True], results
        assert node.loop.model.urdf == new
        assert taken == [True]                 # one parse, and not under the lock
        send_case(system, make_case(ref, 13), keys=('tf', 'com'))
    finally:    # the topic decides the model again (the model stays until a new one comes)
        assert node.set_parameters([Parameter('robot_description', value='')])[0].successful


def test_settings_changed_during_a_parse_are_kept(system, ref, monkeypatch):
    """Settings changed by another thread while a parameter change parses a new model: the
    change is prepared again under the lock on the current settings, so both take effect."""
    node = system.node
    old_gravity = list(node.loop.settings.gravity)

    def other_change():
        res = node.set_parameters([Parameter('velocity_representation', value='BODY_FIXED')])
        assert res[0].successful
    taken = _parse_watching_the_lock(node, monkeypatch, during=other_change)
    try:
        res = node.set_parameters([Parameter('gravity', value=[0.0, 0.0, -9.7])])[0]
        assert res.successful, res.reason
        assert taken == [True, False]          # parsed again under the lock, on BODY_FIXED
        assert node.loop.settings.velocity_representation == 'BODY_FIXED'
        assert node.loop.model.kd.rep == BODY
        np.testing.assert_array_equal(node.loop.model.kd.gravity, [0.0, 0.0, -9.7])
    finally:
        monkeypatch.undo()
        res = node.set_parameters([Parameter('velocity_representation', value='MIXED'),
                                   Parameter('gravity', value=old_gravity)])
        assert all(r.successful for r in res)


def test_a_description_from_the_topic_is_parsed_outside_the_lock(system, ref, icub_urdf,
                                                                 monkeypatch):
    """While the node parses a new description (~0.1 s) another thread can take the node's
    lock: the sensor thread goes on ticking with the current model meanwhile."""
    node, rig = system.node, system.rig
    taken = _parse_watching_the_lock(node, monkeypatch)
    new = icub_urdf.replace('</robot>', '<!-- v2 --></robot>')
    rig.description.publish(String(data=new))
    assert rig.spin_until(lambda: node.loop.model.urdf == new)
    assert taken == [True]                 # one parse, and not under the lock
    send_case(system, make_case(ref, 12), keys=('tf', 'com'))    # ticks with the new model


def test_broken_description_is_rejected_and_a_new_one_reloads(system, ref, capfd):
    node, rig = system.node, system.rig
    broken = '<robot name="broken"><link name="a"/><joint name="j" type="revolute">'
    res = node.set_parameters([Parameter('robot_description', value=broken)])[0]
    assert not res.successful and 'rejected robot_description' in res.reason
    assert 'keeping the current model (iCub)' in res.reason
    rig.description.publish(String(data=broken))
    seen = []
    assert rig.spin_until(lambda: seen.append(capfd.readouterr().err) or
                          'rejected robot_description' in ''.join(seen))
    send_case(system, make_case(ref, 11), keys=('tf', 'com'))    # still iCub, still publishing

    # a new model at run time: /tf_static rebuilt (iCub's frames gone), markers DELETEALL
    small = MIMIC_URDF
    n_static, n_markers = len(rig.received['tf_static']), len(rig.received['markers'])
    rig.description.publish(String(data=small))

    def delete_all():
        return [m for m in rig.received['markers'][n_markers:]
                if [x.action for x in m.markers] == [Marker.DELETEALL]]
    assert rig.spin_until(lambda: len(rig.received['tf_static']) > n_static and delete_all())
    static = tf_matrices(rig.received['tf_static'][-1])
    assert set(static) == {('b', 'sensor')}
    stamp = now_stamp(rig)
    rig.joint_states.publish(joint_state_msg(['j1', 'j2'], [0.3, 0.1], stamp=stamp))
    out = rig.wait_outputs(stamp, ('tf', 'com'))
    small_kd = KinDynComputations(small)
    s = np.zeros(3)
    s[[small_kd.joints_name_list.index(j) for j in ('j1', 'j2')]] = 0.3, 0.1
    s = small_kd.apply_mimic(s)
    result = small_kd.compute_tick(np.eye(4), s, np.zeros(6), np.zeros(3))
    got = tf_matrices(out['tf'])
    assert set(got) == {('base', 'a'), ('a', 'b'), ('base', 'c')}   # no odometry: no base tf
    for (_, p, c), h in zip(small_kd.joint_frames, result.joint_transforms):
        np.testing.assert_allclose(got[p, c], h, atol=1e-12)
    np.testing.assert_allclose(xyz(out['com'].point), result.com, **TOL)
    res = call(system, 'get_jacobian', GetJacobian.Request(frame='l_sole', use_measured_state=True))
    assert not res.success and "unknown frame 'l_sole'" in res.message

    # a description set as the parameter wins, and is re-published on the topic (latched)
    texts = []
    system.rig.node.create_subscription(String, 'robot_description',
                                        lambda m: texts.append(m.data), LATCHED_QOS)
    by_param = small.replace('</robot>', '<!-- from the parameter --></robot>')
    res = node.set_parameters([Parameter('robot_description', value=by_param)])[0]
    assert res.successful, res.reason
    assert rig.spin_until(lambda: by_param in texts)


def test_oversized_or_unparsable_descriptions_are_rejected_briefly(system):
    """A description over MAX_DESCRIPTION_CHARS is rejected unparsed (a well-formed one of
    20 MB would take minutes), and a parser's long error (every one of 3000 root links
    named) is cut in the reply and the log."""
    node = system.node
    kept = node.loop.model.kd
    huge = '<robot name="huge">' + ' ' * MAX_DESCRIPTION_CHARS + '</robot>'
    t0 = time.monotonic()
    res = node.set_parameters([Parameter('robot_description', value=huge)])[0]
    assert not res.successful and 'not parsed' in res.reason
    assert time.monotonic() - t0 < 5.0
    forest = '<robot name="forest">' + ''.join(f'<link name="l{i}"/>' for i in range(3000)) \
        + '</robot>'
    res = node.set_parameters([Parameter('robot_description', value=forest)])[0]
    assert not res.successful and 'rejected robot_description' in res.reason
    assert len(res.reason) < PARSE_ERROR_CHARS + 200
    assert node.loop.model.kd is kept                                 # the model is kept


def test_ticks_wait_for_the_lock_and_services_do_not(ros_context):
    """The tick's callbacks run under the node's lock: while it is held elsewhere a
    JointState is not ticked (sensor thread), and it is once the lock is released. The
    services never take that lock: they answer meanwhile (executor, in a thread of its own
    here), at the state of the last tick that was computed (a consistent snapshot)."""
    namespace = f'{NAMESPACE}/locked'
    node = KinDynNode(context=ros_context, namespace=namespace, parameter_overrides=[
        Parameter('robot_description', value=MIMIC_URDF), Parameter('use_odometry', value=False),
        Parameter('equilibrium_rate', value=0.0)])
    helper = rclpy.create_node('kin_dyn_lock_helper', namespace=namespace, context=ros_context)
    node_executor, executor = (SingleThreadedExecutor(context=ros_context) for _ in range(2))
    node_executor.add_node(node)
    executor.add_node(helper)
    spinner = threading.Thread(target=node_executor.spin, daemon=True)
    spinner.start()
    try:
        rig = Rig(helper, executor)
        client = helper.create_client(GetMassMatrix, rig.private('get_mass_matrix'))
        rig.wait_matched(odometry=False)
        assert client.wait_for_service(timeout_sec=10.0)
        first = rig.now()
        rig.joint_states.publish(joint_state_msg(['j1', 'j2'], [0.3, 0.1], stamp=first))
        rig.wait_outputs(first, ('com',))
        second = rig.now()
        with node.loop.lock:
            rig.joint_states.publish(joint_state_msg(['j1', 'j2'], [0.1, 0.2], stamp=second))
            future = client.call_async(GetMassMatrix.Request(use_measured_state=True))
            assert rig.spin_until(future.done, timeout_s=5.0)
            rig.spin_until(lambda: False, timeout_s=0.2)
            assert rig.find('com', second) is None
        rig.wait_outputs(second, ('com', 'gravity'))
        res = future.result()
        assert res.success, res.message
        kd = KinDynComputations(MIMIC_URDF)
        s = np.zeros(3)
        s[[kd.joints_name_list.index(j) for j in ('j1', 'j2')]] = 0.3, 0.1
        want = kd.mass_matrix(np.eye(4), kd.apply_mimic(s))     # the first tick's state
        np.testing.assert_allclose(np.reshape(res.data, (res.rows, res.cols)), want,
                                   rtol=0, atol=1e-12)
    finally:
        node_executor.shutdown()
        spinner.join(5.0)
        executor.shutdown()
        helper.destroy_node()
        node.destroy_node()


def test_a_description_parameter_that_fails_leaves_no_thread_behind(ros_context):
    """A robot_description parameter that does not parse stops the node at start-up with a
    clear error; the sensor thread it had started is stopped."""
    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(ValueError, match="parameter 'robot_description': rejected"):
        KinDynNode(context=ros_context, namespace=f'{NAMESPACE}/broken', parameter_overrides=[
            Parameter('robot_description', value='<robot name="x"><link')])
    assert not [t.name for t in threading.enumerate()
                if t.ident not in before and t.is_alive()]


@pytest.mark.parametrize('own_process', [True, False], ids=['services_process', 'in_process'])
def test_a_measured_state_answer_is_always_one_ticks_state(ros_context, own_process):
    """Ticks as fast as the node takes them (every JointState a new posture, j1 = j2 = the
    tick's number / 100) while ~/get_dynamics is asked for the measured state again and
    again: every answer is the core's at one tick's posture (mass matrix and CoM to 1e-12),
    never a mix of two."""
    namespace = f'{NAMESPACE}/hammer_{own_process}'
    node = KinDynNode(context=ros_context, namespace=namespace, parameter_overrides=[
        Parameter('robot_description', value=MIMIC_URDF), Parameter('use_odometry', value=False),
        Parameter('equilibrium_rate', value=0.0), Parameter('services_process', value=own_process)])
    helper = rclpy.create_node('kin_dyn_hammer_helper', namespace=namespace, context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    for n in (node, helper):
        executor.add_node(n)
    kd = KinDynComputations(MIMIC_URDF)
    try:
        rig = Rig(helper, executor)
        client = helper.create_client(GetDynamics, rig.private('get_dynamics'))
        rig.wait_matched(odometry=False)
        assert client.wait_for_service(timeout_sec=30.0)
        first = rig.now()                      # a tick before the first question
        rig.joint_states.publish(joint_state_msg(['j1', 'j2'], [0.0, 0.0], stamp=first))
        rig.wait_outputs(first, ('com',))
        answers, pending, k, coms = [], [], [0], set()

        def tick_and_ask():
            k[0] += 1
            rig.joint_states.publish(joint_state_msg(['j1', 'j2'], [k[0] / 100] * 2,
                                                     stamp=rig.now()))
            if len(pending) < 4:
                pending.append(client.call_async(GetDynamics.Request(use_measured_state=True)))
            for f in [f for f in pending if f.done()]:
                pending.remove(f)
                answers.append(f.result())
                coms.add((answers[-1].com.x, answers[-1].com.y, answers[-1].com.z))
        # (until the answers span 10 ticks too: how many ticks 150 answers span depends on
        # the machine's speed, e.g. a fast one answers them all within 9)
        rig.spin_until(lambda: len(answers) >= 150 and len(coms) >= 10, timeout_s=60.0,
                       on_tick=tick_and_ask)
        assert len(answers) >= 150 and all(a.success for a in answers), \
            [a.message for a in answers if not a.success][:3]
        postures = set()
        for a in answers:
            m = np.reshape(a.mass_matrix, (6 + kd.NDoF, 6 + kd.NDoF))
            # the tick the answer is of: the one whose CoM it is; its mass matrix must agree
            ticks = [t for t in range(0, k[0] + 1) if np.allclose(
                kd.CoM_position(np.eye(4), kd.apply_mimic(posture(kd, t))),
                [a.com.x, a.com.y, a.com.z], rtol=0, atol=1e-12)]
            assert len(ticks) == 1, a.com
            s = kd.apply_mimic(posture(kd, ticks[0]))
            np.testing.assert_allclose(m, kd.mass_matrix(np.eye(4), s), rtol=0, atol=1e-12)
            postures.add(ticks[0])
        assert len(postures) >= 10, postures           # the state moved while asked
    finally:
        executor.shutdown()
        helper.destroy_node()
        node.destroy_node()


def posture(kd, t):
    """The joint positions of the hammer test's tick ``t``: j1 = j2 = t / 100."""
    s = np.zeros(kd.NDoF)
    s[[kd.joints_name_list.index(j) for j in ('j1', 'j2')]] = t / 100
    return s
