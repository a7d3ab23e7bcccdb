"""The live demo: drive ``kin_dyn_node`` like a robot driver would, record, check, plot.

:func:`run` does, in order:

1. loads the model (default iCubGazeboV2_5 from the ``icub-models`` package) and its feet
   (:mod:`.robot`, :mod:`.feet`: given, or guessed from the link names), builds the
   :class:`~kin_dyn_ros.demo.motion.Motion` on those feet, and tabulates one period of it at
   the joint-state rate (while the node starts);
2. starts the node as a user would, ``kin_dyn_node --ros-args --params-file
   config/kin_dyn.yaml --params-file <contacts> -p contacts:=[...]``, with its log in
   ``<output>/node.log``. <contacts> is config/icub.yaml for the default model (iCub's soles),
   else ``<output>/contacts.yaml``, written from the model (the feet and their soles'
   corners: :func:`.feet.contacts_yaml`); a model held by its root gets no contact geometry
   and ``equilibrium_rate:=0.0`` (a robot bolted by its root has no stance to check);
3. publishes ``robot_description`` once (reliable, transient_local) and waits until the
   node's /tf_static arrives and every publisher/subscription pair has matched;
4. for ``duration`` seconds, a wall-clock timer publishes every due tick (catching up when
   the timer is late, dropping ticks beyond MAX_BURST): ``odom`` (nav_msgs/Odometry,
   reliable: pose of the root link in ``odom``, twist in the root link frame, REP-105) and
   one ``<contact>/wrench`` per contact (WrenchStamped in the contact frame, sensor-data
   QoS) at the start of the period, then ``joint_states`` (sensor-data QoS, effort = joint
   torques) half a period later, all three with the same node-clock stamp. (The node ticks
   on each JointState with the latest odometry and wrenches it has; publishing them first
   lets it receive them before the JointState that uses them.) The messages are those of a
   tabulated period of the motion, serialized once; only their stamps change;
5. records every topic the node publishes (raw CDR, as received) and the inputs to
   ``<output>/kin_dyn_demo.mcap``;
6. stops the node with SIGINT, then compares the node's outputs with the motion and writes
   the plots and ``<output>/summary.json``.
"""

import importlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ..node.conversions import float_array, matrix_to_pose
from ..node.markers import FORCE_SCALE
from ..process_time import cpu_seconds
from ..node.spinning import spin_until
from .analysis import align, forward_dynamics_figures
from .feet import contacts_yaml
from .motion import Motion, body_twist, wrench_in_frame
from .plots import plot_all
from .recorder import McapRecorder
from .robot import ICUB_FEET, ModelError, load_robot

__all__ = ["Options", "Summary", "run", "default_model", "prepare_robot", "UsageError",
           "NODE_NAME", "OUTPUT_FILES"]

NODE_NAME = "kin_dyn_node"
DEFAULT_MODEL = "iCubGazeboV2_5"
READY_TIMEOUT_S = 120.0  # the node's start: a few seconds, ~30 s more when it compiles the
                         # dynamics kernels (a first start on an empty numba cache; the
                         # set-up compiles them beforehand), more on a busy machine
WAIT_NOTE_S = (5.0, 15.0)  # waiting for the node: a line after 5 s, then every 15 s
DRAIN_S = 0.5          # time left to the node to answer the last ticks
PRIME_S = 0.03         # between the first odometry/wrenches and the first joint state (< the
                       # node's wrench_timeout, 0.1 s)
STOP_TIMEOUT_S = 10.0
MAX_BURST = 2          # ticks published at most per timer call (one missed tick caught up;
                       # a real driver drops what it could not send in time)
CONTACTS_FILE = "contacts.yaml"
# what a run writes into its output folder (an earlier run's are removed first)
OUTPUT_FILES = ("kin_dyn_demo.mcap", "node.log", "summary.json", "series.npz", CONTACTS_FILE,
                "com.png", "momentum.png", "gravity_torques.png", "forward_dynamics.png",
                "latency.png", "balance.png")


class UsageError(ValueError):
    """The options cannot work with this model (``--feet`` that cannot carry the robot);
    python -m kin_dyn_ros.demo reports it as a usage error (exit code 2)."""


@dataclass
class Options:
    duration: float = 10.0
    model: str = None            # URDF path; None = iCubGazeboV2_5 from icub-models
    output: str = "demo_output"
    plots: bool = True
    rate: float = 500.0          # joint states, odometry and wrenches [Hz]
    progress: bool = True
    docs_image: str = None       # also copy the CoM plot here (None: no copy)
    feet: tuple = None           # (left, right) foot links; None = guessed from link names
    namespace: str = None        # ROS namespace of the node and the demo's topics (None: /);
                                 # the recording keeps the names without it


