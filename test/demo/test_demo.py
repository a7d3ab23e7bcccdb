"""End-to-end test of the live demo: ``python -m kin_dyn_ros.demo`` as a subprocess.

Runs the demo in a short mode (3 s of iCub at 250 Hz, 2.5 s of Talos from
example-robot-data, and 2 s of a URDF without feet) with the real node, then checks what a
user gets:

- the MCAP file holds every output topic of the node and every input, with the expected
  counts (stated below), and every channel decodes with its stored schema (so Foxglove and
  PlotJuggler can open it);
- the plots exist and are PNG images of a sensible size;
- the balance outputs (issue 18): ~/zmp, ~/capture_point and ~/cop once per answered tick
  (the demo's feet always carry the robot), ~/support_polygon and ~/stability_margin at
  least once; the node's ZMP is the motion's (the CoP of its summed contact wrenches) and
  inside the support polygon on every tick of this squat and sway, its capture point is
  the CoM moved by v / omega, and ~/stability_margin agrees with ~/zmp, ~/capture_point and
  ~/support_polygon of its tick;
- the node's forward dynamics gives back the motion's accelerations to 1e-6 on every tick
  that the node computed from that tick's own odometry and wrenches;
- Talos, a second humanoid whose feet the demo guesses (left_sole_link, right_sole_link),
  squats on them: Pinocchio, fed with the recorded /odom and /joint_states, puts both soles
  flat on the ground and never moving, and the CoM 0.8-1.0 m above them, at the node's
  ~/com, going down and up by centimetres (skipped when example-robot-data is not
  installed).

About 20 s on 2 cores. Needs the ROS 2 environment: bash scripts/setup_env.sh && source
scripts/env.sh.
"""

import json
import os
import random
import struct
import subprocess
import sys

import numpy as np
import pytest

from kin_dyn_ros.loopback import set_loopback_environment

from mcap.reader import make_reader  # noqa: E402
from mcap_ros2.decoder import DecoderFactory  # noqa: E402

# lark-parser 0.12 (used by the rosidl parser that rclpy imports) uses deprecated modules.
pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

DURATION_S = 3.0
# The demo's inputs at 250 Hz here: its default 500 Hz saturates the two cores of the CI
# machine kind (node ~87 %, demo ~80 %, equilibrium worker ~20 % of a core), where the share
# of ticks the node answers measures the machine's spell (0.3-0.9 of them on one day, on one
# commit), not the node; at 250 Hz 0.83-0.98 (2026-11-27).
RATE_HZ = 250.0
TICKS = int(DURATION_S * RATE_HZ)
NODE = '/kin_dyn_node'
# (the balance outputs ~/zmp, ~/capture_point, ~/cop: every tick while a foot is loaded,
# which the demo's feet always are)
BALANCE_OUTPUTS = [f'{NODE}/zmp', f'{NODE}/capture_point', f'{NODE}/cop']
PER_TICK_OUTPUTS = [f'{NODE}/com', f'{NODE}/centroidal_momentum',
                    f'{NODE}/gravity_torques', f'{NODE}/forward_dynamics',
                    f'{NODE}/markers'] + BALANCE_OUTPUTS
# at the node's equilibrium_rate (100 Hz), but only in moments without inputs waiting: an
# overloaded node publishes them far less often (down to ~1 per second measured), so only
# their presence and an upper bound are checked
EQUILIBRIUM_OUTPUTS = [f'{NODE}/support_polygon', f'{NODE}/stability_margin']
EQUILIBRIUM_RATE_HZ = 100.0
TF_HZ = 20.0           # the node's default publish_frequency
INPUTS = ['/joint_states', '/odom', '/l_sole/wrench', '/r_sole/wrench']
PLOTS = ['com', 'momentum', 'gravity_torques', 'forward_dynamics', 'latency', 'balance']
# The demo drops ticks when its timer falls behind (a loaded machine): the counts below are
# checked against what it really sent, never against the wall clock.
# The node answers every tick it receives; joint_states are best effort (sensor-data QoS,
# depth 5), so an overloaded node may lose some: at least this share must be answered.
MIN_ANSWERED = 0.5
# Forward dynamics of ticks computed from their own inputs: exact up to round-off.
FD_BOUND = 1e-6
# The node matches odometry and wrenches to the JointState's stamp (its own test checks
# that); only when an overloaded machine makes the demo publish in bursts and best-effort
# queues drop messages does a tick fall back to older inputs (>= 95 % in sync measured on
# an idle 2-core machine, 59 % with a compiler running beside it). At least this share of
# the answered ticks must be in sync.
MIN_IN_SYNC = 0.5
TIMEOUT_S = 120


