"""kin_dyn_node as a separate process, started as launch starts it:

    kin_dyn_node --ros-args -r __ns:=/<ns> --params-file config/kin_dyn.yaml \
        --params-file config/icub.yaml -p ...

(in the module's namespace, with the files' section renamed to the node's full name).
The test process publishes iCub's description (topic), joint states and foot wrenches,
receives the outputs over loopback DDS and checks them against the dynamics core, calls a
service, then sends SIGINT and expects a clean exit (code 0), while a foreign node of the
same domain, in no namespace, publishes another robot's latched robot_description and its
joint states: the node never sees them. A bad parameter must stop the node at start-up with
a clear message and a non-zero exit code.

Run:  source scripts/env.sh && python -m pytest test/ros/test_node_process.py
"""

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import yaml

import icub_models  # noqa: E402
import rclpy  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import TransformStamped  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from kin_dyn_ros.node.conversions import transform_to_matrix  # noqa: E402
from kin_dyn_ros.node.outputs import LATCHED_QOS  # noqa: E402
from kin_dyn_ros.dynamics import KinDynComputations  # noqa: E402
from kin_dyn_ros_interfaces.srv import GetMassMatrix  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
from ros_helpers import (MIMIC_URDF, Rig, joint_state_msg, loopback_context,  # noqa: E402
                         from_ns, module_namespace, node_command, ns, stamp_of,
                         stop_process, wrench_msg)

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

CONFIG = [REPO / 'config' / 'kin_dyn.yaml', REPO / 'config' / 'icub.yaml']
NAMESPACE = module_namespace(__name__)   # the node's, the helper's and the client's
FOREIGN_STAMP = from_ns(1_000_000_000)   # the foreign messages' stamp: 1 s after the epoch


@pytest.fixture(scope='module')
def config(tmp_path_factory):
    """CONFIG for the node in NAMESPACE: a file's section ``kin_dyn_node`` applies to the
    node of that name in the root namespace only (launch/kin_dyn.launch.py reads the files
    itself for that reason), so each copy names the node in full."""
    folder = tmp_path_factory.mktemp('config')
    files = []
    for path in CONFIG:
        section = yaml.safe_load(path.read_text())['kin_dyn_node']
        files.append(folder / path.name)
        files[-1].write_text(yaml.safe_dump({f'{NAMESPACE}/kin_dyn_node': section}))
    return files


def start_node(config, *params):
    args = [a for p in params for a in ('-p', p)]
    files = [a for f in config for a in ('--params-file', str(f))]
    return subprocess.Popen(node_command() + ['--ros-args', '-r', f'__ns:={NAMESPACE}']
                            + files + args,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=REPO, env=dict(os.environ))


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(34, 66)