@dataclass
class Summary:
    """Figures of one run (what ``summary.json`` holds)."""

    model: str
    mode: str
    duration_s: float
    rate_hz: float
    ticks_published: int           # joint states published
    ticks_dropped: int             # skipped because the timer fell > MAX_BURST ticks behind
    ticks_answered: int            # ticks with a ~/forward_dynamics output
    ticks_per_second: float        # joint states published per second of the run (wall time)
    answers_per_second: float      # ~/forward_dynamics outputs received per second
    latency_ms: dict               # p50, p95, p99, max: JS published -> ~/forward_dynamics
    ticks_in_sync: int             # answered ticks computed from their own odometry/wrenches
    fd_error_max: float            # max |node FD - motion| over those (joints and base)
    fd_error_joints_max: float     # the same, joints only [rad/s^2]
    fd_error_all_ticks_max: float  # over every answered tick
    fd_undefined_joints: list      # joints without forward dynamics (the node's NaN: no
                                   # inertia moves with them), left out of the errors
    cpu_percent: dict              # CPU use of the demo and of the node while ticking
    message_counts: dict
    files: dict
    feet: list = None              # [left, right] foot links (None: held by the root)
    feet_source: str = ""          # how they were found
    soles: dict = None             # {foot: where its sole outline comes from}
    com_height_m: dict = None      # min, max of the node's ~/com z above the ground (soles)
    balance: dict = None           # ZMP / capture point figures (:func:`_balance_summary`)
    warnings: list = field(default_factory=list)


def default_model():
    """Path of iCubGazeboV2_5's URDF in the installed icub-models package (ModelError when
    the package is missing)."""
    try:
        import icub_models   # noqa: PLC0415 (optional when --model is given)
    except ImportError:
        raise ModelError("the default model needs the icub-models package (pip install "
                         "icub-models); or pass --model PATH") from None
    return str(icub_models.get_model_file(DEFAULT_MODEL))


def prepare_robot(options):
    """The :class:`.robot.Robot` of ``options`` (model and feet); ModelError or FeetError
    with a one-line message."""
    default = options.model is None
    path = default_model() if default else options.model
    # The model's KinDynComputations compiles the dynamics kernels on a first run with an
    # empty numba cache (scripts/setup_env.sh compiles them beforehand): a line if it is long.
    from ..dynamics.compiled import jit_status
    note = threading.Timer(WAIT_NOTE_S[0], _log, ("loading the model: compiling the dynamics "
                                                  "kernels (a first run, ~30 s; numba caches "
                                                  "them for the next runs)",))
    note.daemon = True
    if jit_status().compiled:
        note.start()
    try:
        return load_robot(path, options.feet, default=default)
    finally:
        note.cancel()


def _uses_icub_config(options):
    """config/icub.yaml (iCub's contacts) applies: the default model on its usual feet."""
    return options.model is None and options.feet in (None, ICUB_FEET, list(ICUB_FEET))


def _config_names(options):
    """The parameter files of the run: the robot-neutral defaults, then iCub's contacts
    (config/icub.yaml) when the model is the default iCub on its soles."""
    return ["kin_dyn.yaml"] + (["icub.yaml"] if _uses_icub_config(options) else [])


def _namespaced_params(params, namespace, folder):
    """Copies in ``folder`` of the parameter files whose top-level key ``kin_dyn_node:``
    becomes ``/<namespace>/kin_dyn_node:`` (a file's plain node name only applies to the
    node in the root namespace)."""
    copies = []
    for path in params:   # distinct names (kin_dyn.yaml, icub.yaml, contacts.yaml)
        text = re.sub(rf"^{NODE_NAME}:", f"/{namespace}/{NODE_NAME}:",
                      Path(path).read_text(), flags=re.MULTILINE)
        copies.append(Path(folder) / Path(path).name)
        copies[-1].write_text(text)
    return copies


def _config_files(options):
    """The existing :func:`_config_names` files of the installed package's config folder
    (ament index), else of the source tree's."""
    candidates = []
    try:
        from ament_index_python.packages import get_package_share_directory   # noqa: PLC0415
        candidates.append(Path(get_package_share_directory("kin_dyn_ros")) / "config")
    except Exception:   # not installed in an ament prefix: the source tree is enough
        pass
    candidates.append(Path(__file__).resolve().parents[2] / "config")
    for folder in candidates:
        if (folder / "kin_dyn.yaml").is_file():
            return [folder / n for n in _config_names(options) if (folder / n).is_file()]
    return []


def node_command(contacts, params_files, parameters=(), namespace=None):
    """The command line a user would type to start the node for this demo (``parameters``:
    more ``name:=value`` overrides; ``namespace``: the node's, without the leading '/')."""
    exe = shutil.which("kin_dyn_node")
    cmd = [exe] if exe else [sys.executable, "-m", "kin_dyn_ros.node"]
    cmd += ["--ros-args"]
    if namespace:
        cmd += ["-r", f"__ns:=/{namespace}"]
    for params_file in params_files or ():
        cmd += ["--params-file", str(params_file)]
    # One marker array per tick (the default markers_rate is 30 Hz, enough for rviz): the
    # analysis reads the contact forces the node used from its force arrows.
    cmd += ["-p", f"contacts:=[{', '.join(contacts)}]", "-p", "markers_rate:=100000.0"]
    for parameter in parameters:
        cmd += ["-p", parameter]
    return cmd


