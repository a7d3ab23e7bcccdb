"""``kin_dyn_node``: floating-base kinematics and dynamics of a robot, published every tick.

A thin layer over :class:`kin_dyn_ros.dynamics.KinDynComputations`: messages to arrays,
one ``kd.compute_tick`` per tick (:mod:`.tick`), arrays to messages (:mod:`.outputs`). Bad
input (ValueError from the conversions or the core) is logged throttled and dropped; it
never stops the node nor changes its state.

Inputs (:mod:`.inputs`): ``robot_description`` (parameter, else topic: reliable,
transient_local), ``joint_states`` (merged by name, SensorDataQoS, QoS overridable),
nav_msgs/Odometry on ``odometry_topic`` (the child frame may be any link), a
geometry_msgs/WrenchStamped per contact. Outputs, stamped with the JointState's stamp: /tf
(at most ``publish_frequency`` by stamps, robot_state_publisher's rule: :mod:`.rates`),
/tf_static, ~/com, ~/centroidal_momentum (TwistStamped: linear = m v_com, angular = angular
momentum about the CoM, world axes), ~/gravity_torques, ~/forward_dynamics (with the age of
the odometry and of each wrench it combined), ~/zmp, ~/capture_point and ~/cop (the balance
quantities of the contacts, :mod:`.balance_outputs`), ~/markers, /diagnostics; services
~/get_jacobian, ~/get_mass_matrix, ~/get_dynamics (:mod:`.services`),
~/get_dynamics_horizon (:mod:`.horizon_service`). Parameters:
:mod:`.settings`. Contact mechanics (:mod:`.contact_mechanics`): ~/support_polygon,
~/stability_margin, ~/equilibrium_torques, support markers on ~/markers, service
~/check_equilibrium.

Threads, explicitly: the sensor callbacks run on the node's sensor thread (or the executor,
:func:`.inputs.subscribe_sensors`); the timers, robot_description and parameter changes on
the executor that spins the node. All of these take the node's one lock, held by the loop
that owns the tick (:mod:`.loop`: when a tick runs, what it publishes, the contact
mechanics' steps), which guards the tick's state. The services (~/get_jacobian,
~/get_mass_matrix, ~/get_dynamics, ~/get_dynamics_horizon, ~/check_equilibrium) are
answered by a process of their own (:mod:`.service_host`, the default
``services_process: true``), which reads the last tick's state from memory the tick
writes once per tick, before its outputs; or, with ``services_process: false``, in this
process (:class:`.services.InProcessServices`): from an immutable snapshot replaced as one
reference per tick, computed in QueryWorker processes, the executor's thread waiting with
the interpreter lock released (``main`` shortens the switch interval). Either way a request
sees the state of one tick and never takes the lock.

Choices where the requirements are open:
- A tick whose JointState stamp equals the last one is skipped entirely (also in timer
  mode: no new JointState, no tick); a stamp going backwards is logged and accepted (reset).
  An unstamped (zero) JointState or WrenchStamped gets the node clock's time on arrival;
  with ``ignore_timestamp`` every input does (each JointState a tick of its own).
- Until the first odometry the base is at ``fixed_base_pose`` and world -> base is not on
  /tf; with ``use_odometry: false`` it is published at ``fixed_base_pose``.
- Odometry must be in ``world_frame`` (or have an empty frame_id).
- Forward dynamics runs only when the latest JointState of every (non-mimic) joint carried
  an effort; otherwise it is skipped with a throttled note (and in /diagnostics). The
  joints with no inertia moving with them (a massless subtree) get NaN accelerations,
  named on /diagnostics; the others are exact. Where the floating base's block is singular
  it is skipped with a throttled warning, and every other output goes on.
"""

import gc
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass

# The core's matrices are small (6 + n <= ~100): multi-threaded BLAS only adds latency and
# jitter. Must be set before NumPy loads its BLAS; an explicit user setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rcl_interfaces.msg import SetParametersResult  # noqa: E402
from rclpy.exceptions import NameValidationException, ParameterException  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from ..dynamics import KinDynComputations  # noqa: E402
from ..dynamics.compiled import (jit_status, prepare, queries_ready,  # noqa: E402
                                 steady_ready)
