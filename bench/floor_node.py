#!/usr/bin/env python3
"""The floor of kin_dyn_node's CPU per JointState: a minimal rclpy node that takes the node's
inputs as the node does and publishes the node's per-tick messages, without dynamics (not
a test).

What it does per JointState is the least any rclpy node publishing kin_dyn_node's outputs
must do: take the message (as bytes), read its stamp, and publish /tf, ~/com,
~/centroidal_momentum, ~/gravity_torques and ~/forward_dynamics as serialised bytes whose
contents were computed once at start-up (one ``compute_tick`` of the model; the same
layouts as the node's: the same frame ids, joint names, active contacts), with only the
stamps patched in; ~/markers too (the node's array, at most 30 Hz as the node's default
markers_rate) and, with ``--balance``, ~/zmp, ~/capture_point and ~/cop, each while read.
Odometry and wrenches are taken (bytes) and dropped. Subscriptions and
publishers have the node's QoS, no QoS event handlers, and are created in the node's order
(odometry, wrenches, joint_states).

How the inputs are taken (``--mode``):

- ``thread``: the node's own sensor thread (:class:`kin_dyn_ros.node.sensor_thread.
  SensorThread`: a wait set of the sensor subscriptions and rclpy's private take, off the
  executor), the path kin_dyn_node takes by default; the executor spins the node
  (parameter services) on the main thread, as the node's does;
- ``spin``: ``rclpy.spin`` (SingleThreadedExecutor), the public path;
- ``events``: rclpy's EventsExecutor (``rclpy.experimental.events_executor``; Kilted's rclpy
  9.x serves services with it, Jazzy's 7.x has it too but with limits);
- ``core``: ``thread``, plus the work no design of the tick can leave out, through the
  node's own classes: the JointState merged (:class:`kin_dyn_ros.node.inputs.SensorInputs`,
  the compiled merge), ``compute_tick`` of the merged state (the odometry and wrenches of
  the bench publisher, fixed) and the five messages rendered from its result in one call
  (:meth:`kin_dyn_ros.node.outputs.TickMessages.per_tick`). What the node does beyond
  this floor is its bookkeeping: matching odometry and wrenches to the stamp, gates, read
  counts, statistics, the shared state, the contact mechanics' steps.

Run by bench/bench_node.py (``--floor``) as a process of its own in a namespace of its own:
``python bench/floor_node.py --namespace NS --mode thread [--model URDF]``. It prints
``ready`` once each of its publishers has a subscriber (the bench's receiver), and ends on
SIGINT or when stdin closes.
"""

import argparse
import os
import pathlib
import signal
import struct
import sys
import threading
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")     # before NumPy is imported (as the node does)

import numpy as np  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

NODE = 'kin_dyn_node'
MODES = ('thread', 'spin', 'events', 'core', 'kernel', 'calls')
CONTACTS = ('l_sole', 'r_sole')      # the bench's wrench topics (iCub's contacts)
MARKERS_PERIOD_NS = round(1e9 / 30.0)   # the node's default markers_rate, 30 Hz
ODOM_Z, ODOM_VX, WRENCH_FZ = 0.6, 0.1, 150.0    # the bench publisher's odometry and wrenches


def model_urdf(path=None):
    """The URDF text of ``path`` (or a name of bench/models.py: g1, talos, ...), or of
    iCubGazeboV2_5 (icub-models) when None."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from models import model_text
    return model_text(path)


def joint_state_values(n):
    """(positions, velocities, efforts) of the bench publisher's JointState of n joints."""
    rng = np.random.default_rng(0)
    return (rng.uniform(-0.3, 0.3, n), rng.normal(size=n), rng.normal(size=n))