# ------------------------------------------------------------------------------ inputs
class _TickTable:
    """The motion tabulated at the publish rate, and its messages serialized once.

    Each tick publishes the CDR bytes of a sample's messages with the stamp written in
    place (:func:`_with_stamp`): no per-tick message building or serialization, so the
    demo leaves the CPU to the node under test.
    """

    def __init__(self, motion, rate, count, messages):
        self.rate = rate
        self.samples = []
        self.payload = []     # per sample: {topic: CDR bytes with a zero stamp}
        for k in range(count):
            x = motion.sample(k / rate)
            self.samples.append(x)
            self.payload.append(messages.serialize(x))

    def __len__(self):
        return len(self.samples)


def _with_stamp(cdr, sec, nanosec):
    """CDR bytes of a message whose first field is a std_msgs/Header, with a new stamp."""
    return cdr[:4] + _STAMP.pack(sec, nanosec) + cdr[12:]


def _stamp_of(cdr):
    """Stamp [ns] of the CDR bytes of a message whose first field is a std_msgs/Header."""
    sec, nanosec = _STAMP.unpack_from(cdr, 4)
    return sec * 1_000_000_000 + nanosec


_STAMP = struct.Struct("<iI")   # builtin_interfaces/Time after the 4-byte encapsulation header


class _InputMessages:
    """The demo's input messages of one sample (the ROS message types, filled in place)."""

    def __init__(self, kd, contacts):
        self.joint_state = JointState(name=kd.joints_name_list)
        self.odom = Odometry()
        self.odom.header.frame_id = "odom"
        self.odom.child_frame_id = kd.model.root_link
        self.wrench = {c: WrenchStamped() for c in contacts}
        for c, msg in self.wrench.items():
            msg.header.frame_id = c

    def serialize(self, x):
        """{topic: CDR bytes} of sample ``x``, stamps zero; '/joint_states' comes last."""
        out = {}
        odom = self.odom
        matrix_to_pose(x.w_H_b, odom.pose.pose)
        t = odom.twist.twist
        (t.linear.x, t.linear.y, t.linear.z,
         t.angular.x, t.angular.y, t.angular.z) = body_twist(x.w_H_b, x.base_velocity).tolist()
        out["/odom"] = serialize_message(odom)
        for contact, msg in self.wrench.items():
            f, tq = msg.wrench.force, msg.wrench.torque
            (f.x, f.y, f.z, tq.x, tq.y, tq.z) = wrench_in_frame(x.contact_poses[contact],
                                                                x.wrenches[contact]).tolist()
            out[f"/{contact}/wrench"] = serialize_message(msg)
        js = self.joint_state
        js.position, js.velocity, js.effort = (float_array(x.s), float_array(x.s_dot),
                                               float_array(x.tau))
        out["/joint_states"] = serialize_message(js)
        if any(cdr[:2] != b"\x00\x01" for cdr in out.values()):
            raise RuntimeError("expected little-endian CDR from rclpy.serialization")
        return out


def _quantiles(values):
    if len(values) == 0:
        return {"p50": float("nan"), "p95": float("nan"), "p99": float("nan"),
                "max": float("nan")}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {"p50": float(p50), "p95": float(p95), "p99": float(p99),
            "max": float(np.max(values))}


