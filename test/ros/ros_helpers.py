"""Shared helpers of the ROS tests: loopback DDS set-up, bounded spinning, and a helper
node that publishes kin_dyn_node's inputs and records its outputs.

Not a test module (no ``test_`` prefix); the ROS test files import it.
"""

import os
import pathlib
import random
import re
import shutil
import sys
from contextlib import contextmanager

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, TwistStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from kin_dyn_ros.node import spinning
from kin_dyn_ros.node.conversions import (matrix_to_pose, ns_to_stamp, stamp_to_ns,
                                     transform_to_matrix)
from kin_dyn_ros.dynamics.spatial import inverse_homogeneous
from kin_dyn_ros.node import KinDynNode
from kin_dyn_ros.node.outputs import LATCHED_QOS, TF_QOS
from kin_dyn_ros_interfaces.msg import ForwardDynamics

TIMEOUT_S = 10.0

# A small robot with a mimic joint (j3 follows j1) and a fixed sensor link.
MIMIC_URDF = """<robot name="mimic_arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="a"><inertial><origin xyz="0 0 0.1"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0 0.1"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><origin xyz="0 0.1 0"/><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="sensor"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.2"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="5"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0 0 0.2"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
  <joint name="j3" type="revolute"><parent link="base"/><child link="c"/><origin xyz="0 0.1 0"/><axis xyz="1 0 0"/><limit lower="-2" upper="2" effort="10" velocity="5"/><mimic joint="j1" multiplier="-2" offset="0.5"/></joint>
  <joint name="fix" type="fixed"><parent link="b"/><child link="sensor"/><origin xyz="0.1 0 0" rpy="0.3 0 0"/></joint>
</robot>"""



def use_loopback_domain(low, high):
    """Loopback-only DDS with the variables the running distribution reads
    (:mod:`kin_dyn_ros.loopback`, from ``$ROS_DISTRO``) and a domain, set in the environment
    before rclpy.init (so subprocesses inherit them too). Returns the domain id.

    The domain is an explicit ``ROS_DOMAIN_ID`` when the user set one (run all tests in
    it); else a random one in [low, high], each test file having its own range so that
    parallel runs and lingering participants of another file do not meet. The domain that
    scripts/env.sh picked at random (it records it in ``KIN_DYN_DOMAIN_AUTO``), and the
    ones picked here, are not explicit."""
    from kin_dyn_ros.loopback import set_loopback_environment
    set_loopback_environment()
    chosen = os.environ.get('ROS_DOMAIN_ID', '').strip()
    if chosen and chosen != os.environ.get('KIN_DYN_DOMAIN_AUTO', '').strip():
        try:
            return int(chosen)
        except ValueError:
            raise ValueError(f'ROS_DOMAIN_ID={chosen!r} is not a domain id') from None
    domain = random.SystemRandom().randint(low, high)
    os.environ['ROS_DOMAIN_ID'] = os.environ['KIN_DYN_DOMAIN_AUTO'] = str(domain)
    return domain


def module_namespace(module):
    """The namespace of a test module's nodes, helpers and clients: ``/t<pid>_<module>``
    (``module``: the module's ``__name__``). Unique on the host while this process runs, so
    that another ROS process in the same domain (another test run, a robot, the demo) meets
    none of the tests' relative topics and services, the latched ``robot_description``
    included. Tests that start more than one node put each in a sub-namespace of it."""
    name = re.sub(r'[^0-9A-Za-z_]', '_', module.rsplit('.', 1)[-1])
    return f'/t{os.getpid()}_{name}'


def loopback_context(low, high):
    """A fresh rclpy context on loopback-only DDS in a random domain of [low, high]
    (:func:`use_loopback_domain`), shut down when the generator closes. For a fixture:
    ``yield from loopback_context(1, 33)``."""
    domain = use_loopback_domain(low, high)
    context = rclpy.context.Context()
    rclpy.init(context=context, domain_id=domain)
    try:
        yield context
    finally:
        rclpy.try_shutdown(context=context)


def spin_until(executor, predicate, timeout_s=TIMEOUT_S, on_tick=None):
    """:func:`kin_dyn_ros.node.spinning.spin_until` with the tests' default timeout."""
    return spinning.spin_until(executor, predicate, timeout_s, on_tick)


ns, from_ns = stamp_to_ns, ns_to_stamp     # the tests' short names


def now_stamp(rig):
    """A fresh stamp: now on the helper node's clock."""
    return from_ns(rig.node.get_clock().now().nanoseconds)


def stamp_of(msg):
    """The header stamp of an output message (first element for arrays; None for an empty
    array, which the node never publishes but another process on /tf may)."""
    if isinstance(msg, TFMessage):
        return msg.transforms[0].header.stamp if msg.transforms else None
    if isinstance(msg, MarkerArray):
        return msg.markers[0].header.stamp if msg.markers else None
    return msg.header.stamp