def input_messages(kd):
    """(JointState, Odometry, WrenchStamped) the bench publisher sends for ``kd``'s model,
    stamps unset: every joint at :func:`joint_state_values`; the root link at z = ODOM_Z
    moving at ODOM_VX along x in 'odom'; a WRENCH_FZ N force along z (each contact's)."""
    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    names = kd.joints_name_list
    s, s_dot, tau = joint_state_values(len(names))
    js = JointState(name=names, position=s.tolist(), velocity=s_dot.tolist(),
                    effort=tau.tolist())
    odom = Odometry()
    odom.header.frame_id, odom.child_frame_id = 'odom', kd.model.root_link
    odom.pose.pose.position.z = ODOM_Z
    odom.twist.twist.linear.x = ODOM_VX
    wrench = WrenchStamped()
    wrench.wrench.force.z = WRENCH_FZ
    return js, odom, wrench


def tick_inputs(kd, representation='MIXED'):
    """The arguments of ``kd.compute_tick`` for the bench publisher's messages as the node
    reads them: the root link at z = ODOM_Z moving at ODOM_VX along x (odometry, REP-105: the
    twist in the child's axes), the JointState's positions, velocities and efforts, and a
    WRENCH_FZ N wrench on each of CONTACTS that is a link of the model. ``kd`` is set to
    ``representation`` (the node's default: MIXED)."""
    from kin_dyn_ros.dynamics import Representations
    from kin_dyn_ros.dynamics.base_state import change_base_representation
    kd.set_frame_velocity_representation(representation)
    s, s_dot, tau = joint_state_values(kd.NDoF)
    w_H_b = np.eye(4)
    w_H_b[2, 3] = ODOM_Z
    twist = np.zeros(6)
    twist[0] = ODOM_VX
    nu = change_base_representation(twist, w_H_b, Representations.BODY_FIXED_REPRESENTATION,
                                    kd.rep)
    wrench = np.zeros(6)
    wrench[2] = WRENCH_FZ
    wrenches = {c: (c, wrench) for c in CONTACTS if c in kd.model.frame_index}
    return w_H_b, s, nu, s_dot, tau, wrenches


class StampedBytes:
    """A serialised message whose header stamps (every occurrence of a sentinel stamp, e.g.
    each TransformStamped's) are patched per publication; :meth:`render` the bytes."""

    def __init__(self, msg, stamps):
        from rclpy.serialization import serialize_message
        rng = np.random.default_rng()
        for _ in range(5):
            sec, nsec = (int(x) for x in rng.integers(2 ** 24, 2 ** 31, 2))
            for stamp in stamps:
                stamp.sec, stamp.nanosec = sec, nsec
            data = bytearray(serialize_message(msg))
            pattern = struct.pack('<iI', sec, nsec)
            offsets, at = [], data.find(pattern)
            while at >= 0:
                offsets.append(at)
                at = data.find(pattern, at + 1)
            if len(offsets) == len(stamps) and all(o % 4 == 0 for o in offsets):
                break
        else:
            raise RuntimeError(f'{type(msg).__name__}: stamps not found')
        self._buf = np.frombuffer(data + bytes(-len(data) % 4), np.uint8).copy()
        self._size = len(data)
        self._words = self._buf.view('<u4')
        self._sec = np.array(offsets) // 4
        self._nsec = self._sec + 1

    def render(self, sec, nsec):
        words = self._words
        words[self._sec] = sec
        words[self._nsec] = nsec
        return self._buf[:self._size].tobytes()