from .contact_mechanics import ContactMechanics  # noqa: E402
from .conversions import JointStateMerger  # noqa: E402
from .diagnostics import InputsReport, build_diagnostics  # noqa: E402
from .inputs import SensorInputs, subscribe_sensors  # noqa: E402
from .balance_outputs import BalanceMessages  # noqa: E402
from .marker_array import MarkerArrays  # noqa: E402
from .markers import MarkerSet  # noqa: E402
from .outputs import LATCHED_QOS, Publishers, TickMessages, static_transforms  # noqa: E402
from .loop import TickLoop  # noqa: E402
from .realtime import configure_native_threads, configure_thread, lock_memory  # noqa: E402
from .service_host import planner_services  # noqa: E402
from .settings import MODEL_FIELDS, declare_settings, updated_settings  # noqa: E402
from .sensor_thread import clock_ns  # noqa: E402
from .spinning import spin_until_shutdown  # noqa: E402
from .throttle import ThrottledLogger  # noqa: E402
from .tick import TickComputer  # noqa: E402

__all__ = ["KinDynNode", "main", "SWITCH_INTERVAL_S"]

THROTTLE_S = 5.0
SWITCH_INTERVAL_S = 0.0005   # sys.setswitchinterval in main: a service thread's longest hold
MAX_DESCRIPTION_CHARS = 10_000_000   # a longer robot_description is rejected unparsed
PARSE_ERROR_CHARS = 500              # a parser's error text is cut to this in the log


@dataclass
class _Model:
    """A loaded model: the tick's KinDynComputations (``kd``), the odometry conversion's
    (``aux``, tick thread only), the merged joint states,
    its per-tick messages, balance messages and ~/markers arrays."""

    urdf: str
    kd: KinDynComputations
    aux: KinDynComputations
    merger: JointStateMerger
    messages: TickMessages = None
    balance_messages: BalanceMessages = None
    markers: MarkerArrays = None


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


def _log_loaded_later(log, steady):
    """(A start that compiled the kernels) say when the steady tick's kernel (when
    ``steady``: pending) and the queries' kernels are in too."""
    if steady:
        if steady_ready(None):
            log.info("dynamics: the steady tick's kernel is ready: each tick in one call "
                     "from now (the plain tick until now)")
        else:
            log.warning("dynamics: the steady tick's kernel failed to load: every tick the "
                        "plain way (the same outputs, ~50 us more per tick)")
    queries_ready()
    log.info(f"dynamics: the queries' kernels are ready too, "
             f"{jit_status().queries_seconds:.1f} s after the tick's")