def _domain():
    """An explicit ROS_DOMAIN_ID (run the demo in it), else a random one. The domain that
    scripts/env.sh picked at random (recorded in KIN_DYN_DOMAIN_AUTO) is not explicit
    (the rule of test/ros/ros_helpers.py use_loopback_domain)."""
    chosen = os.environ.get('ROS_DOMAIN_ID', '').strip()
    if chosen and chosen != os.environ.get('KIN_DYN_DOMAIN_AUTO', '').strip():
        return chosen
    return str(random.randint(1, 100))


# The demo's node and topics live in a namespace of this test run (--namespace): another
# ROS process in the domain (a latched robot_description, joint_states) cannot meet them.
# The recording keeps the names without it (/joint_states, /kin_dyn_node/com, ...).
NAMESPACE = f't{os.getpid()}_demo'


def _run_demo(tmp_path, *args, domain=None):
    env = set_loopback_environment(dict(os.environ, ROS_DOMAIN_ID=domain or _domain()))
    out = tmp_path / 'out'
    proc = subprocess.run([sys.executable, '-m', 'kin_dyn_ros.demo', '--output', str(out),
                           '--quiet', '--namespace', NAMESPACE, '--rate', str(RATE_HZ), *args],
                          env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / 'summary.json').read_text())
    return out, summary, proc.stdout


def _mcap_counts(path):
    with open(path, 'rb') as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        topics = {c.id: c.topic for c in summary.channels.values()}
        counts = {topics[cid]: n for cid, n in summary.statistics.channel_message_counts.items()}
        schemas = {c.topic: summary.schemas[c.schema_id] for c in summary.channels.values()}
    return counts, schemas


def _decode_first_of_each_topic(path):
    """{topic: decoded message}: decodes with the schema stored in the file, as viewers do."""
    decoded = {}
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, channel, _, msg in reader.iter_decoded_messages():
            decoded.setdefault(channel.topic, msg)
    return decoded


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', f'{path} is not a PNG'
    assert data[12:16] == b'IHDR'
    width, height = struct.unpack('>II', data[16:24])
    return len(data), width, height


@pytest.fixture(scope='module')
def icub_run(tmp_path_factory):
    return _run_demo(tmp_path_factory.mktemp('icub'), '--duration', str(DURATION_S))