def floor_messages(kd, prefix='', world='odom'):
    """[(key, msg type, topic, StampedBytes)] of the node's per-tick outputs with the contents
    of one compute_tick of :func:`tick_inputs` (/tf with every joint and world -> root link)."""
    from geometry_msgs.msg import PointStamped, TransformStamped, TwistStamped
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage
    from kin_dyn_ros.dynamics.quaternions import rotations_to_quaternions
    from kin_dyn_ros_interfaces.msg import ForwardDynamics
    w_H_b, s, nu, s_dot, tau, wrenches = tick_inputs(kd)
    r = kd.compute_tick(w_H_b, s, nu, s_dot, tau, wrenches)
    edges = [(prefix + p, prefix + c) for _, p, c in kd.joint_frames]
    edges.append((world, prefix + kd.model.root_link))
    h = np.concatenate([r.joint_transforms, r.base_pose[None]])
    quats = rotations_to_quaternions(h[:, :3, :3])
    transforms = []
    for (parent, child), pose, q in zip(edges, h, quats):
        tf = TransformStamped()
        tf.header.frame_id, tf.child_frame_id = parent, child
        t, rot = tf.transform.translation, tf.transform.rotation
        t.x, t.y, t.z = (float(v) for v in pose[:3, 3])
        rot.x, rot.y, rot.z, rot.w = (float(v) for v in q)
        transforms.append(tf)
    tf_msg = TFMessage(transforms=transforms)
    com = PointStamped()
    com.header.frame_id = world
    com.point.x, com.point.y, com.point.z = (float(v) for v in r.com)
    momentum = TwistStamped()
    momentum.header.frame_id = world
    lin, ang = momentum.twist.linear, momentum.twist.angular
    lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(v) for v in r.centroidal_momentum)
    gravity = JointState(name=list(kd.joints_name_list),
                         effort=[float(v) for v in r.gravity_torques])
    fd = ForwardDynamics(representation=kd.rep.name,   # as the node's settings name it
                         joint_names=list(kd.joints_name_list),
                         joint_accelerations=[float(v) for v in r.joint_accelerations],
                         active_contacts=list(wrenches), base_from_odometry=True,
                         odometry_age=0.0, wrench_ages=[0.0] * len(wrenches))
    a = fd.base_acceleration
    a.linear.x, a.linear.y, a.linear.z, a.angular.x, a.angular.y, a.angular.z = (
        float(v) for v in r.base_acceleration)
    return [
        ('tf', TFMessage, 'tf', StampedBytes(tf_msg, [t.header.stamp for t in transforms])),
        ('com', PointStamped, '~/com', StampedBytes(com, [com.header.stamp])),
        ('momentum', TwistStamped, '~/centroidal_momentum',
         StampedBytes(momentum, [momentum.header.stamp])),
        ('gravity', JointState, '~/gravity_torques', StampedBytes(gravity, [gravity.header.stamp])),
        ('forward_dynamics', ForwardDynamics, '~/forward_dynamics',
         StampedBytes(fd, [fd.header.stamp])),
    ]


def balance_messages(kd, world='odom'):
    """[(key, msg type, topic, StampedBytes)] of the node's balance outputs (~/zmp,
    ~/capture_point, ~/cop; issue 18) with the contents of one compute_tick of
    :func:`tick_inputs` (both soles active, the contacts' default geometry), rendered by the
    node's own :class:`kin_dyn_ros.node.balance_outputs.BalanceMessages`: the node's layouts.
    None ([]) when CONTACTS are not links of the model (as the node then publishes none)."""
    from geometry_msgs.msg import PointStamped
    from builtin_interfaces.msg import Time
    from rclpy.serialization import deserialize_message
    from kin_dyn_ros.node.balance_outputs import BalanceMessages
    from kin_dyn_ros.node.settings import contact_geometry, make_contact
    from kin_dyn_ros_interfaces.msg import CentresOfPressure
    w_H_b, s, nu, s_dot, tau, wrenches = tick_inputs(kd)
    contacts = {c: make_contact(contact_geometry(c)) for c in wrenches}
    balance = kd.compute_tick(w_H_b, s, nu, s_dot, tau, wrenches, contacts).balance
    if balance is None or not balance.active:      # CONTACTS are not links of the model
        return []
    render = BalanceMessages(world, contacts)
    out = []
    for key, msg_type, topic, rendered in (('zmp', PointStamped, '~/zmp', render.zmp),
                                           ('capture_point', PointStamped, '~/capture_point',
                                            render.capture_point),
                                           ('cop', CentresOfPressure, '~/cop', render.cops)):
        msg = rendered(balance, Time())
        if isinstance(msg, bytes):
            msg = deserialize_message(msg, msg_type)
        out.append((key, msg_type, topic, StampedBytes(msg, [msg.header.stamp])))
    return out


