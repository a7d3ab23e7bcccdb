"""``kin_dyn_node``: floating-base kinematics and dynamics of a robot, published every tick.

A thin layer over :class:`kin_dyn_ros.dynamics.KinDynComputations`: messages to arrays,
one ``kd.compute_tick`` per tick, arrays to messages. Bad input (ValueError from the
conversions or the core) is logged throttled and dropped; it never stops the node nor
changes its state.

Inputs: ``robot_description`` (parameter, else topic: reliable, transient_local), ``joint_states``
(merged by name, SensorDataQoS, QoS overridable), nav_msgs/Odometry on ``odometry_topic``
(the child frame may be any link), a geometry_msgs/WrenchStamped per contact; these sensor
messages are taken as bytes and read by :mod:`.cdr`.
Outputs, stamped with the JointState's stamp: /tf, /tf_static, ~/com, ~/centroidal_momentum
(TwistStamped: linear = m v_com, angular = angular momentum about the CoM, world axes),
~/gravity_torques, ~/forward_dynamics, ~/markers, /diagnostics; services ~/get_jacobian,
~/get_mass_matrix, ~/get_dynamics (:mod:`.services`). Parameters: :mod:`.settings`.
Contact mechanics (:mod:`.contact_mechanics`): ~/support_polygon, ~/stability_margin,
~/equilibrium_torques, support markers on ~/markers, service ~/check_equilibrium.

Choices where the requirements are open:
- A tick whose JointState stamp equals the last one is skipped entirely (also in timer
  mode: no new JointState, no tick); a stamp going backwards is logged and accepted (reset).
  An unstamped (zero) JointState or WrenchStamped gets the node clock's time on arrival.
- Until the first odometry the base is at ``fixed_base_pose`` and world -> base is not on
  /tf; with ``use_odometry: false`` it is published at ``fixed_base_pose``.
- Odometry must be in ``world_frame`` (or have an empty frame_id); wrench age is the tick's
  stamp minus the wrench's stamp.
- Forward dynamics runs only when the latest JointState of every (non-mimic) joint carried
  an effort; otherwise it is skipped with a throttled note (and in /diagnostics). Where it
  is undefined (a massless subtree on a moving joint makes the mass matrix singular) it is
  skipped with a throttled warning naming the joints, and every other output goes on.
"""

import functools
import gc
import inspect
import os
import threading
import time
from collections import deque
from dataclasses import dataclass

# The core's matrices are small (6 + n <= ~100): multi-threaded BLAS only adds latency and
# jitter. Must be set before NumPy loads its BLAS; an explicit user setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import rclpy
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rcl_interfaces.srv import SetParameters, SetParametersAtomically
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from geometry_msgs.msg import WrenchStamped
from tf2_msgs.msg import TFMessage

from .cdr import InputReader
from .contact_mechanics import ContactMechanics
from .conversions import (JointStateMerger, base_state_from_odometry,
                          change_base_representation, finite_array, ns_to_stamp,
                          pose_list_to_matrix, stamp_to_ns)
from .diagnostics import InputsReport, TickStats, build_diagnostics
from ..dynamics import KinDynComputations, Representations
from .markers import MarkerSet
from .outputs import (LATCHED_QOS, NO_SUBSCRIPTION_EVENTS, Publishers, TickMessages,
                      static_transforms)
from .sensor_thread import SensorThread
from .spinning import spin_until_shutdown
from .services import DynamicsServices, MeasuredState
from .settings import MODEL_FIELDS, declare_settings, updated_settings
from .throttle import ThrottledLogger

__all__ = ["KinDynNode", "main"]

THROTTLE_S = 5.0
BODY = Representations.BODY_FIXED_REPRESENTATION
INPUT_BUFFER = 32   # odometry and wrench messages kept to match a JointState's stamp