def test_mcap_holds_every_topic_with_the_expected_counts(icub_run):
    out, summary, _ = icub_run
    counts, schemas = _mcap_counts(out / 'kin_dyn_demo.mcap')
    for topic in INPUTS + PER_TICK_OUTPUTS + ['/tf', '/tf_static', '/diagnostics',
                                              '/robot_description']:
        assert counts.get(topic, 0) > 0, f'{topic} missing from the MCAP: {counts}'
    # every input: once per tick, plus one priming odometry/wrench before the first tick;
    # a tick dropped by a late timer may have had its odometry/wrenches published already
    js = counts['/joint_states']
    assert js == summary['ticks_published']
    assert js + summary['ticks_dropped'] == TICKS
    assert js > 0      # how many the demo managed to send depends on the machine's load
    for topic in INPUTS[1:]:
        assert js + 1 <= counts[topic] <= js + 1 + summary['ticks_dropped'], topic
    # every per-tick output: once per answered tick (all published together by the node)
    answered = counts[f'{NODE}/forward_dynamics']
    assert answered >= MIN_ANSWERED * counts['/joint_states'], counts
    for topic in PER_TICK_OUTPUTS:
        assert abs(counts[topic] - answered) <= 2, (topic, counts)
    for topic in EQUILIBRIUM_OUTPUTS:
        assert 1 <= counts.get(topic, 0) <= EQUILIBRIUM_RATE_HZ * DURATION_S + 2, (topic, counts)
    # /tf at the node's default publish_frequency, 20 per second of JointState stamps
    assert 0.5 * TF_HZ * DURATION_S <= counts['/tf'] <= TF_HZ * DURATION_S + 2, counts
    assert counts['/robot_description'] == 1
    assert counts['/tf_static'] >= 1
    assert counts['/diagnostics'] >= DURATION_S - 1     # 1 Hz
    assert schemas['/tf'].name == 'tf2_msgs/msg/TFMessage'
    assert schemas[f'{NODE}/forward_dynamics'].name == \
        'kin_dyn_ros_interfaces/msg/ForwardDynamics'
    assert schemas[f'{NODE}/zmp'].name == 'geometry_msgs/msg/PointStamped'
    assert schemas[f'{NODE}/capture_point'].name == 'geometry_msgs/msg/PointStamped'
    assert schemas[f'{NODE}/cop'].name == 'kin_dyn_ros_interfaces/msg/CentresOfPressure'
    margin = schemas[f'{NODE}/stability_margin']
    assert margin.name == 'kin_dyn_ros_interfaces/msg/StabilityMargin'
    assert b'float64 capture_point_margin' in margin.data      # the current definition
    assert {t: n for t, n in summary['message_counts'].items() if n} == counts
    assert all(s.encoding == 'ros2msg' for s in schemas.values())


def test_mcap_decodes_with_its_own_schemas(icub_run):
    out, _, _ = icub_run
    decoded = _decode_first_of_each_topic(out / 'kin_dyn_demo.mcap')
    for topic in INPUTS + PER_TICK_OUTPUTS + ['/tf', '/tf_static', '/diagnostics']:
        assert topic in decoded, topic
    assert decoded['/odom'].child_frame_id == 'root_link'
    assert decoded['/l_sole/wrench'].header.frame_id == 'l_sole'
    assert len(decoded['/joint_states'].name) == 32
    assert decoded['/joint_states'].effort, 'joint torques missing'
    assert len(decoded[f'{NODE}/forward_dynamics'].joint_accelerations) == 32
    assert decoded['/tf_static'].transforms
    for topic in BALANCE_OUTPUTS + EQUILIBRIUM_OUTPUTS + [f'{NODE}/com']:
        assert decoded[topic].header.frame_id == 'odom', topic      # the world frame
    cop = decoded[f'{NODE}/cop']
    assert list(cop.contacts) == ['l_sole', 'r_sole'] and list(cop.defined) == [True, True]
    # both feet carry the robot (33 kg): the normal forces add up to about its weight
    assert 0.8 * 33.0 * 9.81 < sum(cop.normal_forces) < 1.2 * 33.0 * 9.81, cop.normal_forces


def _by_stamp(path, topics):
    """{topic: {stamp [ns]: decoded message}} of ``topics`` in the MCAP."""
    out = {t: {} for t in topics}
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, channel, _, msg in reader.iter_decoded_messages(topics=list(topics)):
            stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            out[channel.topic][stamp] = msg
    return out


def _inside_margin(polygon, x, y):
    """Signed distance of (x, y) to a convex counter-clockwise polygon [(x, y)] (> 0
    inside): written here, not the node's code."""
    best = np.inf
    for (ax, ay), (bx, by) in zip(polygon, polygon[1:] + polygon[:1]):
        ex, ey = bx - ax, by - ay
        best = min(best, (ex * (y - ay) - ey * (x - ax)) / np.hypot(ex, ey))
    return best