def marker_messages(kd, world='odom'):
    """[(key, msg type, topic, StampedBytes)] of the node's ~/markers array (CoM, momentum,
    contact forces, the support polygon and the balance points) with the contents of one
    compute_tick of :func:`tick_inputs`, rendered by the node's own
    :class:`kin_dyn_ros.node.marker_array.MarkerArrays` (default settings, CONTACTS): the
    node's layout."""
    from types import SimpleNamespace
    from builtin_interfaces.msg import Time
    from rclpy.serialization import deserialize_message
    from visualization_msgs.msg import MarkerArray
    from kin_dyn_ros.dynamics.contacts import ground_axes, hull_support
    from kin_dyn_ros.node.inputs import TickInputs
    from kin_dyn_ros.node.marker_array import MarkerArrays
    from kin_dyn_ros.node.outputs import TickMessages
    from kin_dyn_ros.node.settings import contact_geometry, make_contact, make_settings
    w_H_b, s, nu, s_dot, tau, wrenches = tick_inputs(kd)
    contacts = {c: make_contact(contact_geometry(c)) for c in wrenches}
    settings = make_settings(contacts=CONTACTS, world_frame=world)
    result = kd.compute_tick(w_H_b, s, nu, s_dot, tau, wrenches, contacts)
    up = -kd.gravity / np.linalg.norm(kd.gravity)

    def ground_support(result):        # (as the node's contact mechanics make it)
        balance = result.balance
        names = tuple(balance.names[i] for i in balance.active)
        links = [result.world_H_frame(kd.model.frame_index[contacts[n].link]) for n in names]
        return hull_support(tuple(contacts[n] for n in names), links, result.com,
                            ground_axes(kd.gravity), up, names)
    arrays = MarkerArrays(TickMessages(kd, settings), settings, tuple(contacts),
                          ground_support)
    msg = arrays.render(SimpleNamespace(result=result, stamp=Time(),
                                        inputs=TickInputs(0, wrenches=wrenches)))
    if isinstance(msg, bytes):
        msg = deserialize_message(msg, MarkerArray)
    return [('markers', MarkerArray, '~/markers',
             StampedBytes(msg, [m.header.stamp for m in msg.markers]))]


def node_pieces(kd, node):
    """(sensors, merger, messages, inputs): the node's classes for ``kd`` as the ``core``
    and ``calls`` modes use them: its :class:`kin_dyn_ros.node.inputs.SensorInputs` and
    merger, its TickMessages (CONTACTS, world 'odom') and the TickInputs of every tick
    (:func:`tick_inputs`'s wrenches, ages 0)."""
    from kin_dyn_ros.node.conversions import JointStateMerger
    from kin_dyn_ros.node.inputs import SensorInputs, TickInputs
    from kin_dyn_ros.node.outputs import TickMessages
    from kin_dyn_ros.node.sensor_thread import clock_ns
    from kin_dyn_ros.node.settings import make_settings
    wrenches = tick_inputs(kd)[-1]
    sensors = SensorInputs(clock_ns(node.get_clock()))
    merger = JointStateMerger(kd.joints_name_list, kd.mimic_joints, 0.0)
    sensors.configure(merger, kd.model.frame_index.get, 'odom')
    messages = TickMessages(kd, make_settings(contacts=CONTACTS, world_frame='odom'))
    inputs = TickInputs(0, wrenches=wrenches, odometry_age=0.0,
                        wrench_ages={c: 0.0 for c in wrenches})
    return sensors, merger, messages, inputs


def kernel_arguments(kd, w_H_b, s, nu, s_dot, tau, wrenches, out):
    """The arguments of the compiled tick kernel (:func:`kin_dyn_ros.dynamics.kernels.tick`)
    on this state, writing ``out``; SystemExit on the NumPy core."""
    jit = kd._jit
    if jit is None:
        raise SystemExit('floor_node: the compiled core is off (KIN_DYN_JIT=0 or numba '
                         'missing)')
    targets, values = kd._sensor_wrenches(wrenches)
    return (jit.mf, jit.mi, int(kd.rep), w_H_b, s, nu, s_dot, tau, targets, values, out,
            np.empty((jit.n + 1, 4, 4)))