# ------------------------------------------------------------------------------ ROS side
class _DemoNode:
    """rclpy node of the demo: publishers, raw recording subscriptions, the tick timer."""

    def __init__(self, table, motion, urdf, recorder, options):
        self.table, self.motion, self.options = table, motion, options
        self.recorder = recorder
        # with a namespace, topics are published and subscribed to under it and recorded
        # without it ("/odom" for "/NS/odom"); /tf, /tf_static, /diagnostics stay absolute
        self.ns = f"/{options.namespace}" if options.namespace else ""
        self.node = Node("kin_dyn_demo", namespace=self.ns or "/")
        self.clock = self.node.get_clock()
        latched = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                             reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        reliable = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                              reliability=ReliabilityPolicy.RELIABLE)
        sensor = qos_profile_sensor_data
        self.description = String(data=urdf)
        self.description_cdr = serialize_message(self.description)
        ns = self.ns
        self.pub_description = self.node.create_publisher(String, f"{ns}/robot_description",
                                                          latched)
        # publishing order of a tick: odometry, wrenches, then the joint state (the trigger)
        self.inputs = [("/odom", self.node.create_publisher(Odometry, f"{ns}/odom", reliable))]
        self.inputs += [(f"/{c}/wrench", self.node.create_publisher(
            WrenchStamped, f"{ns}/{c}/wrench", sensor)) for c in motion.contacts]
        self.inputs += [("/joint_states",
                         self.node.create_publisher(JointState, f"{ns}/joint_states", sensor))]
        types = {"/robot_description": "std_msgs/msg/String",
                 "/joint_states": "sensor_msgs/msg/JointState", "/odom": "nav_msgs/msg/Odometry"}
        types.update({f"/{c}/wrench": "geometry_msgs/msg/WrenchStamped"
                      for c in motion.contacts})
        for topic, type_name in types.items():
            recorder.add_topic(topic, type_name)
        self.own_topics = set(types)   # recorded when published, not subscribed to
        self.subscriptions = {}
        self.types = {}
        self.outputs = {}           # {kind: [(stamp_ns, CDR bytes)]}, decoded after the run
        self.published_ns = {}      # {stamp_ns: perf_counter_ns when the JS was published}
        self.stamp_tick = {}        # {stamp_ns: tick index}
        self.answered = 0
        self.keep_raw = {f"/{NODE_NAME}/markers": [], "/diagnostics": []}   # decoded after
        self.latencies = []         # [ms] JS published -> ~/forward_dynamics received
        self.tf_static = False
        self.next_tick = 0          # ticks whose joint state is published or dropped
        self.sent = 0               # joint states published
        self._next_half = 0
        self._stamp = None
        self.start_ns = self.end_ns = None
        self.timer = None
        self.finished = False
        self.late_ticks = 0

    # -- discovery of the node's outputs ------------------------------------------------------
    def discover(self):
        """Subscribe (raw) to every topic the node publishes that is not yet recorded."""
        try:
            topics = self.node.get_publisher_names_and_types_by_node(NODE_NAME,
                                                                     self.ns or "/")
        except Exception:   # NodeNameNonExistentError until discovery
            return
        for full, types in topics:
            topic = self.local_name(full)
            if (topic in self.subscriptions or topic in self.own_topics or not types
                    or topic == "/parameter_events"):
                continue
            infos = self.node.get_publishers_info_by_topic(full)
            if not infos:
                continue
            qos = infos[0].qos_profile
            profile = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                                       reliability=qos.reliability, durability=qos.durability)
            self.types[topic] = _import_type(types[0])
            self.recorder.add_topic(topic, types[0])
            kind = _DECODED.get(topic[len(NODE_NAME) + 2:]) if topic.startswith(
                f"/{NODE_NAME}/") else None
            self.subscriptions[topic] = self.node.create_subscription(
                self.types[topic], full,
                lambda data, t=topic, k=kind: self._on_raw(t, k, data), profile, raw=True)

    def local_name(self, topic):
        """The recorded name of a topic: without the namespace."""
        if self.ns and topic.startswith(self.ns + "/"):
            return topic[len(self.ns):]
        return topic

    def _on_raw(self, topic, kind, data):
        now = time.perf_counter_ns()
        self.recorder.write(topic, data, time.time_ns())
        if topic == "/tf_static":
            self.tf_static = True
        if topic in self.keep_raw:
            self.keep_raw[topic].append(data)
        if kind is None:
            return
        stamp = _stamp_of(data)
        self.outputs.setdefault(kind, []).append((stamp, data))
        if kind == _LATENCY_KIND:
            sent = self.published_ns.get(stamp)
            if sent is not None:
                self.answered += 1
                self.latencies.append((now - sent) * 1e-6)

    def decoded(self, kind):
        """{stamp_ns: message} of an output kind received during the run."""
        topic = f"/{NODE_NAME}/" + next(k for k, v in _DECODED.items() if v == kind)
        msg_type = self.types.get(topic)
        return {stamp: deserialize_message(data, msg_type)
                for stamp, data in self.outputs.get(kind, [])}

    def decoded_raw(self, topic):
        """Messages of a topic kept whole (``keep_raw``), decoded."""
        msg_type = self.types.get(topic)
        return [deserialize_message(data, msg_type) for data in self.keep_raw.get(topic, [])]

    def matched(self):
        """True when the node subscribes to all our inputs and we to its main outputs."""
        if any(pub.get_subscription_count() == 0 for _, pub in self.inputs):
            return False
        wanted = ["/tf", "/tf_static"] + [f"/{NODE_NAME}/{n}" for n in _REQUIRED]
        return all(t in self.subscriptions and self.subscriptions[t].get_publisher_count() > 0
                   for t in wanted)

    # -- publishing -------------------------------------------------------------------------
    def publish_description(self):
        self.pub_description.publish(self.description)
        self.recorder.write("/robot_description", self.description_cdr)

    def prime(self):
        """Publish the first sample's odometry and wrenches (stamped now), so that the node
        has them before the first JointState, as with a robot whose estimator already runs."""
        payload = self.table.payload[0]
        sec, nanosec = self.clock.now().seconds_nanoseconds()
        for topic, pub in self.inputs:
            if topic != "/joint_states":
                cdr = _with_stamp(payload[topic], sec, nanosec)
                pub.publish(cdr)
                self.recorder.write(topic, cdr)

    def start(self):
        # two half-steps per tick: odometry and wrenches at the start of the period, the
        # joint state (the node's trigger) half a period later, with the same stamp
        self.timer = self.node.create_timer(0.5 / self.table.rate, self._on_timer)

    def total_ticks(self):
        return int(round(self.options.duration * self.table.rate))

    def _on_timer(self):
        if self.start_ns is None:   # the clock of the run starts at the first call
            self.start_ns = time.perf_counter_ns()
        elapsed = (time.perf_counter_ns() - self.start_ns) * 1e-9
        due = min(int(elapsed * 2 * self.table.rate) + 1, 2 * self.total_ticks())
        if due - self._next_half > 2 * MAX_BURST:   # far behind: drop ticks, as a driver would
            resume = due - 2 * MAX_BURST
            resume += resume % 2                    # at a tick's start (its inputs first)
            self.late_ticks += resume // 2 - self._next_half // 2   # joint states skipped
            self._next_half = resume
        while self._next_half < due:
            k, phase = divmod(self._next_half, 2)
            if phase == 0:
                self._publish_inputs(k)
            else:
                self._publish_joint_state(k)
                self.next_tick = k + 1
            self._next_half += 1
        if self._next_half >= 2 * self.total_ticks():
            self.stop()

    def stop(self):
        """End the run now (after the last complete tick)."""
        if self.timer is not None:
            self.timer.cancel()
        self.end_ns = time.perf_counter_ns()
        self.start_ns = self.start_ns or self.end_ns
        self.finished = True

    def _publish_inputs(self, k):
        """Odometry and wrenches of tick k, stamped now (the tick's stamp)."""
        payload = self.table.payload[k % len(self.table)]
        sec, nanosec = self.clock.now().seconds_nanoseconds()
        self._stamp = (k, sec, nanosec)
        wall = time.time_ns()
        for topic, pub in self.inputs[:-1]:
            cdr = _with_stamp(payload[topic], sec, nanosec)
            pub.publish(cdr)
            self.recorder.write(topic, cdr, wall)

    def _publish_joint_state(self, k):
        """The joint state of tick k, with the stamp of its odometry and wrenches."""
        tick, sec, nanosec = self._stamp
        assert tick == k, (tick, k)
        topic, pub = self.inputs[-1]
        cdr = _with_stamp(self.table.payload[k % len(self.table)][topic], sec, nanosec)
        stamp_ns = sec * 1_000_000_000 + nanosec
        self.stamp_tick[stamp_ns] = k
        self.published_ns[stamp_ns] = time.perf_counter_ns()
        pub.publish(cdr)
        self.sent += 1
        self.recorder.write(topic, cdr, time.time_ns())