def _matching(buffer, stamp_ns):
    """The input with the tick's stamp, else the newest one not newer than it, else the
    oldest one (every buffered input is newer); None for an empty buffer."""
    if not buffer:
        return None
    for entry in reversed(buffer):
        if entry.stamp_ns <= stamp_ns:
            return entry
    return buffer[0]


@dataclass
class _Model:
    """A loaded model: the tick's and the services' KinDynComputations, the merged joint
    states, its messages and the contacts that are links of it."""

    urdf: str
    kd: KinDynComputations
    aux: KinDynComputations
    merger: JointStateMerger
    messages: TickMessages = None
    contacts: tuple = ()
    complete: bool = False     # every joint received at least once


@dataclass(frozen=True)
class _ParameterChange:
    """Parameters to set, checked against ``old`` settings and ``model``: the ``new``
    settings (None: rejected with ``error``) and, when they rebuild the model, its
    description ``urdf`` and the :meth:`KinDynNode._try_parse` of it (``parsed``)."""

    old: object
    model: object
    new: object
    error: str = ""
    urdf: str = ""
    parsed: tuple = None


@dataclass(frozen=True)
class _Timed:
    """A validated input: odometry (frame = child link, value = (w_H_c, twist)) or a
    wrench (frame = expressed-in frame, value = (6,)); stamp and arrival in ns."""

    frame: str
    value: object
    stamp_ns: int
    received_ns: int