def core_tick(kd, node):
    """``core(JointState bytes)``: the messages of :func:`floor_messages`'s outputs (in its
    order) computed as the node computes them (see ``core`` in the module docstring)."""
    w_H_b, _, nu, _, _, wrenches = tick_inputs(kd)
    sensors, merger, messages, inputs = node_pieces(kd, node)
    names = ['tf', 'com', 'momentum', 'gravity']

    def core(data):
        sensors.take_joint_state(data)
        s, s_dot = merger.state()
        result = kd.compute_tick(w_H_b, s, nu, s_dot, merger.efforts, wrenches)
        out = messages.per_tick(result, sensors.joint_state_stamp_ns, inputs, names, True)
        return [out[name] for name in names + ['forward_dynamics']]
    return core


def kernel_tick(kd):
    """``tick()``: one call of the compiled tick kernel on :func:`tick_inputs` (MIXED), its
    arguments made once (see ``kernel`` in the module docstring)."""
    args = kernel_arguments(kd, *tick_inputs(kd), np.empty(22 * kd.NDoF + 19))
    kernel = kd._jit.k.tick
    if kernel(*args) != kd._jit.k.OK:
        raise SystemExit('floor_node --mode kernel: the tick kernel refused the state')
    return lambda: kernel(*args)


def calls_tick(kd, node):
    """``calls(JointState bytes)``: the messages of :func:`floor_messages`'s outputs (in its
    order) by three compiled calls (see ``calls`` in the module docstring)."""
    from rclpy.serialization import serialize_message
    if kd.mimic_joints:
        raise SystemExit('floor_node --mode calls: needs a model without mimic joints')
    w_H_b, _, nu, _, _, wrenches = tick_inputs(kd)
    sensors, merger, messages, inputs = node_pieces(kd, node)
    js, _, _ = input_messages(kd)
    for _ in range(2):      # the plain path, then its name list is learnt by the compiled one
        sensors.take_joint_state(serialize_message(js))
    merge = sensors._compiled.merge
    s, s_dot, tau = merger.merged_arrays()[0]
    result = kd.compute_tick(w_H_b, s, nu, s_dot, tau, wrenches)
    names = ('tf', 'com', 'momentum', 'gravity', 'forward_dynamics')
    messages.per_tick(result, 0, inputs, names[:4], True)    # makes the pack
    pack = messages._packs.get((tuple(wrenches), True), None)
    args = kernel_arguments(kd, w_H_b, s, nu, s_dot, tau, wrenches, result.packed)
    kernel, ages, aliases = kd._jit.k.tick, np.zeros(1 + len(wrenches)), (('tf', 'tf_all'),)

    def calls(data):
        sec, nanosec = merge(data)
        kernel(*args)
        out = pack.render(result.packed, ages, w_H_b, True, (sec % 2 ** 32, nanosec), names,
                          aliases)
        return [out[name] for name in names]
    return calls