class Foreign:
    """Another ROS process's node in the same domain (a participant of its own), in no
    namespace, as the one that broke run 1282: it publishes, latched, another robot's
    robot_description (MIMIC_URDF) and a /tf_static of it stamped long ago, and from a
    thread, every 10 ms, that robot's /joint_states (stamped FOREIGN_STAMP) and a
    /diagnostics of its own."""

    def __init__(self, domain):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('foreign_robot', context=self.context)
        latched = [self.node.create_publisher(t, n, LATCHED_QOS)
                   for t, n in ((String, '/robot_description'), (TFMessage, '/tf_static'))]
        latched[0].publish(String(data=MIMIC_URDF))
        fixed = TransformStamped(child_frame_id='sensor')
        fixed.header.frame_id, fixed.header.stamp = 'b', FOREIGN_STAMP
        fixed.transform.rotation.w = 1.0
        latched[1].publish(TFMessage(transforms=[fixed]))
        self.joint_states = self.node.create_publisher(JointState, '/joint_states', 10)
        self.diagnostics = self.node.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.sent, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.01):
            self.joint_states.publish(joint_state_msg(['j1', 'j2'], [0.3, 0.1],
                                                      stamp=FOREIGN_STAMP))
            self.diagnostics.publish(DiagnosticArray(status=[DiagnosticStatus(
                name='foreign_robot: motors', message='running')]))
            self.sent += 1

    def close(self):
        self._stop.set()
        self._thread.join(5.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def foreign(ros_context):
    node = Foreign(ros_context.get_domain_id())
    yield node
    node.close()


def test_bad_parameter_stops_the_node_with_a_clear_error(ros_context, config):
    proc = start_node(config, 'rate:=-1.0')
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1, out
    assert "invalid configuration: parameter 'rate' must be >= 0" in out


def test_node_process_publishes_and_exits_cleanly_on_sigint(ros_context, config, foreign):
    """Beside the foreign node (started first: its latched description waits for any
    subscriber of /robot_description), the node, its helper and its client in NAMESPACE:
    the node has no model until the helper's description, loads iCub only, ticks only the
    helper's joint states, and the rig records none of the foreign /tf_static and
    /diagnostics."""
    urdf = pathlib.Path(icub_models.get_model_file('iCubGazeboV2_5')).read_text()
    kd = KinDynComputations(urdf)
    proc = start_node(config, 'use_odometry:=false',
                      'fixed_base_pose:=[0.1, 0.0, 0.6, 0.0, 0.0, 0.0, 1.0]',
                      'diagnostics_period:=0.2',
                      'publish_frequency:=1000.0')     # /tf on every tick: checked below
    helper = rclpy.create_node('kin_dyn_process_test', namespace=NAMESPACE,
                               context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(helper)
    try:
        rig = Rig(helper, executor, contact_topics={'l_sole': 'l_sole/wrench',
                                                    'r_sole': 'r_sole/wrench'})
        client = helper.create_client(GetMassMatrix, rig.private('get_mass_matrix'))
        assert client.wait_for_service(timeout_sec=30.0)

        def mass_matrix():
            future = client.call_async(GetMassMatrix.Request(use_measured_state=True))
            assert rig.spin_until(future.done)
            return future.result()
        res = mass_matrix()                                    # before any description
        assert not res.success and 'no robot model loaded yet' in res.message
        rig.description.publish(String(data=urdf))
        assert rig.spin_until(lambda: rig.received['tf_static'], timeout_s=30.0), \
            'the node never published /tf_static'
        rig.wait_matched(timeout_s=30.0, odometry=False)
        rng = np.random.default_rng(0)
        n = kd.NDoF
        s, s_dot, tau = rng.uniform(-0.5, 0.5, n), rng.normal(size=n), rng.normal(size=n)
        w_l = rng.normal(size=6) * 20.0
        # one probe per spin until the node answers: DDS matching may still be settling
        stamps = []

        def probe():
            stamp = rig.now()
            rig.wrenches['l_sole'].publish(wrench_msg('', w_l, stamp))
            rig.joint_states.publish(joint_state_msg(kd.joints_name_list, s, s_dot, tau, stamp))
            stamps.append(stamp)

        def with_wrench():   # the first stamp whose forward dynamics used the wrench
            return next((st for st in stamps if 'l_sole' in getattr(
                rig.find('forward_dynamics', st), 'active_contacts', [])), None)

        assert rig.spin_until(with_wrench, timeout_s=30.0, on_tick=probe)
        stamp = with_wrench()
        out = rig.wait_outputs(stamp)
        w_H_b = np.eye(4)
        w_H_b[:3, 3] = 0.1, 0.0, 0.6
        fd = out['forward_dynamics']
        assert list(fd.active_contacts) == ['l_sole']
        result = kd.compute_tick(w_H_b, s, np.zeros(6), s_dot, tau, {'l_sole': ('l_sole', w_l)})
        tf = {t.child_frame_id: transform_to_matrix(t.transform) for t in out['tf'].transforms}
        np.testing.assert_allclose(tf['root_link'], w_H_b, atol=1e-12)   # fixed base published
        for (_, _, child), h in zip(kd.joint_frames, result.joint_transforms):
            np.testing.assert_allclose(tf[child], h, atol=1e-12)
        p = out['com'].point
        np.testing.assert_allclose([p.x, p.y, p.z], result.com, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(out['gravity'].effort, result.gravity_torques, rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(fd.joint_accelerations, result.joint_accelerations,
                                   rtol=1e-12, atol=1e-12)
        assert rig.spin_until(lambda: rig.received['diagnostics'])

        res = mass_matrix()
        assert res.success, res.message
        np.testing.assert_allclose(np.reshape(res.data, (6 + n, 6 + n)),
                                   kd.mass_matrix(w_H_b, s), rtol=1e-12, atol=1e-12)

        # the foreign node was there all along, in this domain, and never reached the node
        publishers = helper.get_publishers_info_by_topic('/robot_description')
        assert [p.node_name for p in publishers] == ['foreign_robot'] and foreign.sent > 0
        assert {ns(stamp_of(m)) for m in rig.received['com']} <= {ns(st) for st in stamps}
        static = {t.child_frame_id for m in rig.received['tf_static'] for t in m.transforms}
        assert static == {child for _, _, child, _ in kd.static_transforms}
    finally:
        executor.shutdown()
        helper.destroy_node()
        out = stop_process(proc)
    assert proc.returncode == 0, out
    assert "loaded model 'iCub'" in out
    assert 'mimic_arm' not in out             # the foreign description never came
    assert 'Traceback' not in out


def descendants(pid):
    """Pids of every process below ``pid`` (Linux /proc)."""
    parents = {}
    for stat in pathlib.Path('/proc').glob('[0-9]*/stat'):
        try:
            text = stat.read_text()
        except OSError:
            continue
        parents.setdefault(int(text[text.rindex(')') + 2:].split()[1]), []).append(
            int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def alive(pid):
    try:
        return pathlib.Path(f'/proc/{pid}/stat').read_text().split(') ')[1][0] != 'Z'
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='/proc and process groups')
def test_two_sigints_to_the_process_group_end_everything_quietly(ros_context, config):
    """A terminal's Ctrl-C under ros2 launch: SIGINT to the whole process group (the node and
    its workers), and launch's own SIGINT to the node 50 ms later. Everything ends, exit 0,
    no traceback (the second SIGINT came during the clean-up: a KeyboardInterrupt in the
    worker's wait, before)."""
    urdf = pathlib.Path(icub_models.get_model_file('iCubGazeboV2_5')).read_text()
    helper = rclpy.create_node('kin_dyn_sigint_test', namespace=NAMESPACE, context=ros_context)
    helper.create_publisher(String, 'robot_description', LATCHED_QOS).publish(String(data=urdf))
    proc = subprocess.Popen(node_command() + ['--ros-args', '-r', f'__ns:={NAMESPACE}']
                            + [a for f in config for a in ('--params-file', str(f))],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=REPO, env=dict(os.environ), start_new_session=True)
    try:
        executor = SingleThreadedExecutor(context=ros_context)
        executor.add_node(helper)
        static = []                   # the model is loaded: its /tf_static
        helper.create_subscription(TFMessage, '/tf_static', lambda m: static.extend(
            t.child_frame_id for t in m.transforms), LATCHED_QOS)
        deadline = time.monotonic() + 60.0      # then the workers start
        while (len(descendants(proc.pid)) < 2 or 'l_sole' not in static) \
                and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        executor.shutdown()
        workers = descendants(proc.pid)
        assert 'l_sole' in static, 'the model was never loaded'
        assert len(workers) >= 2, 'the workers (equilibrium torques, services) never started'
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    finally:
        helper.destroy_node()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out     # (the model was loaded: its /tf_static came)
    assert 'Traceback' not in out and 'KeyboardInterrupt' not in out, out
    deadline = time.monotonic() + 5.0
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in workers if alive(p)], 'a worker outlived the node'