class KinDynNode(Node):
    """The node; ``kwargs`` go to rclpy's Node (context, parameter_overrides, namespace).

    Threads: with ``sensor_thread`` (the default) the sensor subscriptions (joint_states,
    odometry, wrenches) run on the node's :class:`.sensor_thread.SensorThread`, everything
    else on the executor that spins the node. Every callback of the node (its own and
    rclpy's parameter services; see :meth:`create_subscription`) and the set-parameters
    callback run under one lock, so they never overlap; robot_description's and the
    set-parameters callback parse a new model before taking the lock (see
    :meth:`_on_description`, :meth:`_on_set_parameters`).

    Raises ValueError when a parameter is invalid.
    """

    def __init__(self, **kwargs):
        self._lock = threading.RLock()    # before Node's own services are made
        super().__init__("kin_dyn_node", **kwargs)
        self._settings = declare_settings(self)
        self._sensors = SensorThread(
            self, self._on_sensor_error, on_idle=self._serialized(self._run_deferred)) \
            if self._settings.sensor_thread else None
        # the deferred steps of a tick, and of the newest tick after it (see _run_deferred)
        self._deferred = self._next_deferred = None
        self._model = self._measured = self._odometry = self._js_stamp = None
        self._js_received_ns = self._last_stamp_ns = None
        self._wrenches, self._stale = {}, set()    # latest per contact (diagnostics)
        self._odom_buffer, self._wrench_buffers = deque(maxlen=INPUT_BUFFER), {}
        self._reader = InputReader()     # the sensor messages come as bytes (raw=True)
        self._markers_ns = None
        self._fd_note = "no tick yet"
        self._static = {}
        self._stats = TickStats()
        self._tick_timer = self._diag_timer = None
        self._pub = Publishers(self)
        self._mechanics = ContactMechanics(self, self._service_source)
        self._log = ThrottledLogger(self.get_logger(), THROTTLE_S)
        self._configure(self._settings)
        self._make_subscriptions()
        self._dyn_services = DynamicsServices(self, self._service_source)
        self._make_timers()
        # not serialised: the callback takes the lock itself, after parsing
        self.add_on_set_parameters_callback(self._on_set_parameters)
        if self._settings.robot_description:
            error = self._load_model(self._settings.robot_description, self._settings, True)
            if error:
                self.destroy_node()     # its sensor thread and entities: nothing left behind
                raise ValueError(f"parameter 'robot_description': {error}")

    # -- callbacks: one at a time ----------------------------------------------------------
    def _serialized(self, callback):
        """``callback`` run under the node's lock (None stays None); same signature."""
        if callback is None:
            return None
        lock = self._lock

        @functools.wraps(callback)
        def locked(*args):
            with lock:
                return callback(*args)
        return locked

    def create_subscription(self, msg_type, topic, callback, *args, **kwargs):
        """rclpy's, with the callback serialised (:meth:`_serialized`)."""
        return super().create_subscription(msg_type, topic, self._serialized(callback),
                                           *args, **kwargs)

    def create_service(self, srv_type, srv_name, callback, *args, **kwargs):
        """rclpy's, with the callback serialised (also rclpy's parameter services), except
        rclpy's set-parameters services: they run :meth:`_on_set_parameters`, which takes
        the lock itself after parsing a new model."""
        if srv_type not in (SetParameters, SetParametersAtomically):
            callback = self._serialized(callback)
        return super().create_service(srv_type, srv_name, callback, *args, **kwargs)

    def create_timer(self, timer_period_sec, callback, *args, **kwargs):
        """rclpy's, with the callback serialised."""
        return super().create_timer(timer_period_sec, self._serialized(callback),
                                    *args, **kwargs)

    # -- set-up ----------------------------------------------------------------------------
    def _make_subscriptions(self):
        s = self._settings
        # not serialised: the callback takes the lock itself, after parsing
        Node.create_subscription(self, String, "robot_description", self._on_description,
                                 LATCHED_QOS)
        group = None if self._sensors is None else self._sensors.group

        def sensor(msg_type, topic, callback):
            self.create_subscription(
                msg_type, topic, callback, qos_profile_sensor_data, callback_group=group,
                qos_overriding_options=QoSOverridingOptions.with_default_policies(),
                event_callbacks=NO_SUBSCRIPTION_EVENTS, raw=True)    # read by .cdr
        # Odometry and wrenches first: when messages of one instant wait together, they
        # are then taken before the JointState that triggers the tick.
        if s.use_odometry:
            sensor(Odometry, s.odometry_topic, self._on_odometry)
        for contact, topic in s.contact_topics:
            sensor(WrenchStamped, topic, lambda msg, c=contact: self._on_wrench(c, msg))
        sensor(JointState, "joint_states", self._on_joint_state)
        if self._sensors is not None:
            self._sensors.start()

    def _on_sensor_error(self, sub, exc):
        """A callback's unexpected exception on the sensor thread (its input goes on), the
        deferred work's ("idle"), or the thread's end when waiting failed (inputs stop:
        logged once)."""
        if sub is None:
            self.get_logger().error(f"sensor thread stopped ({exc!r}): joint_states, "
                                    f"odometry and wrenches are no longer read")
        elif sub == "idle":
            self._log.error("deferred", f"contact mechanics skipped: {exc!r}")
        else:
            self._log.error(f"sensor {sub.topic_name}",
                            f"message on '{sub.topic_name}' dropped: {exc!r}")

    def _make_timers(self):
        for timer in (self._tick_timer, self._diag_timer):
            if timer is not None:
                self.destroy_timer(timer)
        s = self._settings
        self._tick_timer = self.create_timer(1.0 / s.rate, self._tick) if s.rate > 0 else None
        self._diag_timer = self.create_timer(s.diagnostics_period, self._publish_diagnostics)

    @staticmethod
    def _parse(urdf, settings):
        """KinDynComputations of ``urdf`` with ``settings``' base frame and gravity; raises
        what the parser raises."""
        return KinDynComputations(urdf, root_link=settings.base_frame or None,
                                  gravity=np.array(settings.gravity))

    def _try_parse(self, urdf, settings):
        """(KinDynComputations, None) of :meth:`_parse`, or (None, the exception)."""
        try:
            return self._parse(urdf, settings), None
        except Exception as exc:  # a description that fails to parse: any parser error
            return None, exc

    def _load_model(self, urdf, settings, from_parameter=False, parsed=None):
        """Build the model from ``urdf`` (``parsed``: :meth:`_try_parse` of it with
        ``settings``, already done) and take it; returns None, or the error (old model kept).
        A description from the parameter is re-published on the robot_description topic."""
        kd, exc = parsed or self._try_parse(urdf, settings)
        if exc is not None:
            name = self._model.kd.model.name if self._model else "none"
            error = f"rejected robot_description ({exc}); keeping the current model ({name})"
            self.get_logger().error(error)
            return error
        aux = kd.sharing_model()     # the services' and odometry's own representation
        merger = JointStateMerger(kd.joints_name_list, kd.mimic_joints,
                                  settings.default_joint_position)
        if self._model is not None:
            merger.carry_over(self._model.merger)
        self._model = _Model(urdf, kd, aux, merger)
        self._configure(settings, reloaded=True)
        if from_parameter:
            self._pub.description.publish(String(data=urdf))
        self.get_logger().info(
            f"loaded model '{kd.model.name}': {kd.NDoF} joints, {len(kd.frame_names)} frames, "
            f"base '{kd.model.root_link}', {kd.get_total_mass():.3f} kg")
        for note in kd.model_notes:
            self.get_logger().warning(f"robot_description: {note}")
        return None

    def _configure(self, settings, reloaded=False):
        """Apply ``settings`` to the current model: messages, /tf_static, contacts. A tick's
        deferred contact mechanics still pending run first, under the settings of that tick
        (dropped when the model was replaced)."""
        if reloaded:
            self._deferred = self._next_deferred = None
        else:
            self._finish_deferred()
        self._settings, m = settings, self._model
        self._fixed_base, self._root_base = settings.base_pose, (None, None)
        if m is None:
            return
        m.kd.set_frame_velocity_representation(settings.representation)
        m.merger.set_default_position(settings.default_joint_position)
        m.messages = TickMessages(m.kd, settings)
        clash = self._world_clash_note()
        if clash:
            self.get_logger().error(clash)
        m.contacts = tuple(c for c in settings.contacts if c in m.kd.model.frame_index)
        for c in set(settings.contacts) - set(m.contacts):
            self.get_logger().error(f"contact '{c}' is not a link of the model: ignored")
        self._mechanics.configure(m.kd, m.contacts, settings, m.urdf)
        if reloaded:   # inputs naming frames the new model lacks are dropped
            self._measured, frames = None, m.kd.model.frame_index
            if self._odometry is not None and self._odometry.frame not in frames:
                self._odometry = None
            self._odom_buffer = deque((o for o in self._odom_buffer if o.frame in frames),
                                      maxlen=INPUT_BUFFER)
            self._wrenches = {c: w for c, w in self._wrenches.items() if w.frame in frames}
            self._wrench_buffers = {
                c: deque((w for w in b if w.frame in frames), maxlen=INPUT_BUFFER)
                for c, b in self._wrench_buffers.items()}
        stamp = self.get_clock().now().to_msg()
        if settings.publish_tf:
            self._static = static_transforms(m.kd, settings.frame_prefix, stamp)
            self._pub.tf_static.publish(TFMessage(transforms=list(self._static.values())))
        if reloaded and settings.publish_markers:
            self._pub.markers.publish(MarkerSet.delete_all(stamp, settings.world_frame))

    # -- inputs ----------------------------------------------------------------------------
    def _on_description(self, msg):
        """A description from the topic: parsed outside the node's lock (~0.1 s for a
        humanoid, during which the sensor thread goes on ticking with the current model),
        then taken (or its error reported) under it; parsed again under the lock only when
        the settings changed meanwhile."""
        settings, model, parsed = self._settings, self._model, None
        if not settings.robot_description and (model is None or msg.data != model.urdf):
            parsed = self._try_parse(msg.data, settings)
        with self._lock:
            if self._settings.robot_description:
                self.get_logger().info("robot_description topic ignored: the parameter is set",
                                       once=True)
            elif self._model is None or msg.data != self._model.urdf:
                self._load_model(msg.data, self._settings,
                                 parsed=parsed if self._settings is settings else None)

    def _now_ns(self):
        """The node clock's time [ns] (ROS time under use_sim_time): ``get_clock().now()``
        without building its rclpy.time.Time object (0.7 against 1.9 us)."""
        handle = self.get_clock().handle
        with handle:
            return handle.get_now().nanoseconds

    def _on_joint_state(self, msg):
        m = self._model
        if m is None:
            self._log.info("no model", "joint_states ignored: no robot_description yet")
            return
        try:
            msg = self._reader.joint_state(msg)
            m.merger.update(msg)
        except ValueError as exc:
            self._log.warning("joint_states", f"JointState dropped: {exc}")
            return
        self._js_received_ns = now = self._now_ns()
        zero = msg.stamp.sec == 0 and msg.stamp.nanosec == 0
        self._js_stamp = ns_to_stamp(now) if zero else msg.stamp
        if self._settings.rate == 0:
            self._tick()

    def _model_frame(self, frame):
        """Model link of a frame id, with or without the frame prefix (None if unknown)."""
        prefix, index = self._settings.frame_prefix, self._model.kd.model.frame_index
        if prefix and frame.startswith(prefix) and frame[len(prefix):] in index:
            return frame[len(prefix):]
        return frame if frame in index else None

    def _on_odometry(self, msg):
        try:
            self._odometry = self._read_odometry(self._reader.odometry(msg))
            self._odom_buffer.append(self._odometry)
        except ValueError as exc:
            self._log.warning("odometry", f"Odometry dropped: {exc}")

    def _read_odometry(self, odom):
        world = self._settings.world_frame
        if odom.frame_id not in ("", world):
            raise ValueError(f"frame_id '{odom.frame_id}' is not world_frame '{world}'")
        if self._model is None:
            raise ValueError("no robot_description yet")
        child = self._model_frame(odom.child_frame_id)
        if child is None:
            raise ValueError(f"child_frame_id '{odom.child_frame_id}' is not a link of the model")
        value = (pose_list_to_matrix(odom.pose), finite_array("twist", odom.twist))
        now = self._now_ns()
        return _Timed(child, value, stamp_to_ns(odom.stamp) or now, now)

    def _on_wrench(self, contact, msg):
        try:
            msg = self._reader.wrench(msg)
            if self._model is None:
                raise ValueError("no robot_description yet")
            frame = self._model_frame(msg.frame_id or contact)
            if frame is None:
                raise ValueError(f"frame_id '{msg.frame_id}' is not a link of the model")
            value = finite_array("wrench", msg.wrench)
        except ValueError as exc:
            self._log.warning(f"wrench {contact}", f"WrenchStamped of '{contact}' dropped: {exc}")
            return
        now = self._now_ns()
        entry = _Timed(frame, value, stamp_to_ns(msg.stamp) or now, now)
        self._wrenches[contact] = entry
        self._wrench_buffers.setdefault(contact, deque(maxlen=INPUT_BUFFER)).append(entry)

    # -- the tick --------------------------------------------------------------------------
    def _tick(self):
        m, stamp = self._model, self._js_stamp
        if m is None or stamp is None or not self._new_stamp(stamp_to_ns(stamp)):
            return
        start, start_cpu = time.perf_counter(), time.thread_time()
        s, s_dot = m.merger.state()
        try:
            w_H_b, nu, have_base = self._base_state(m, s, s_dot)
            wrenches = self._active_wrenches(m)
            tau = self._torques(m)
            result = m.kd.compute_tick(w_H_b, s, nu, s_dot, tau, wrenches if tau is not None
                                       else None)
        except ValueError as exc:
            self._log.warning("tick", f"tick skipped: {exc}")
            return
        if result.forward_dynamics_error:   # the other outputs are still published
            self._fd_note = f"skipped: {result.forward_dynamics_error}"
            self._log.warning("forward dynamics", f"forward dynamics {self._fd_note}")
        self._publish(m, result, stamp, have_base, wrenches)
        self._publish_markers(m, result, stamp, wrenches)
        self._measured = MeasuredState(w_H_b, s, nu, s_dot, result.representation)
        cpu = time.thread_time() - start_cpu      # inside the wall interval: cpu <= duration
        self._stats.add(time.monotonic(), time.perf_counter() - start, cpu)
        on_thread = self._sensors is not None and self._sensors.is_current()
        if not on_thread:         # (timer ticks) steps begun on the sensor thread end first
            self._finish_deferred()
        steps = self._mechanics.steps(m.kd, result, s, wrenches, stamp)
        if (self._deferred is not None
                and inspect.getgeneratorstate(self._deferred) != inspect.GEN_CREATED):
            self._next_deferred = steps     # after the begun ones, in place of an older tick
        else:             # a newer tick takes the turn of one whose steps have not begun
            self._deferred = steps
        if not on_thread:
            self._finish_deferred()

    def _run_deferred(self):
        """One step of the contact mechanics of the latest tick (at equilibrium_rate:
        support polygon, margin, equilibrium torques; their markers go in the next
        ~/markers array), work that need not delay the next tick; True while steps remain.

        A tick on the sensor thread leaves them to the thread's idle moments (no input
        pending), one step each: a tick that a newer one overtakes before the first step
        leaves its turn to that one; once begun, a tick's steps are finished first, then
        those of the newest tick that came meanwhile (so the latest state always gets its
        turn, also when no input follows it). Any other tick runs them at once."""
        if self._deferred is None:
            return False
        try:
            next(self._deferred)
            return True
        except StopIteration:
            self._deferred, self._next_deferred = self._next_deferred, None
            return self._deferred is not None
        except Exception:        # the steps end with it (the sensor thread reports it)
            self._deferred, self._next_deferred = self._next_deferred, None
            raise

    def _finish_deferred(self):
        """Every remaining step of :meth:`_run_deferred`."""
        while self._run_deferred():
            pass

    def _new_stamp(self, stamp_ns):
        """False for a stamp already published; a stamp going backwards resets (logged)."""
        last = self._last_stamp_ns
        if last is not None and stamp_ns == last:
            return False
        if last is not None and stamp_ns < last:
            self.get_logger().warning(
                f"JointState stamp went back {(last - stamp_ns) * 1e-9:.3f} s (clock jump or "
                f"bag restart): resetting and publishing from the new stamp")
        self._last_stamp_ns = stamp_ns
        return True

    def _base_state(self, m, s, s_dot):
        """(w_H_b (4, 4), base velocity (6,) in the node's representation, from odometry?).

        The odometry is the one with the JointState's stamp, else the newest older one."""
        odom, settings = _matching(self._odom_buffer, self._last_stamp_ns), self._settings
        if not settings.use_odometry or odom is None:
            if settings.use_odometry:
                self._log.warning("no odometry", f"no odometry on '{settings.odometry_topic}' "
                                  f"yet: base at fixed_base_pose")
            return self._fixed_base, np.zeros(6), not settings.use_odometry
        if odom.frame == m.kd.model.root_link:    # no joint in between: once per message
            if self._root_base[0] is not odom:
                w_H_c, twist = odom.value
                self._root_base = odom, change_base_representation(twist, w_H_c, BODY,
                                                                   settings.representation)
            return odom.value[0], self._root_base[1], True
        m.aux.set_frame_velocity_representation(BODY)
        root_H_child = m.aux.forward_kinematics(odom.frame, np.eye(4), s)
        j_rel = m.aux.relative_jacobian(odom.frame, s)
        w_H_b, nu = base_state_from_odometry(*odom.value, root_H_child, j_rel, s_dot,
                                             settings.representation)
        return w_H_b, nu, True

    def _active_wrenches(self, m):
        """{contact: (expressed frame, w)}: per contact the wrench with the tick's stamp (else
        the newest older one), left out when further than wrench_timeout from the tick."""
        out, self._stale = {}, set()
        timeout_ns = self._settings.wrench_timeout * 1e9
        for contact in m.contacts:
            w = _matching(self._wrench_buffers.get(contact), self._last_stamp_ns)
            if w is not None and abs(self._last_stamp_ns - w.stamp_ns) <= timeout_ns:
                out[contact] = (w.frame, w.value)
            elif w is not None:
                self._stale.add(contact)
                self._log.warning(f"stale {contact}", f"wrench of '{contact}' older than "
                                  f"wrench_timeout: left out of forward dynamics")
        return out

    def _torques(self, m):
        """Measured joint torques (n,) for forward dynamics, or None (note logged)."""
        if not m.complete:
            missing = m.merger.missing
            m.complete = not missing
            if missing:
                self._log.warning("missing joints", f"joints never received, at "
                                  f"default_joint_position: {missing}")
        if not self._settings.publish_forward_dynamics:
            self._fd_note = "disabled (publish_forward_dynamics: false)"
        elif not m.merger.efforts_complete:
            self._fd_note = "skipped: efforts not received for every joint"
            self._log.info("no efforts", f"forward dynamics {self._fd_note}")
        else:
            self._fd_note = ""
            return m.merger.efforts
        return None

    def _publish(self, m, result, stamp, have_base, wrenches):
        settings, msgs, pub = self._settings, m.messages, self._pub
        if settings.publish_tf:
            pub.tf.publish(msgs.tf(result, stamp, settings.publish_base_tf and have_base))
        pub.com.publish(msgs.com_point(result, stamp))
        pub.momentum.publish(msgs.centroidal_momentum(result, stamp))
        pub.gravity.publish(msgs.gravity_torques(result, stamp))
        if result.base_acceleration is not None:
            pub.forward_dynamics.publish(msgs.forward_dynamics_msg(result, stamp, wrenches))

    def _publish_markers(self, m, result, stamp, wrenches):
        """~/markers, at most markers_rate per second and only while something subscribes."""
        settings, pub = self._settings, self._pub
        if (settings.publish_markers and self._markers_due()
                and pub.markers.get_subscription_count()):
            forces = [self._world_force(m, result, c, wrenches.get(c)) for c in settings.contacts]
            pub.markers.publish(m.messages.marker_array(result, stamp, forces,
                                                        self._mechanics.new_markers()))

    def _markers_due(self):
        """At most ``markers_rate`` marker arrays per second (rviz needs no more)."""
        now = self._now_ns()
        period_ns = 1e9 / self._settings.markers_rate
        if self._markers_ns is not None and 0 <= now - self._markers_ns < period_ns:
            return False
        self._markers_ns = now
        return True

    @staticmethod
    def _world_force(m, result, contact, wrench):
        """(contact link origin, force) in the world frame, or None without a wrench."""
        if wrench is None:
            return None
        frame, w = wrench
        pose, index = result.world_H_frame, m.kd.model.frame_index
        return pose(index[contact])[:3, 3], pose(index[frame])[:3, :3] @ w[:3]

    # -- diagnostics, services, parameters -------------------------------------------------
    def destroy_node(self):
        if self._sensors is not None:
            self._sensors.stop()
        self._mechanics.close()
        return super().destroy_node()

    def _publish_diagnostics(self):
        self._mechanics.collect()     # equilibrium torques, also when no JointState comes
        m, s, now = self._model, self._settings, self._now_ns()

        def age(ns):
            return None if ns is None else (now - ns) * 1e-9
        model = None if m is None else (m.kd.model.name, m.kd.model.root_link, m.kd.NDoF,
                                        len(m.kd.frame_names))
        clash = self._world_clash_note()
        if clash:
            model += (clash,)
        wrenches = [(c, age(getattr(self._wrenches.get(c), "received_ns", None)),
                     c in self._stale) for c in s.contacts]
        inputs = InputsReport(age(self._js_received_ns), s.joint_state_timeout,
                              [] if m is None else m.merger.missing, s.use_odometry,
                              age(getattr(self._odometry, "received_ns", None)), wrenches,
                              self._fd_note)
        self._pub.diagnostics.publish(build_diagnostics(
            self.get_name(), self.get_clock().now().to_msg(), model, inputs,
            self._stats.summary(time.monotonic())))

    def _world_clash_note(self):
        """Why world_frame -> root link is left out of /tf (world_frame is a model frame
        while /tf is published), or None."""
        s, m = self._settings, self._model
        if m is None or m.messages.world_link is None or not s.publish_tf:
            return None
        return (f"world_frame '{s.world_frame}' is also the frame of link "
                f"'{m.messages.world_link}' of the model: '{s.world_frame}' -> "
                f"'{s.frame_prefix}{m.kd.model.root_link}' is not published on /tf (it would "
                f"be a self-transform or a cycle); set world_frame or frame_prefix so that "
                f"they differ")

    def _service_source(self):
        m, s = self._model, self._settings
        return (None if m is None else m.aux, self._measured, s.velocity_representation,
                s.frame_prefix)

    def _on_set_parameters(self, params):
        """Validate ``params`` and apply them. A change that rebuilds the model (the
        robot_description parameter, base frame, gravity) is parsed before the node's lock
        is taken, as :meth:`_on_description` does, and prepared again under it only if the
        settings or the model changed meanwhile."""
        change = self._parameter_change(params)
        with self._lock:
            if change.old is not self._settings or change.model is not self._model:
                change = self._parameter_change(params)
            return self._apply_parameter_change(change)

    def _parameter_change(self, params):
        """A :class:`_ParameterChange` from the current settings and model: validated
        settings (or the error) and, when the model must be rebuilt, its parse."""
        old, model = self._settings, self._model
        try:
            new = updated_settings(old, params)
        except ValueError as exc:
            return _ParameterChange(old, model, None, str(exc))
        urdf = new.robot_description or (model.urdf if model else "")
        if urdf and any(getattr(new, f) != getattr(old, f) for f in MODEL_FIELDS
                        if f != "robot_description" or new.robot_description):
            return _ParameterChange(old, model, new, "", urdf, self._try_parse(urdf, new))
        return _ParameterChange(old, model, new)

    def _apply_parameter_change(self, change):
        """Take a :class:`_ParameterChange` (under the lock); its SetParametersResult."""
        new, old = change.new, change.old
        if new is None:
            return SetParametersResult(successful=False, reason=change.error)
        if change.urdf:
            error = self._load_model(change.urdf, new, bool(new.robot_description),
                                     parsed=change.parsed)
            if error:
                return SetParametersResult(successful=False, reason=error)
        else:
            self._configure(new)
        if (new.rate, new.diagnostics_period) != (old.rate, old.diagnostics_period):
            self._make_timers()
        return SetParametersResult(successful=True)


def main(args=None):
    """Entry point: init, spin, and a clean shutdown on Ctrl-C or external shutdown.

    Returns 1 when a parameter is invalid at start-up (bad value, wrong type, bad topic name
    or a robot_description that does not parse).
    """
    rclpy.init(args=args)
    try:
        node = KinDynNode()
    except (ValueError, ParameterException, NameValidationException) as exc:
        rclpy.logging.get_logger("kin_dyn_node").fatal(f"invalid configuration: {exc}")
        rclpy.try_shutdown()
        return 1
    gc.freeze()   # the model's many long-lived objects: keep them out of every collection
    try:
        spin_until_shutdown(node)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":  # python -m kin_dyn_ros.node.kin_dyn_node
    raise SystemExit(main())