def run(namespace, mode, model=None, balance=False, priority=0):
    """The floor node process (see the module docstring)."""
    import rclpy
    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    from kin_dyn_ros.dynamics import KinDynComputations
    from kin_dyn_ros.node.outputs import NO_SUBSCRIPTION_EVENTS, ReadCounts, TF_QOS
    try:
        from rclpy.event_handler import PublisherEventCallbacks
    except ImportError:  # Humble
        from rclpy.qos_event import PublisherEventCallbacks
    from kin_dyn_ros.node.sensor_thread import SensorThread

    rclpy.init()
    node = rclpy.create_node(NODE, namespace=namespace)
    kd = KinDynComputations(model_urdf(model))
    messages = floor_messages(kd)
    no_events = PublisherEventCallbacks(use_default_callbacks=False)
    outputs = [(node.create_publisher(t, topic, TF_QOS if key == 'tf' else 10,
                                      event_callbacks=no_events), template)
               for key, t, topic, template in messages]
    extra = [(node.create_publisher(t, topic, 10, event_callbacks=no_events), template)
             for _, t, topic, template in (balance_messages(kd) if balance else ())]
    (_, t, topic, markers), = marker_messages(kd)
    markers = node.create_publisher(t, topic, 10, event_callbacks=no_events), markers
    read = ReadCounts([pub for pub, _ in extra + [markers]])   # (the node's counts)
    markers_due = [0]     # monotonic ns: one per MARKERS_PERIOD_NS, by the JointStates' arrival
    unpack = struct.Struct('<iI').unpack_from
    thread = SensorThread(node, lambda sub, exc: print(f'floor: {sub}: {exc!r}',
                                                       file=sys.stderr),
                          realtime=(priority, ())) \
        if mode in ('thread', 'core', 'kernel', 'calls') else None
    group = None if thread is None else thread.group

    core = core_tick(kd, node) if mode == 'core' else None
    kernel = kernel_tick(kd) if mode == 'kernel' else None
    core = calls_tick(kd, node) if mode == 'calls' else core

    def on_joint_state(data):
        sec, nsec = unpack(data, 4)          # header.stamp, first in the payload
        if kernel is not None:
            kernel()
        if core is not None:
            for (pub, _), msg in zip(outputs, core(data)):
                pub.publish(msg)
        else:
            for pub, template in outputs:
                pub.publish(template.render(sec, nsec))
        for pub, template in extra:
            if read(pub):
                pub.publish(template.render(sec, nsec))
        pub, template = markers
        now = time.monotonic_ns()
        if now >= markers_due[0] and read(pub):
            markers_due[0] = now + MARKERS_PERIOD_NS
            pub.publish(template.render(sec, nsec))

    def drop(data):
        pass

    def sensor(msg_type, topic, callback):
        node.create_subscription(msg_type, topic, callback, qos_profile_sensor_data,
                                 callback_group=group, event_callbacks=NO_SUBSCRIPTION_EVENTS,
                                 raw=True)
    sensor(Odometry, 'odom', drop)
    for contact in CONTACTS:
        sensor(WrenchStamped, f'{contact}/wrench', drop)
    sensor(JointState, 'joint_states', on_joint_state)
    if mode == 'events':
        from rclpy.experimental.events_executor import EventsExecutor
        executor = EventsExecutor()
    else:
        from rclpy.executors import SingleThreadedExecutor
        executor = SingleThreadedExecutor()
    executor.add_node(node)
    if thread is not None:
        thread.start()
    if priority:        # its middleware threads too, as kin_dyn_node's thread_priority does
        from kin_dyn_ros.node.realtime import configure_native_threads
        for warning in configure_native_threads(priority):
            print(f'floor: {warning}', file=sys.stderr)
    # ready once the bench's receiver subscribes to every output
    stop = threading.Event()
    while not stop.wait(0.01):
        if all(pub.get_subscription_count() for pub, _ in outputs):
            break
    print('ready', flush=True)

    def end(*_):
        stop.set()
        if rclpy.ok():
            rclpy.try_shutdown()
    signal.signal(signal.SIGINT, end)
    signal.signal(signal.SIGTERM, end)
    threading.Thread(target=lambda: (sys.stdin.read(), end()), daemon=True).start()
    try:
        executor.spin()
    except Exception:   # the context shut down under the spin
        if rclpy.ok():
            raise
    finally:
        if thread is not None:
            thread.stop()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--namespace', default='/kin_dyn_floor')
    parser.add_argument('--mode', choices=MODES, default='thread')
    parser.add_argument('--model', metavar='URDF')
    parser.add_argument('--balance', action='store_true',
                        help='also publish ~/zmp, ~/capture_point and ~/cop, each while read')
    parser.add_argument('--thread-priority', type=int, default=0, metavar='N',
                        help='SCHED_FIFO priority N of the sensor thread and the middleware '
                        'threads (kin_dyn_node\'s thread_priority; 0: none)')
    args = parser.parse_args()
    run(args.namespace, args.mode, args.model, args.balance, args.thread_priority)


if __name__ == '__main__':
    main()