def test_zmp_and_capture_point_of_the_squat(icub_run):
    """The node's ZMP is the motion's and inside the support polygon; its capture point is
    the CoM moved by v / omega; ~/stability_margin agrees with the other outputs."""
    out, summary, _ = icub_run
    balance = summary['balance']
    # the motion's ZMP (its contact wrenches summed, on the ground), ticks in sync
    assert balance['zmp_error_max_m'] is not None and balance['zmp_error_max_m'] < 1e-9
    assert abs(balance['ticks_with_zmp'] - summary['ticks_answered']) <= 2, balance
    topics = [f'{NODE}/{t}' for t in ('zmp', 'capture_point', 'com', 'centroidal_momentum',
                                      'forward_dynamics', 'support_polygon',
                                      'stability_margin')]
    data = _by_stamp(out / 'kin_dyn_demo.mcap', topics)
    zmp, cp, com, momentum, fd, polygons, margins = (data[t] for t in topics)
    # the feet never move: one support polygon all along (the hull of the soles' 8 corners;
    # geometry_msgs/Point32: float32) on the ticks computed from their own odometry (another
    # tick's odometry with this tick's joints puts the feet elsewhere by some 10 um)
    fresh = [s for s in polygons if s in fd and fd[s].odometry_age == 0.0]
    assert fresh, 'no ~/support_polygon of a tick in sync'
    vertices = [np.array(sorted((p.x, p.y) for p in polygons[s].polygon.points))
                for s in fresh]
    assert len(vertices[0]) >= 4
    for v in vertices[1:]:
        np.testing.assert_allclose(v, vertices[0], atol=1e-6)
    polygon = [(p.x, p.y) for p in polygons[fresh[0]].polygon.points]
    inside = [_inside_margin(polygon, m.point.x, m.point.y) for m in zmp.values()]
    assert min(inside) > 0.0, min(inside)          # this squat and sway stay well inside
    assert balance['zmp_inside_share'] == 1.0
    from kin_dyn_ros.demo.runner import Options, prepare_robot
    mass = prepare_robot(Options()).kd.get_total_mass()      # the default iCub's
    checked = 0
    for stamp, point in cp.items():     # xi = c + v / omega, omega = sqrt(g / h), ground z = 0
        if stamp not in com or stamp not in momentum or fd.get(stamp) is None \
                or fd[stamp].odometry_age != 0.0:
            continue
        c = com[stamp].point
        v = momentum[stamp].twist.linear
        omega = np.sqrt(9.80665 / c.z)      # gravity of config/kin_dyn.yaml
        np.testing.assert_allclose([point.point.x, point.point.y, point.point.z],
                                   [c.x + v.x / mass / omega, c.y + v.y / mass / omega, 0.0],
                                   atol=1e-9)
        checked += 1
    assert checked >= MIN_IN_SYNC * MIN_ANSWERED * summary['ticks_published']
    for stamp, msg in margins.items():   # the node's margins: of its tick's outputs
        assert list(msg.active_contacts) == ['l_sole', 'r_sole']
        np.testing.assert_allclose([msg.zmp.x, msg.zmp.y], [zmp[stamp].point.x,
                                                            zmp[stamp].point.y], atol=1e-12)
        own = [(p.x, p.y) for p in polygons[stamp].polygon.points]
        for point, value, flag in ((msg.com_projection, msg.margin, msg.inside),
                                   (msg.zmp, msg.zmp_margin, msg.zmp_inside),
                                   (msg.capture_point, msg.capture_point_margin,
                                    msg.capture_point_inside)):
            assert value == pytest.approx(_inside_margin(own, point.x, point.y), abs=1e-6)
            assert flag and value > 0.0


def test_plots_are_png_images(icub_run):
    out, summary, _ = icub_run
    for name in PLOTS:
        path = out / f'{name}.png'
        assert path.is_file(), name
        size, width, height = _png_size(path)
        assert size > 20_000 and width >= 800 and height >= 400, (name, size, width, height)
        assert summary['files'][name] == str(path)


def test_forward_dynamics_gives_back_the_motion(icub_run):
    _, summary, stdout = icub_run
    assert summary['mode'] == 'biped'
    assert summary['ticks_in_sync'] >= MIN_IN_SYNC * summary['ticks_answered'], summary
    assert summary['fd_error_max'] < FD_BOUND, summary
    assert summary['fd_error_joints_max'] < FD_BOUND
    for key in ('p50', 'p95', 'p99'):
        assert 0 < summary['latency_ms'][key] < 1000
    assert 'forward dynamics  max |node - motion|' in stdout
    assert 'kin_dyn_demo.mcap' in stdout