# node outputs kept for the analysis: {topic name under ~/: kind}
_DECODED = {"com": "com", "centroidal_momentum": "momentum", "gravity_torques": "gravity",
            "forward_dynamics": "forward_dynamics", "equilibrium_torques": "equilibrium",
            "zmp": "zmp", "capture_point": "capture_point", "cop": "cop",
            "support_polygon": "support_polygon", "stability_margin": "stability_margin"}
# recorded from the first tick on (the node creates all these publishers at start-up; the
# balance ones publish while a contact is loaded, the last two at its equilibrium_rate)
_REQUIRED = ("com", "centroidal_momentum", "gravity_torques", "forward_dynamics",   # per tick
             "zmp", "capture_point", "cop", "support_polygon", "stability_margin")
_LATENCY_KIND = "forward_dynamics"


def _import_type(type_name):
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


# ------------------------------------------------------------------------------ progress
class _Progress:
    """One updating status line on a terminal (a plain line every 2 s otherwise): what was
    really sent (JointStates published per second, ticks dropped by a late timer) and what
    came back (the node's ~/forward_dynamics outputs received per second)."""

    def __init__(self, demo, enabled):
        self.demo, self.enabled = demo, enabled
        self.tty = sys.stderr.isatty()
        self.last_print = time.monotonic()   # the first line after one interval: a rate
        self.last = (self.last_print, 0, 0)

    def line(self, now):
        d = self.demo
        t0, sent0, answers0 = self.last
        dt = max(now - t0, 1e-9)
        sent_rate = (d.sent - sent0) / dt
        answer_rate = (d.answered - answers0) / dt
        self.last = (now, d.sent, d.answered)
        recent = d.latencies[-500:]
        lat = (f"latency p50 {np.percentile(recent, 50):5.2f} ms  p95 "
               f"{np.percentile(recent, 95):5.2f} ms") if recent else "latency -"
        elapsed = d.next_tick / d.table.rate
        dropped = f" | {d.late_ticks} dropped" if d.late_ticks else ""
        return (f"[{elapsed:5.1f}/{d.options.duration:.1f} s] sent {sent_rate:4.0f} joint "
                f"states/s | node answered {answer_rate:4.0f}/s{dropped} | {lat}")

    def update(self, force=False):
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last_print < (0.25 if self.tty else 2.0):
            return
        self.last_print = now
        line = self.line(now)
        if self.tty:
            sys.stderr.write("\r" + line.ljust(110))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def done(self):
        if self.enabled and self.tty:
            self.update(force=True)
            sys.stderr.write("\n")