OUTPUTS = {   # key: (type, topic: private to the node, or absolute, QoS)
    'tf': (TFMessage, '/tf', TF_QOS),
    'tf_static': (TFMessage, '/tf_static', LATCHED_QOS),
    'com': (PointStamped, 'com', 10),
    'momentum': (TwistStamped, 'centroidal_momentum', 10),
    'gravity': (JointState, 'gravity_torques', 10),
    'forward_dynamics': (ForwardDynamics, 'forward_dynamics', 10),
    'markers': (MarkerArray, 'markers', 10),
    'diagnostics': (DiagnosticArray, '/diagnostics', 10),
}
TICK_OUTPUTS = ('tf', 'com', 'momentum', 'gravity', 'forward_dynamics', 'markers')


class Rig:
    """A helper node that publishes the inputs of the node ``node_name`` of its own namespace
    and records its outputs.

    The helper must live in the node's namespace (:func:`module_namespace`): its inputs
    (robot_description, joint_states, odom, the wrenches) are relative names, so they meet
    only that node; its private outputs are read at ``<namespace>/<node_name>/...``
    (:meth:`private`). ``received[key]`` lists every message of output ``key`` (see
    :data:`OUTPUTS`); on the absolute outputs, which every node of the domain shares, only
    what may be this node's: /tf is matched by stamp (:meth:`find`), /tf_static must be
    stamped at ``since`` (a ROS time in ns, default: now) or later (a latched one of another
    process, from before the test, is dropped), and /diagnostics must be statuses of a node
    named ``node_name``.
    """

    def __init__(self, helper, executor, node_name='kin_dyn_node', contact_topics=None,
                 since=None):
        self.node, self.executor = helper, executor
        self.node_name = node_name
        self.node_path = f"{helper.get_namespace().rstrip('/')}/{node_name}"
        self.since = helper.get_clock().now().nanoseconds if since is None else since
        self.received = {key: [] for key in OUTPUTS}
        for key, (msg_type, topic, qos) in OUTPUTS.items():
            full = topic if topic.startswith('/') else self.private(topic)
            helper.create_subscription(msg_type, full, self._recorder(key), qos)
        self.description = helper.create_publisher(String, 'robot_description', LATCHED_QOS)
        self.joint_states = helper.create_publisher(JointState, 'joint_states', 100)
        self.odometry = helper.create_publisher(Odometry, 'odom', 10)
        self.wrenches = {c: helper.create_publisher(WrenchStamped, t, 10)
                         for c, t in (contact_topics or {}).items()}

    def private(self, name):
        """The full name of the node's private topic or service ``name`` (``~/name``)."""
        return f'{self.node_path}/{name}'

    def record_private(self, outputs):
        """Record, in ``received[key]``, each private output ``key`` of ``outputs``
        ({key: message type}; the topic ``~/key``) beside those of :data:`OUTPUTS`."""
        for key, msg_type in outputs.items():
            self.received[key] = []
            self.node.create_subscription(msg_type, self.private(key),
                                          self.received[key].append, 10)

    def _recorder(self, key):
        keep, received = self._mine, self.received[key]

        def record(msg):
            if keep(key, msg):
                received.append(msg)
        return record

    def _mine(self, key, msg):
        """Whether an output message may come from this rig's node (see the class)."""
        if key == 'tf_static':
            stamp = stamp_of(msg)
            return stamp is not None and ns(stamp) >= self.since
        if key == 'diagnostics':
            prefix = f'{self.node_name}: '
            return bool(msg.status) and all(s.name.startswith(prefix) for s in msg.status)
        return True

    def spin_until(self, predicate, timeout_s=TIMEOUT_S, on_tick=None):
        return spin_until(self.executor, predicate, timeout_s, on_tick)

    def find(self, key, stamp):
        """The latest message of output ``key`` stamped ``stamp`` (or None)."""
        for msg in reversed(self.received[key]):
            if stamp_of(msg) == stamp:
                return msg
        return None

    def count(self, key, stamp):
        return sum(stamp_of(m) == stamp for m in self.received[key])

    def wait_outputs(self, stamp, keys=TICK_OUTPUTS, timeout_s=TIMEOUT_S):
        """{key: message stamped ``stamp``} once every output of ``keys`` has arrived."""
        assert self.spin_until(lambda: all(self.find(k, stamp) for k in keys), timeout_s), \
            f'missing outputs at {stamp}: {[k for k in keys if not self.find(k, stamp)]}'
        return {k: self.find(k, stamp) for k in keys}

    def wait_matched(self, timeout_s=TIMEOUT_S, odometry=True):
        """Wait until the node subscribes to our input publishers (DDS discovery)."""
        pubs = [self.joint_states, *self.wrenches.values()] + [self.odometry] * odometry
        assert self.spin_until(lambda: all(p.get_subscription_count() for p in pubs), timeout_s)

    def now(self):
        return self.node.get_clock().now().to_msg()