def test_a_model_without_feet_runs_with_a_fixed_base(tmp_path):
    from random_tree import random_tree_urdf  # test/support
    urdf = tmp_path / 'tree.urdf'
    urdf.write_text(random_tree_urdf(6, seed=1))
    out, summary, _ = _run_demo(tmp_path, '--duration', '2', '--model', str(urdf),
                                '--no-plots')
    assert summary['mode'] == 'fixed-base'
    assert summary['fd_error_max'] < FD_BOUND, summary
    counts, _ = _mcap_counts(out / 'kin_dyn_demo.mcap')
    assert counts['/link_000/wrench'] >= counts['/joint_states'] + 1
    assert counts[f'{NODE}/forward_dynamics'] >= MIN_ANSWERED * counts['/joint_states']
    assert not list(out.glob('*.png'))


TALOS_S = 2.5          # one squat takes half the 4 s period
TALOS_FEET = ['left_sole_link', 'right_sole_link']


@pytest.fixture(scope='module')
def talos_run(tmp_path_factory, talos_urdf):
    return _run_demo(tmp_path_factory.mktemp('talos'), '--duration', str(TALOS_S),
                     '--model', str(talos_urdf), '--no-plots')


def _talos_records(path):
    """{stamp [ns]: {'js': JointState, 'odom': Odometry, 'com': node ~/com, 'fd': node
    ~/forward_dynamics}} from the MCAP, for the ticks that the node computed with the
    odometry of their own instant (its ~/forward_dynamics says so: odometry_age 0)."""
    topics = {'/joint_states': 'js', '/odom': 'odom', f'{NODE}/com': 'com',
              f'{NODE}/forward_dynamics': 'fd'}
    out = {}
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, channel, _, msg in reader.iter_decoded_messages(topics=list(topics)):
            stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            out.setdefault(stamp, {})[topics[channel.topic]] = msg
    return {s: r for s, r in sorted(out.items()) if len(r) == 4
            and r['fd'].base_from_odometry and r['fd'].odometry_age == 0.0}


def test_talos_squats_on_its_guessed_feet(talos_run, talos_urdf):
    pin = pytest.importorskip('pinocchio', reason='Pinocchio (pin) is the reference here')
    out, summary, stdout = talos_run
    assert summary['mode'] == 'biped' and summary['feet'] == TALOS_FEET, summary
    assert 'guessed' in summary['feet_source']
    counts, _ = _mcap_counts(out / 'kin_dyn_demo.mcap')
    js = counts['/joint_states']
    assert 0 < js <= TALOS_S * RATE_HZ
    for topic in [f'/{f}/wrench' for f in TALOS_FEET]:
        assert counts[topic] >= js
    for topic in PER_TICK_OUTPUTS:
        assert counts[topic] >= MIN_ANSWERED * js, (topic, counts)
    assert summary['ticks_in_sync'] >= MIN_IN_SYNC * summary['ticks_answered'], summary
    assert summary['fd_error_max'] < FD_BOUND, summary
    assert 'CoM height' in stdout and 'above the soles' in stdout
    contacts = (out / 'contacts.yaml').read_text()
    assert 'contacts: [left_sole_link, right_sole_link]' in contacts

    model = pin.buildModelFromUrdf(str(talos_urdf), pin.JointModelFreeFlyer())
    data = model.createData()
    soles = [model.getFrameId(f) for f in TALOS_FEET]
    records = _talos_records(out / 'kin_dyn_demo.mcap')
    assert len(records) >= MIN_IN_SYNC * MIN_ANSWERED * js
    heights, first = [], None
    for stamp in list(records)[::25]:
        r = records[stamp]
        q = pin.neutral(model)
        p, o = r['odom'].pose.pose.position, r['odom'].pose.pose.orientation
        q[:7] = [p.x, p.y, p.z, o.x, o.y, o.z, o.w]
        for name, position in zip(r['js'].name, r['js'].position):
            q[model.joints[model.getJointId(name)].idx_q] = position
        pin.framesForwardKinematics(model, data, q)
        com = pin.centerOfMass(model, data, q)
        placements = [data.oMf[i] for i in soles]
        for m in placements:
            assert abs(m.translation[2]) < 1e-6                      # on the ground
            np.testing.assert_allclose(m.rotation[:, 2], [0, 0, 1], atol=1e-6)   # flat
        if first is None:
            first = [m.translation.copy() for m in placements]
        for m, p0 in zip(placements, first):
            np.testing.assert_allclose(m.translation, p0, atol=1e-6)   # never moving
        node = r['com'].point
        np.testing.assert_allclose([node.x, node.y, node.z], com, atol=1e-6)
        heights.append(com[2])
    assert 0.8 < min(heights) and max(heights) < 1.0, (min(heights), max(heights))
    assert max(heights) - min(heights) > 0.04, 'no squat'
    assert summary['com_height_m']['min'] == pytest.approx(min(heights), abs=0.01)