class _Waiting:
    """While the demo waits for the node to be ready: after WAIT_NOTE_S[0] a line saying so
    with the node's last log line (e.g. that it compiles the dynamics kernels, ~30 s on a first
    start with an empty numba cache), then one every WAIT_NOTE_S[1]."""

    def __init__(self, log_path):
        self.log_path = log_path
        self.start = time.monotonic()
        self.next = self.start + WAIT_NOTE_S[0]

    def update(self):
        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + WAIT_NOTE_S[1]
        last = _tail(self.log_path, 1).strip()
        _log(f"waiting for the node to be ready ({now - self.start:.0f} s of at most "
             f"{READY_TIMEOUT_S:.0f} s)" + (f"; its log: {last}" if last else ""))


# ------------------------------------------------------------------------------ the run
def _log(message):
    print(f"[demo] {message}", flush=True)


def _ros_environment():
    """The network rule: loopback-only DDS, a domain of our own unless one is set."""
    from ..loopback import set_loopback_environment   # the variables $ROS_DISTRO reads
    set_loopback_environment(keep=True)
    if not os.environ.get("ROS_DOMAIN_ID"):
        os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)


def _stop(process, log_file):
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(5.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    log_file.close()
    return process.returncode


def _tail(path, lines=20):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _clear_earlier_run(out):
    """Remove an earlier run's files (:data:`OUTPUT_FILES`) from ``out``, saying so in one
    line, so that the folder holds this run only."""
    earlier = [name for name in OUTPUT_FILES if (out / name).is_file()]
    if earlier:
        _log(f"overwriting the earlier run in {out}/: {', '.join(earlier)}")
        for name in earlier:
            (out / name).unlink()
    return earlier


def _motion(robot, options, warnings):
    """The Motion of the robot on its feet (fixed base without feet). UsageError when feet
    given with --feet cannot carry the robot; a warning when guessed ones cannot."""
    heights = {f: sole.height for f, sole in robot.soles.items()}
    motion = Motion(robot.kd, feet=robot.feet, sole_heights=heights)
    if robot.feet is not None and motion.mode != "biped":
        if options.feet is not None:
            raise UsageError(f"--feet {' '.join(robot.feet)}: {motion.reason}")
        warnings.append(f"the feet {', '.join(robot.feet)} ({robot.feet_source}) cannot carry "
                        f"the robot ({motion.reason}): it is held by its root instead; name "
                        "the feet with --feet LEFT RIGHT")
    return motion


def _node_parameters(options, out, robot, motion):
    """(parameter files, -p overrides, contacts file or None) of the node for this run."""
    if motion.mode != "biped":
        neutral = [p for p in _config_files(options) if p.name == "kin_dyn.yaml"]
        return neutral, ["equilibrium_rate:=0.0"], None
    params = _config_files(options)
    if _uses_icub_config(options) and any(p.name == "icub.yaml" for p in params):
        return params, [], None
    contacts = out / CONTACTS_FILE
    contacts.write_text(contacts_yaml([robot.soles[f] for f in motion.contacts], robot.name))
    return params + [contacts], [], contacts


def run(options, robot=None):
    """Run the demo with :class:`Options` (``robot``: its :func:`prepare_robot`, made here
    when not given); returns a :class:`Summary`. RuntimeError when the node does not come
    up; ModelError, FeetError or UsageError (ValueErrors, one line) for a model or feet
    that cannot work."""
    robot = prepare_robot(options) if robot is None else robot
    warnings = []
    motion = _motion(robot, options, warnings)
    _ros_environment()
    out = Path(options.output)
    out.mkdir(parents=True, exist_ok=True)
    _clear_earlier_run(out)
    kd, model_name = robot.kd, robot.name
    if motion.mode == "biped":
        how = (f"squat and sway on {', '.join(motion.contacts)} ({robot.feet_source}; soles: "
               + "; ".join(f"{f}: {robot.soles[f].source}" for f in motion.contacts) + ")")
    else:
        how = f"held by its root link {motion.contacts[0]} ({robot.note or motion.reason})"
    _log(f"model {model_name} ({robot.path}): {kd.NDoF} joints, {kd.get_total_mass():.2f} kg; "
         f"motion: {how}")

    params, overrides, contacts_file = _node_parameters(options, out, robot, motion)
    scratch = tempfile.TemporaryDirectory(prefix="kin_dyn_demo_") if options.namespace \
        else None
    if scratch is not None:
        params = _namespaced_params(params, options.namespace, scratch.name)
    cmd = node_command(motion.contacts, params, overrides, options.namespace)
    _log("starting the node: " + " ".join(cmd))
    log_path = out / "node.log"
    log_file = open(log_path, "w")
    process = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT,
                               env=dict(os.environ, RCUTILS_COLORIZED_OUTPUT="0"))
    warnings += [f"config/{name} not found: node started without it"
                 for name in _config_names(options) if name not in {p.name for p in params}]
    try:
        t0 = time.perf_counter()
        ticks_total = int(round(options.duration * options.rate))
        count = max(1, min(ticks_total, int(round(motion.period * options.rate))))
        table = _TickTable(motion, options.rate, count, _InputMessages(kd, motion.contacts))
        _log(f"motion tabulated: {count} samples at {options.rate:g} Hz in "
             f"{time.perf_counter() - t0:.1f} s")
        summary = _run_ros(options, out, motion, table, robot.urdf, process, log_path,
                           warnings, model_name, cmd)
    except ExternalShutdownException:   # Ctrl-C while spinning
        raise KeyboardInterrupt from None
    finally:
        code = _stop(process, log_file)
        if scratch is not None:
            scratch.cleanup()
    if code not in (0, -signal.SIGINT):
        warnings.append(f"the node exited with code {code} (see {log_path})")
    result = _finish(options, out, motion, table, summary, robot, warnings)
    if contacts_file is not None:
        result.files["contacts"] = str(contacts_file)
        _write_summary(out, result)
    return result