@contextmanager
def node_and_rig(context, params, helper_name, contact_topics, namespace,
                 node_name='kin_dyn_node'):
    """(node, rig): a KinDynNode with the parameters ``params`` ({name: value}) and a
    :class:`Rig` on a helper node, both in ``namespace`` (:func:`module_namespace`) and on
    one SingleThreadedExecutor; destroyed on exit. Create the helper's other entities, then
    :func:`load_model`. ``node_name``: another name for the node (remapped), for a second
    node whose /diagnostics the rigs of the first must tell from its own.

    ``publish_frequency`` is 1000 Hz unless ``params`` say otherwise: these tests compare
    /tf tick by tick (stamps >= 1 ms apart); test_tf_rate.py tests the default's rate."""
    params = {'publish_frequency': 1000.0, **params}
    since = Clock().now().nanoseconds       # before the node's first /tf_static
    remap = [] if node_name == 'kin_dyn_node' else ['--ros-args', '-r', f'__node:={node_name}']
    node = KinDynNode(context=context, namespace=namespace, cli_args=remap,
                      parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    helper = rclpy.create_node(helper_name, namespace=namespace, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(helper)
    try:
        yield node, Rig(helper, executor, node_name, contact_topics, since)
    finally:
        executor.shutdown()
        helper.destroy_node()
        node.destroy_node()


def node_command():
    """The installed console script, as launch runs it (lib/kin_dyn_ros for a colcon install,
    the venv's bin for an editable pip install), else the module."""
    for candidate in (pathlib.Path(sys.prefix) / 'lib' / 'kin_dyn_ros' / 'kin_dyn_node',
                      shutil.which('kin_dyn_node')):
        if candidate and os.access(candidate, os.X_OK):
            return [str(candidate)]
    return [sys.executable, '-m', 'kin_dyn_ros.node']


def stop_process(proc, timeout_s=20.0):
    """SIGINT to a node process started with piped output; its output once it ended
    (killed after ``timeout_s``)."""
    import signal
    import subprocess
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


def load_model(rig, urdf, odometry=True):
    """Publish ``urdf`` on robot_description; wait for the node's /tf_static (the model is
    loaded) and for its subscriptions to the rig's inputs (odometry: unless False)."""
    rig.description.publish(String(data=urdf))
    assert rig.spin_until(lambda: rig.received['tf_static']), 'model never loaded'
    rig.wait_matched(odometry=odometry)


def joint_state_msg(names, positions, velocities=(), efforts=(), stamp=None):
    msg = JointState(name=list(names), position=[float(v) for v in positions],
                     velocity=[float(v) for v in velocities],
                     effort=[float(v) for v in efforts])
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


def odometry_msg(frame, child, w_H_c, twist, stamp):
    """Odometry of ``child`` in ``frame``; ``twist`` (6,) in the child's axes (REP-105)."""
    msg = Odometry()
    msg.header.frame_id, msg.header.stamp, msg.child_frame_id = frame, stamp, child
    matrix_to_pose(np.asarray(w_H_c, float), msg.pose.pose)
    t = msg.twist.twist
    (t.linear.x, t.linear.y, t.linear.z,
     t.angular.x, t.angular.y, t.angular.z) = (float(v) for v in twist)
    return msg


def wrench_msg(frame, w, stamp):
    msg = WrenchStamped()
    msg.header.frame_id, msg.header.stamp = frame, stamp
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in w)
    return msg


def base_from_odometry(ref, child, w_H_c, twist_c, s, s_dot):
    """(w_H_b, nu MIXED) of the core ``ref`` (in MIXED) from the odometry of link ``child``:
    pose ``w_H_c``, twist ``twist_c`` in its own axes (REP-105), solved with the core's
    Jacobian: ``J_child [nu; s_dot]`` = the child's MIXED twist (not the node's method)."""
    w_H_b = w_H_c @ inverse_homogeneous(ref.forward_kinematics(child, np.eye(4), s))
    jac = ref.jacobian(child, w_H_b, s)
    r = w_H_c[:3, :3]
    v_child = np.concatenate([r @ twist_c[:3], r @ twist_c[3:]])
    return w_H_b, np.linalg.solve(jac[:, :6], v_child - jac[:, 6:] @ s_dot)


def standing(kd, **joints):
    """(w_H_b, s): joints at zero (or as given, above the pelvis), the base placed so that
    l_sole lies on z = 0 rotated by pi about z; both soles are then flat on z = 0."""
    s = np.zeros(kd.NDoF)
    for name, value in joints.items():
        s[kd.joints_name_list.index(name)] = value
    target = np.diag([-1.0, -1.0, 1.0, 1.0])
    return target @ np.linalg.inv(kd.forward_kinematics('l_sole', np.eye(4), s)), s


def tf_matrices(msg):
    """{(parent, child): (4, 4)} of a TFMessage."""
    return {(t.header.frame_id, t.child_frame_id): transform_to_matrix(t.transform)
            for t in msg.transforms}


def xyz(v):
    return np.array([v.x, v.y, v.z])