# A foreign node in no namespace: a latched /robot_description of another robot and
# /joint_states of its joints at 100 Hz (the description again at 10 Hz; nothing on /tf or /diagnostics, which the demo
# records as they are absolute).
FOREIGN_URDF = """<robot name="foreign_arm">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0 0 0.1"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="foreign_joint" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="5"/></joint>
</robot>"""
FOREIGN_NODE = """
import sys, rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node('foreign_node')
latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
description = node.create_publisher(String, '/robot_description', latched)
description.publish(String(data=sys.argv[1]))
js = node.create_publisher(JointState, '/joint_states', 10)
count = [0]
def tick():
    count[0] += 1
    if count[0] % 10 == 0:   # again at 10 Hz: a node that listens would take it
        description.publish(String(data=sys.argv[1]))
    msg = JointState(name=['foreign_joint'], position=[0.3], velocity=[0.0], effort=[1.0])
    msg.header.stamp = node.get_clock().now().to_msg()
    js.publish(msg)
node.create_timer(0.01, tick)
print('ready', flush=True)
try:
    rclpy.spin(node)
except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
    pass
"""


def test_a_foreign_node_in_the_domain_does_not_disturb_the_demo(tmp_path):
    domain = _domain()
    env = set_loopback_environment(dict(os.environ, ROS_DOMAIN_ID=domain))
    foreign = subprocess.Popen([sys.executable, '-c', FOREIGN_NODE, FOREIGN_URDF], env=env,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert foreign.stdout.readline().strip() == 'ready'
        out, summary, _ = _run_demo(tmp_path, '--duration', '1', '--no-plots', domain=domain)
        assert foreign.poll() is None, 'the foreign node stopped'
    finally:
        foreign.terminate()
        foreign.wait(10)
    assert summary['model'] == 'iCub' and summary['mode'] == 'biped', summary
    assert summary['fd_error_max'] < FD_BOUND, summary
    counts, _ = _mcap_counts(out / 'kin_dyn_demo.mcap')
    assert counts['/robot_description'] == 1
    assert counts['/joint_states'] == summary['ticks_published']   # none of the foreign ones
    decoded = _decode_first_of_each_topic(out / 'kin_dyn_demo.mcap')
    assert '<robot name="iCub' in decoded['/robot_description'].data
    assert len(decoded['/joint_states'].name) == 32
    assert 'foreign_joint' not in decoded['/joint_states'].name
    fd = decoded[f'{NODE}/forward_dynamics']
    assert len(fd.joint_accelerations) == 32
    assert sorted(fd.joint_names) == sorted(decoded['/joint_states'].name)   # iCub's
    assert all(t.child_frame_id != 'arm' for t in decoded['/tf_static'].transforms)


def test_help_explains_the_options():
    proc = subprocess.run([sys.executable, '-m', 'kin_dyn_ros.demo', '--help'],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for option in ('--duration', '--model', '--feet', '--no-plots', '--output', '--rate',
                   '--namespace'):
        assert option in proc.stdout
    assert 'contains "sole", else "foot", else "ankle"' in proc.stdout