def _run_ros(options, out, motion, table, urdf, process, log_path, warnings, model_name,
             cmd):
    # Ctrl-C raises KeyboardInterrupt here (not rclpy's handler, which would invalidate the
    # context under the timer): the run stops early and what was recorded is analysed.
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    recorder = McapRecorder(out / "kin_dyn_demo.mcap")
    recorder.add_metadata("kin_dyn_demo", {
        "model": model_name, "mode": motion.mode, "contacts": ",".join(motion.contacts),
        "rate_hz": options.rate, "duration_s": options.duration,
        "node_command": " ".join(cmd)})
    demo = None
    executor = SingleThreadedExecutor()
    try:
        demo = _DemoNode(table, motion, urdf, recorder, options)
        executor.add_node(demo.node)
        demo.publish_description()

        def alive():
            if process.poll() is not None:
                raise RuntimeError(f"the node exited with code {process.returncode}:\n"
                                   + _tail(log_path))
            return True

        waiting = _Waiting(log_path)

        def on_tick():
            demo.discover()
            waiting.update()

        ready = spin_until(executor, lambda: alive() and demo.tf_static and demo.matched(),
                           READY_TIMEOUT_S, on_tick=on_tick, step_s=0.01)
        if not ready:
            raise RuntimeError(f"the node was not ready after {READY_TIMEOUT_S:.0f} s "
                               f"(/tf_static received: {demo.tf_static}, topics: "
                               f"{sorted(demo.subscriptions)}):\n" + _tail(log_path))
        _log(f"node ready; recording {len(demo.subscriptions)} output topics; running for "
             f"{options.duration:g} s")
        demo.prime()
        spin_until(executor, lambda: False, PRIME_S, step_s=0.01)
        progress = _Progress(demo, options.progress)
        cpu0 = (cpu_seconds(), cpu_seconds(process.pid), time.perf_counter())
        demo.start()
        try:
            while not demo.finished:
                alive()
                executor.spin_once(timeout_sec=0.05)
                progress.update()
        except KeyboardInterrupt:
            demo.stop()
            warnings.append(f"interrupted after {demo.next_tick} ticks "
                            f"({demo.next_tick / options.rate:.1f} s)")
        elapsed = time.perf_counter() - cpu0[2]
        cpu = {"demo": 100 * (cpu_seconds() - cpu0[0]) / elapsed,
               "node": 100 * (cpu_seconds(process.pid) - cpu0[1]) / elapsed}
        drain_end = time.monotonic() + DRAIN_S
        while time.monotonic() < drain_end:
            executor.spin_once(timeout_sec=0.01)
        progress.done()
        wall = (demo.end_ns - demo.start_ns) * 1e-9
        return {"demo": demo, "wall": wall, "recorder": recorder, "cpu": cpu}
    finally:
        if demo is not None:
            executor.remove_node(demo.node)
            demo.node.destroy_node()
        executor.shutdown()
        recorder.close()
        rclpy.try_shutdown()


def equilibrium_report(diagnostics):
    """The last "equilibrium torques" value of the node's tick status in ``diagnostics``
    (DiagnosticArray messages; "" without one)."""
    for msg in reversed(diagnostics):
        for status in msg.status:
            if status.name == f"{NODE_NAME}: tick":
                values = {kv.key: kv.value for kv in status.values}
                if "equilibrium torques" in values:
                    return values["equilibrium torques"]
    return ""