class KinDynNode(Node):
    """The node; ``kwargs`` go to rclpy's Node (context, parameter_overrides, namespace).

    Raises ValueError when a parameter is invalid (nothing is left running).
    """

    def __init__(self, **kwargs):
        super().__init__("kin_dyn_node", **kwargs)
        self._settings = declare_settings(self)
        self._log = ThrottledLogger(self.get_logger(), THROTTLE_S)
        self._apply_process_settings()
        self._model = self._sensors = None
        self._now_ns = clock_ns(self.get_clock(), self)    # the node clock [ns]
        self._inputs = SensorInputs(self._now_ns)
        self._diag_timer = None
        self._pub = Publishers(self)
        self.loop = TickLoop(self._pub, self._inputs, self._log)
        self._mechanics = ContactMechanics(self)
        self._planners = planner_services(self, self._settings.services_process)
        self.loop.connect(self._mechanics, self._planners)
        self._configure(self._settings)
        self._prepare_dynamics()
        self._load_parameter_model()      # before any input can arrive
        self.create_subscription(String, "robot_description", self._on_description,
                                 LATCHED_QOS)
        self._sensors = self.loop.sensors = subscribe_sensors(
            self, self._settings, self.loop.lock, self.loop.take_joint_state,
            self.loop.take_odometry, self.loop.take_wrench, self._on_sensor_error,
            on_idle=self.loop.sensors_idle)
        self._make_timers()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._native_done = {}        # middleware threads tried: {tid: given thread_priority?}
        self._configure_native_threads()

    def _configure_native_threads(self):
        """thread_priority for the middleware's threads that do not have it (at start, then
        once a second: a thread started later, or whose scheduling changed, gets it too;
        one refused is not tried again); each refusal one (throttled) warning."""
        for warning in configure_native_threads(self._settings.thread_priority,
                                                self._native_done):
            self._log.warning("middleware threads", warning)

    def _apply_process_settings(self):
        """lock_memory, and the deprecated sensor_thread_cpu's warning (each refusal or
        deprecation is one warning; the node runs on)."""
        settings, log = self._settings, self.get_logger()
        if settings.sensor_thread_cpu >= 0:
            use = ("ignored: cpu_affinity is set" if settings.cpu_affinity else
                   f"used as cpu_affinity [{settings.sensor_thread_cpu}]")
            log.warning(f"sensor_thread_cpu is deprecated (removed in the next release): {use}")
        if settings.lock_memory:
            warning = lock_memory()
            if warning:
                log.warning(warning)

    def claim_ticking_thread(self):
        """Give the calling thread thread_priority and cpu_affinity when it is the one that
        ticks: the executor's (``sensor_thread: false``, or no sensor thread in this rclpy);
        with the sensor thread, that thread has them already. ``main`` calls it before
        spinning."""
        if self._sensors is None:
            s = self._settings
            for warning in configure_thread(s.thread_priority, s.ticking_cpus):
                self.get_logger().warning(warning)

    def _prepare_dynamics(self):
        """Compile (or load from numba's cache) the core's kernels before any subscription
        exists, saying so; or say why the NumPy core runs."""
        status, log = jit_status(), self.get_logger()
        if not status.compiled:
            (log.info if status.reason == "KIN_DYN_JIT=0" else log.warning)(
                f"dynamics: {status.describe()}")
            return
        log.info("dynamics: preparing the compiled kernels (from numba's cache; the first "
                 "start with this numba on this CPU compiles them: ~10-20 s)"
                 if status.cache_dir else "dynamics: compiling the kernels in memory (no "
                 "writable cache directory, see NUMBA_CACHE_DIR: ~30 s at every start)")
        seconds = prepare()
        log.info(f"dynamics: {status.describe()}, ready in {seconds:.1f} s")
        if not queries_ready(0):
            threading.Thread(target=_log_loaded_later, args=(log, not steady_ready(0)),
                             daemon=True).start()

    def _load_parameter_model(self):
        """The model of the robot_description parameter, if set; ValueError if it fails."""
        if self._settings.robot_description:
            error = self._load_model(self._settings.robot_description, self._settings, True)
            if error:
                self.destroy_node()     # its worker and entities: nothing left behind
                raise ValueError(f"parameter 'robot_description': {error}")

    # -- set-up ----------------------------------------------------------------------------
    def _on_sensor_error(self, sub, exc):
        """A callback's unexpected exception on the sensor thread (its input goes on), the
        deferred work's ("idle"), or the thread's end when waiting failed (logged once)."""
        if sub is None:
            self.get_logger().error(f"sensor thread stopped ({exc!r}): joint_states, "
                                    f"odometry and wrenches are no longer read")
        elif sub == "idle":
            self._log.error("deferred", f"contact mechanics skipped: {exc!r}")
        else:
            self._log.error(f"sensor {sub.topic_name}",
                            f"message on '{sub.topic_name}' dropped: {exc!r}")

    def _make_timers(self):
        for timer in (self.loop.timer, self._diag_timer):
            if timer is not None:
                self.destroy_timer(timer)
        s = self._settings
        self.loop.timer = self.create_timer(1.0 / s.rate, self.loop.timer_tick) \
            if s.rate > 0 else None
        self._diag_timer = self.create_timer(s.diagnostics_period, self._on_diagnostics_timer)

    @staticmethod
    def _parse(urdf, settings):
        """KinDynComputations of ``urdf`` with ``settings``' base frame and gravity; raises
        what the parser raises."""
        return KinDynComputations(urdf, root_link=settings.base_frame or None,
                                  gravity=np.array(settings.gravity))

    def _try_parse(self, urdf, settings):
        """(KinDynComputations, None) of :meth:`_parse`, or (None, the exception); a
        description longer than MAX_DESCRIPTION_CHARS (a humanoid's is ~0.1-1 MB; parsing
        takes ~10 s per MB of links) is rejected unparsed."""
        if len(urdf) > MAX_DESCRIPTION_CHARS:
            return None, ValueError(f"{len(urdf)} characters, more than "
                                    f"{MAX_DESCRIPTION_CHARS}: not parsed")
        try:
            return self._parse(urdf, settings), None
        except Exception as exc:  # a description that fails to parse: any parser error
            text = str(exc)
            return None, ValueError(text if len(text) <= PARSE_ERROR_CHARS
                                    else text[:PARSE_ERROR_CHARS] + " ...")

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
        merger = JointStateMerger(kd.joints_name_list, kd.mimic_joints,
                                  settings.default_joint_position)
        if self._model is not None:
            merger.carry_over(self._model.merger)
        self._model = _Model(urdf, kd, kd.sharing_model(), merger)
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
        """Apply ``settings`` to the current model: messages, tick, inputs, contacts, services'
        snapshot, /tf_static. A tick's deferred contact mechanics still pending run first,
        under the settings of that tick (dropped when the model was replaced). The model and
        what was built for it are then frozen (gc.freeze), also when they come on the topic
        after start-up: a full collection of a node with iCub scans ~130k objects, 40-80 ms
        that would stall the tick. A model replaced is freed by reference counting."""
        self.loop.configure(settings, self._model, reloaded)
        self._settings, m = settings, self._model
        if m is None:
            self._inputs.configure(None, None, settings.world_frame, settings.ignore_timestamp)
            return
        m.kd.set_frame_velocity_representation(settings.representation)
        m.merger.set_default_position(settings.default_joint_position)
        m.messages = TickMessages(m.kd, settings)
        contacts = self._model_contacts(m, settings)
        self._mechanics.configure(m.kd, contacts, settings, m.urdf)
        self.loop.ticker = TickComputer(m.kd, m.aux, settings, self._mechanics.contacts,
                                        self._log)
        m.balance_messages = BalanceMessages(settings.world_frame, contacts, m.messages.scatter)
        m.markers = MarkerArrays(m.messages, settings, tuple(self._mechanics.contacts),
                                 self._mechanics.ground_support)
        self._inputs.configure(m.merger, self._model_frame, settings.world_frame,
                               settings.ignore_timestamp)
        self._planners.configure(m.kd, m.urdf, settings, self._mechanics.contacts)
        self._publish_static(m, settings, reloaded)
        gc.freeze()     # the model and what was built for it: out of every collection

    def _model_contacts(self, m, settings):
        """The contacts of ``settings`` that are links of the model (the others logged)."""
        contacts = tuple(c for c in settings.contacts if c in m.kd.model.frame_index)
        for c in set(settings.contacts) - set(contacts):
            self.get_logger().error(f"contact '{c}' is not a link of the model: ignored")
        return contacts

    def _publish_static(self, m, settings, reloaded):
        """/tf_static of the model (and DELETEALL markers after a reload)."""
        clash = self._world_clash_note()
        if clash:
            self.get_logger().error(clash)
        stamp = self.get_clock().now().to_msg()
        if settings.publish_tf:
            static = static_transforms(m.kd, settings.frame_prefix, stamp)
            self._pub.tf_static.publish(TFMessage(transforms=list(static.values())))
        if reloaded and settings.publish_markers:
            self._pub.markers.publish(MarkerSet.delete_all(stamp, settings.world_frame))

    # -- inputs (under the lock: see inputs.subscribe_sensors) -------------------------------
    def _on_description(self, msg):
        """A description from the topic: parsed outside the node's lock (~0.1 s for a
        humanoid, during which the sensor thread goes on ticking with the current model),
        then taken (or its error reported) under it; parsed again under the lock only when
        the settings changed meanwhile."""
        settings, model, parsed = self._settings, self._model, None
        if not settings.robot_description and (model is None or msg.data != model.urdf):
            parsed = self._try_parse(msg.data, settings)
        with self.loop.lock:
            if self._settings.robot_description:
                self.get_logger().info("robot_description topic ignored: the parameter is set",
                                       once=True)
            elif self._model is None or msg.data != self._model.urdf:
                self._load_model(msg.data, self._settings,
                                 parsed=parsed if self._settings is settings else None)

    def _model_frame(self, frame):
        """Model link of a frame id, with or without the frame prefix (None if unknown)."""
        prefix, index = self._settings.frame_prefix, self._model.kd.model.frame_index
        if prefix and frame.startswith(prefix) and frame[len(prefix):] in index:
            return frame[len(prefix):]
        return frame if frame in index else None

    # -- diagnostics, services, parameters -------------------------------------------------
    def destroy_node(self):
        if self._sensors is not None:
            self._sensors.stop()
        self._mechanics.close()
        self._planners.close()
        return super().destroy_node()

    def _on_diagnostics_timer(self):
        """/diagnostics: the figures copied under the lock; the tick statistics summed, the
        message built and published after it (~1-2 ms on this executor's thread, which has
        no real-time priority: under the lock, a thread_priority tick waited for it 2-4 ms
        once a second while service clients loaded the machine)."""
        with self.loop.lock:
            self._mechanics.collect()     # equilibrium torques, also when no JointState comes
            self._planners.check()
            model, inputs, stats = self._model_report(), self._inputs_report(), \
                self.loop.stats.copy()
            equilibrium = self._mechanics.equilibrium_report()
        self._pub.diagnostics.publish(build_diagnostics(
            self.get_name(), self.get_clock().now().to_msg(), model, inputs,
            stats.summary(time.perf_counter()), equilibrium))
        self._configure_native_threads()

    def _model_report(self):
        m = self._model
        if m is None:
            return None
        model = (m.kd.model.name, m.kd.model.root_link, m.kd.NDoF, len(m.kd.frame_names))
        clash = self._world_clash_note()
        return model + (clash,) if clash else model

    def _inputs_report(self):
        """:class:`.diagnostics.InputsReport`: ages of the latest inputs and, at the last
        tick, how old the odometry and each wrench were against its JointState."""
        s, inputs, tick, now = self._settings, self._inputs, self.loop.last_tick, self._now_ns()

        def age(entry):
            received = getattr(entry, "received_ns", entry)
            return None if received is None else (now - received) * 1e-9
        stale = set() if tick is None else tick.inputs.stale
        wrenches = [(c, age(inputs.wrenches.get(c)), c in stale) for c in s.contacts]
        return InputsReport(
            age(inputs.joint_state_received_ns), s.joint_state_timeout,
            [] if self._model is None else self._model.merger.missing, s.use_odometry,
            age(inputs.odometry), wrenches,
            "no tick yet" if tick is None else tick.fd_note,
            None if tick is None else tick.inputs.odometry_age,
            {} if tick is None else dict(tick.inputs.wrench_ages))

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

    def _on_set_parameters(self, params):
        """Validate ``params`` and apply them. A change that rebuilds the model (the
        robot_description parameter, base frame, gravity) is parsed before the node's lock
        is taken, as :meth:`_on_description` does, and prepared again under it only if the
        settings or the model changed meanwhile."""
        change = self._parameter_change(params)
        with self.loop.lock:
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
    gc.freeze()   # rclpy's and the node's long-lived objects (a model: see _configure)
    sys.setswitchinterval(SWITCH_INTERVAL_S)   # a service computing hands the GIL back soon
    try:
        node.claim_ticking_thread()
        spin_until_shutdown(node)
    finally:
        # Shutting down: a further Ctrl-C (a terminal's reaches the whole process group, and
        # launch sends its own) must not interrupt the clean-up with a KeyboardInterrupt.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":  # python -m kin_dyn_ros.node.kin_dyn_node
    raise SystemExit(main())