def _finish(options, out, motion, table, ros, robot, warnings):
    demo, recorder = ros["demo"], ros["recorder"]
    model_name = robot.name
    series = align(motion, table.samples, table.rate, demo.stamp_tick,
                   {kind: demo.decoded(kind) for kind in _DECODED.values()},
                   demo.decoded_raw(f"/{NODE_NAME}/markers"),
                   urdf=demo.description.data, latencies=demo.latencies, title=model_name,
                   force_scale=FORCE_SCALE, soles=robot.soles or None)
    series.equilibrium_report = equilibrium_report(demo.decoded_raw("/diagnostics"))
    if not len(series.eq_t) and not series.equilibrium_report.startswith("off"):
        warnings.append(f"no ~/equilibrium_torques received; the node's /diagnostics: "
                        f"{series.equilibrium_report or 'none received'}")
    fd_figures, fd_warnings = forward_dynamics_figures(series)
    warnings += fd_warnings
    files = {"mcap": str(out / "kin_dyn_demo.mcap"), "node_log": str(out / "node.log")}
    if options.plots:
        figures = plot_all(series, out)
        files.update({name: str(p) for name, p in figures.items()})
        if options.docs_image:
            Path(options.docs_image).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(figures["com"], options.docs_image)
            files["docs_image"] = str(options.docs_image)
    if demo.late_ticks:
        warnings.append(f"{demo.late_ticks} ticks dropped: the publishing timer fell more than "
                        f"{MAX_BURST} ticks behind")
    busy = busy_warning(ros["cpu"].get("demo", 0.0), options.rate)
    if busy:
        warnings.append(busy)
    wall = max(ros["wall"], 1e-9)
    height = series.com[:, 2][np.isfinite(series.com[:, 2])]
    summary = Summary(
        model=model_name, mode=motion.mode, duration_s=options.duration, rate_hz=options.rate,
        ticks_published=demo.sent, ticks_dropped=demo.late_ticks,
        ticks_answered=demo.answered,
        ticks_per_second=demo.sent / wall, answers_per_second=demo.answered / wall,
        latency_ms=_quantiles(np.array(demo.latencies)), **fd_figures,
        cpu_percent={k: round(v, 1) for k, v in ros["cpu"].items()},
        message_counts=dict(sorted(recorder.counts.items())), files=files,
        feet=list(motion.contacts) if motion.mode == "biped" else None,
        feet_source=robot.feet_source if motion.mode == "biped" else "",
        soles={f: robot.soles[f].source for f in motion.contacts} if motion.mode == "biped"
        else None,
        com_height_m={"min": float(height.min()), "max": float(height.max())} if len(height)
        else None,
        balance=_balance_summary(series, warnings) if motion.mode == "biped" else None,
        warnings=warnings)
    files["summary"] = str(out / "summary.json")
    _write_summary(out, summary)
    np.savez_compressed(out / "series.npz", **{k: v for k, v in asdict(series).items()
                                               if isinstance(v, np.ndarray)})
    return summary


DEMO_BUSY_PERCENT = 90.0  # [% of a core] the demo's own process at or above this: it lags


def busy_warning(demo_cpu_percent, rate_hz):
    """The warning when the demo's own process (one Python executor publishing the inputs
    and recording every output) used at least DEMO_BUSY_PERCENT of a core over the run,
    else "": the node's outputs then wait in its queue, and the latencies it reports
    (JointState published -> output taken by the demo) include that wait."""
    if not demo_cpu_percent >= DEMO_BUSY_PERCENT:
        return ""
    return (f"the demo's own process used {demo_cpu_percent:.0f} % of a core (publishing and "
            f"recording at {rate_hz:g} Hz): the node's outputs waited in its queue, and the "
            f"latencies above include that wait; --rate {rate_hz / 2:g} halves its load")


ZMP_TOLERANCE = 1e-6      # [m] node ~/zmp against the motion's ZMP, ticks in sync
MIN_ZMP_INSIDE = 0.9      # share of the ticks whose ZMP is inside the support polygon


def _finite_min(values):
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return float(values.min()) if len(values) else None


def _balance_summary(series, warnings):
    """Figures of the balance outputs (summary.json ``balance``), with warnings when the
    node's ZMP is not the motion's or lies outside the support polygon too often."""
    sync = np.asarray(series.in_sync, dtype=bool)
    zmp_ok = np.isfinite(series.zmp[:, :2]).all(axis=1)
    err = np.linalg.norm(series.zmp[:, :2] - series.motion_zmp, axis=1)[sync & zmp_ok]
    err = err[np.isfinite(err)]
    margins = series.tick_margins
    known = np.isfinite(margins[:, 1])
    inside = float((margins[known, 1] >= 0.0).mean()) if known.any() else None
    out = {
        "ticks_with_zmp": int(zmp_ok.sum()),
        "ticks_with_capture_point": int(np.isfinite(series.capture_point[:, :2]).all(
            axis=1).sum()),
        "zmp_error_max_m": float(err.max()) if len(err) else None,
        "zmp_inside_share": inside,
        "margin_min_m": {name: _finite_min(margins[:, j]) for j, name in enumerate(
            ("com", "zmp", "capture_point"))},
        "stability_margin_messages": int(len(series.margin_t)),
        "stability_margin_min_m": {name: _finite_min(series.stability_margins[:, j])
                                   for j, name in enumerate(("com", "zmp", "capture_point"))},
    }
    if not zmp_ok.any():
        warnings.append("no ~/zmp received from the node")
    if len(err) and err.max() > ZMP_TOLERANCE:
        warnings.append(f"the node's ~/zmp differs from the motion's ZMP by up to "
                        f"{err.max():.2e} m on ticks computed from their own inputs")
    if inside is not None and inside < MIN_ZMP_INSIDE:
        warnings.append(f"the ZMP is inside the support polygon on only {100 * inside:.0f} % "
                        f"of the ticks (min margin {out['margin_min_m']['zmp']:.3f} m)")
    return out


def _write_summary(out, summary):
    (out / "summary.json").write_text(json.dumps(asdict(summary), indent=2) + "\n")
