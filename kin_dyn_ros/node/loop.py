"""One loop owns the tick: when a tick runs, what it publishes, and the contact mechanics'
steps it leaves for later.

:class:`TickLoop` holds the node's one lock (:attr:`TickLoop.lock`: the sensor callbacks,
the timers, robot_description and parameter changes all take it) and everything a tick
reads and writes under it:

- **When a tick runs.** The sensor callbacks take the inputs
  (:meth:`TickLoop.take_joint_state`, :meth:`TickLoop.take_odometry`,
  :meth:`TickLoop.take_wrench`: a bad message is dropped with a throttled line). With
  ``rate`` 0 a JointState ticks at once; with ``merge_queued_joint_states`` on the sensor
  thread, once the inputs pending are taken (:meth:`TickLoop.sensors_idle`), the JointStates
  taken meanwhile merged into it. With ``rate`` > 0 the node's timer ticks
  (:meth:`TickLoop.timer_tick`). A JointState stamp already published makes no tick; one
  going back resets (logged).
- **One tick** (:meth:`TickLoop.tick`): the measured state and one core call
  (:class:`.tick.TickComputer`), the state handed to the services before the outputs, the
  outputs (each only while read), the tick's statistics (its duration; its thread CPU time
  on one tick in CPU_EVERY), then its contact mechanics steps.
- **The gates**, each a rate (:mod:`.rates`) or a reader count: /tf at ``publish_frequency``
  on turns by JointState stamps (:class:`.rates.SinceLast`), ~/markers at ``markers_rate`` by the
  JointStates' arrival on the node's clock (:class:`.rates.AtMost`, rviz needs no more),
  every output only while read;
  the contact mechanics at ``equilibrium_rate`` by stamps (:class:`.rates.OnPhase`, their
  :meth:`.contact_mechanics.ContactMechanics.has_work`, not asked for the stamps of its
  ``quiet`` window).
- **The contact mechanics' steps** (:meth:`TickLoop.run_step`): on the sensor thread left to
  its idle moments, one step each; on any other thread run at once.

:class:`~.kin_dyn_node.KinDynNode` builds it and keeps construction, parameters and wiring;
benches and tests drive these public methods.
"""

import threading
import time

from .diagnostics import TickStats
from .rates import AtMost, SinceLast
from .steady_tick import SteadyTick

__all__ = ["TickLoop", "CPU_EVERY", "CPU_EVERY_S"]

# The tick statistics have the duration of every tick (perf_counter, no system call) and
# the thread CPU time of one tick in CPU_EVERY, or of the first after CPU_EVERY_S [s]
# (every tick of a stream slower than 80 Hz): two system calls, 4.6 us per tick in the
# running node at 1 kHz (docs/performance.md, "Session 34").
CPU_EVERY, CPU_EVERY_S = 8, 0.1


class TickLoop:
    """The tick of a node: ``publishers`` its :class:`.outputs.Publishers`, ``inputs`` its
    :class:`.inputs.SensorInputs`, ``log`` its throttled logger.
    :meth:`connect` gives it the contact mechanics and the planners' services;
    :attr:`sensors` is the sensor thread (None: every callback on the executor). What it
    holds is public for benches and tests to read (the node writes it only through
    :meth:`configure` and :meth:`connect`)."""

    def __init__(self, publishers, inputs, log):
        self.lock = threading.RLock()
        self.stats = TickStats()
        self.last_tick = None        # the last tick computed (a :class:`.tick.Tick`)
        self.ticker = None           # the model's :class:`.tick.TickComputer` (None: no model)
        self.sensors = self.mechanics = self.planners = None
        self.timer = None            # the node's timer that ticks (``rate`` > 0), else None
        self.publishers, self.inputs = publishers, inputs
        self.by_name = {"tf": publishers.tf, "com": publishers.com,       # per-tick outputs
                        "momentum": publishers.momentum, "gravity": publishers.gravity,
                        "forward_dynamics": publishers.forward_dynamics}
        self._per_tick = tuple((name, self.by_name[name])
                               for name in ("com", "momentum", "gravity"))
        self._balance_named = ((publishers.zmp, "zmp"), (publishers.capture_point,
                                                         "capture_point"),
                               (publishers.cop, "cop"))
        self._balance = frozenset(p for p, _ in self._balance_named)
        self._steady = None          # the SteadyTick of the next ticks (None: plain)
        self.steady_ticks = True     # False: every tick the plain way (tests, benches)
        self._log = log
        self._settings = self._model = None
        self._takes = False          # takes_joint_states
        self._last_stamp_ns = None
        self._tf_due = SinceLast()   # publish_frequency, by JointState stamps
        self._markers_due = AtMost()   # markers_rate, by the JointStates' arrival
        # the contact mechanics' steps of a tick (begun or not), and of the newest tick after
        self._deferred = self._next_deferred = None
        self._begun = self._tick_waiting = False
        self._unsampled, self._sampled_at = 0, 0.0     # CPU_EVERY: ticks to go, last [s]

    def connect(self, mechanics, planners):
        """The node's :class:`.contact_mechanics.ContactMechanics` and planners' services."""
        self.mechanics, self.planners = mechanics, planners

    @property
    def settings(self):
        """The :class:`.settings.Settings` the loop ticks with."""
        return self._settings

    @property
    def model(self):
        """The node's loaded model (its ``kd``, ``urdf``, ``merger``, messages), or None."""
        return self._model

    def configure(self, settings, model, reloaded=False):
        """Tick with ``settings`` and ``model`` (the node's loaded model, or None) from now
        on (under the lock). A tick's steps still pending run first under the settings of
        that tick, or are dropped when the model was replaced (``reloaded``)."""
        self._steady = None
        if reloaded:
            self._deferred = self._next_deferred = None
            self._begun = False
        else:
            self.finish_steps()
        self._settings, self._model = settings, model
        self._takes = settings.rate == 0 and not settings.merge_queued_joint_states
        self._tf_period_ns = round(1e9 / settings.publish_frequency)
        self._markers_period_ns = round(1e9 / settings.markers_rate)
        self._tf_due.reset()

    # -- the inputs and when a tick runs (under the lock) ----------------------------------
    @property
    def takes_joint_states(self):
        """Whether a steady tick may take a JointState and tick it in one call
        (:meth:`.steady_tick.SteadyTick.take`): each ticks at once (``rate`` 0, without
        merge_queued_joint_states)."""
        return self._takes

    def take_joint_state(self, data):
        """A JointState (message or CDR bytes) taken; then the tick now, or (with
        merge_queued_joint_states on the sensor thread) once the inputs pending are taken
        (:meth:`sensors_idle`); none with a timer (``rate`` > 0). While the steady tick
        takes them (:meth:`.steady_tick.SteadyTick.take`), it takes the bytes and ticks,
        also after odometry and wrenches it can follow before the stamp is known
        (:meth:`.steady_tick.SteadyTick.catch_up`: most of a robot's 1 kHz inputs)."""
        steady = self._steady
        if steady is not None and self._takes and (steady.taken == self.inputs.taken
                                                   or steady.catch_up(self)) \
                and steady.offers and self.tick(data) is not False:
            return
        try:
            self.inputs.take_joint_state(data)
        except ValueError as exc:
            if self._model is None:
                self._log.info("no model", "joint_states ignored: no robot_description yet")
            else:
                self._log.warning("joint_states", f"JointState dropped: {exc}")
            return
        if self._settings.rate != 0:
            return
        if self._settings.merge_queued_joint_states and self._on_sensor_thread():
            if self._tick_waiting:        # the one taken before has no tick of its own
                self.stats.merged(time.perf_counter())
            self._tick_waiting = True     # once the inputs pending are taken
        else:
            self.tick()

    def take_odometry(self, data):
        """An Odometry (message or CDR bytes) taken (the tick of its stamp uses it)."""
        try:
            self.inputs.take_odometry(data)
        except ValueError as exc:
            self._log.warning("odometry", f"Odometry dropped: {exc}")

    def take_wrench(self, contact, data):
        """A WrenchStamped (message or CDR bytes) of ``contact`` taken."""
        try:
            self.inputs.take_wrench(contact, data)
        except ValueError as exc:
            self._log.warning(f"wrench {contact}", f"WrenchStamped of '{contact}' dropped: {exc}")

    def sensors_idle(self):
        """The sensor thread has taken every pending input (or has been taking for
        IDLE_MAX_S): with merge_queued_joint_states, tick the newest JointState, those taken
        since the last tick merged into it (a backlog costs one tick, not one each, and the
        outputs stay fresh); else one step of the contact mechanics; True while work
        remains. Takes the lock only then (most calls: nothing to do): only ticks on the
        sensor thread leave either for later (ticks elsewhere run their steps at once)."""
        if not self._tick_waiting and self._deferred is None:
            return False
        with self.lock:
            if self._tick_waiting:
                self._tick_waiting = False
                self.tick()
                return True
            return self.run_step()

    def timer_tick(self):
        """The node's timer (``rate`` > 0): tick the latest inputs."""
        with self.lock:
            self.tick()

    def _on_sensor_thread(self):
        return self.sensors is not None and self.sensors.is_current()

    # -- the tick (under the lock) ---------------------------------------------------------
    def tick(self, data=None):
        """Compute and publish the tick of the latest JointState, give the services its
        state, and hand the contact mechanics their steps. With ``data`` (the bytes of a
        JointState not taken yet), the steady tick takes it and ticks
        (:meth:`take_joint_state`); False when it did not take it (nothing changed)."""
        inputs = self.inputs
        if data is None:
            stamp_ns, last = inputs.joint_state_stamp_ns, self._last_stamp_ns
            if self.ticker is None or stamp_ns is None:
                return None
            if last is not None and stamp_ns > last:      # (most ticks: no call)
                self._last_stamp_ns = stamp_ns
            elif not self._new_stamp(stamp_ns):
                return None
        start, start_cpu = time.perf_counter(), None
        if self._unsampled and start - self._sampled_at < CPU_EVERY_S:
            self._unsampled -= 1
        else:                                    # its thread CPU time read (CPU_EVERY)
            self._unsampled, self._sampled_at = CPU_EVERY - 1, start
            start_cpu = time.thread_time()
        counts = self.publishers.is_read     # (its last count while fresh: no call)
        read = counts.read if start < counts.fresh_until else counts.current(start)
        steady = self._steady
        if data is not None:        # (its stamp after the last tick's, else not taken)
            tick = steady.take(self, read, data, self._last_stamp_ns)
            if tick is False:
                return False
            if tick is None:        # taken, its tick failed: the plain way ticks it
                self.tick()
                return True
            stamp_ns = self._last_stamp_ns = tick.stamp_ns
        else:
            if steady is not None and (steady.taken != inputs.taken    # odometry, wrenches
                                       or not steady.since_ns <= stamp_ns < steady.until_ns):
                steady = self._steady = steady.follow(self)     # (or other ones apply)
            tick = None if steady is None else steady.run(self, read)
        plain = tick is None
        if plain:                           # (then the next ticks are learnt from it)
            try:
                tick = self.ticker.compute(inputs, self.publishers.forward_dynamics in read)
            except ValueError as exc:
                self._log.warning("tick", f"tick skipped: {exc}")
                self._steady = None
                return
            self.planners.write(tick.state)     # before the outputs: who got them can ask
            self.publish(tick, read)
            self._steady = SteadyTick.learn(self, tick, read) if self.steady_ticks else None
        self.last_tick = tick
        cpu = None if start_cpu is None else time.thread_time() - start_cpu
        end = time.perf_counter()                 # (cpu inside the wall interval: <= duration)
        self.stats.record((end, end - start, cpu))
        quiet_from, quiet_to = self.mechanics.quiet   # (most ticks: no contact mechanics)
        if self._deferred is not None or not quiet_from <= stamp_ns < quiet_to \
                and self.mechanics.has_work(stamp_ns):
            self._schedule_steps(tick)      # (else it would do nothing)

    def publish(self, tick, read=None):
        """The tick's outputs, each only while something subscribes (work nobody reads is
        not done; a new subscriber is served from at most READERS_PERIOD_NS later). Every
        per-tick message is rendered first, then all are published (the tick's arithmetic
        runs before the middleware's code, not between its calls); the marker array, at
        most ``markers_rate``, comes after them, so that it never delays them."""
        read = self.publishers.is_read.current() if read is None else read
        for publisher, msg in self.render(tick, read):
            publisher.publish(msg)
        self.publish_markers(tick, read)

    def publish_markers(self, tick, read):
        """The ~/markers array of the tick, when published, read (among the publishers
        ``read``) and due at markers_rate (it then takes the turn)."""
        gate = self.markers_gate(read)
        if gate is not None and gate[0](self.inputs.joint_state_received_ns, gate[1]):
            self.publish_markers_of(tick)

    def markers_gate(self, read):
        """(due, period_ns): ~/markers is due with the latest JointState when
        ``due(joint_state_received_ns, period_ns)`` (it then takes the turn); None when not
        published or not read (among the publishers ``read``)."""
        if not (self._settings.publish_markers and self.publishers.markers in read):
            return None
        return self._markers_due.due, self._markers_period_ns

    def publish_markers_of(self, tick):
        """The ~/markers array of ``tick``, now."""
        self.publishers.markers.publish(self._model.markers.render(tick))

    def render(self, tick, read=None):
        """[(publisher, message)] of the tick's per-tick outputs that are read (``read``:
        the publishers read, as :meth:`.outputs.ReadCounts.current` gives them)."""
        settings, pub, result = self._settings, self.publishers, tick.result
        read = pub.is_read.current() if read is None else read
        wanted = []               # (loops, not comprehensions: no frame of their own)
        for name, publisher in self._per_tick:
            if publisher in read:
                wanted.append(name)
        if settings.publish_tf and pub.tf in read and self.tf_turn(tick.inputs.stamp_ns):
            wanted.append("tf")
        # (forward dynamics: computed only while subscribed, rendered whenever computed)
        rendered = self._model.messages.per_tick(
            result, tick.stamp_ns, tick.inputs, wanted,
            settings.publish_base_tf and tick.have_base)
        out, by_name = [], self.by_name
        for name, msg in rendered.items():
            out.append((by_name[name], msg))
        if not read.isdisjoint(self._balance):
            out += self.balance_messages(result, tick.stamp, read)
        return out

    def balance_messages(self, result, stamp, read=None):
        """[(publisher, message)] of ~/zmp, ~/capture_point and ~/cop of a tick, while a
        contact is active and each while something subscribes (the balance is computed
        only then)."""
        read = self.publishers.is_read.current() if read is None else read
        wanted = self.balance_read(read)
        if not wanted:
            return []
        rendered = self._model.balance_messages.render(result, stamp,
                                                       [name for _, name in wanted])
        return [(publisher, rendered[name]) for publisher, name in wanted if name in rendered]

    # -- the gates -------------------------------------------------------------------------
    def tf_turn(self, stamp_ns):
        """Whether the tick of JointState stamp ``stamp_ns`` publishes /tf (it then takes the
        turn): every tick with ignore_timestamp, else on turns 1/publish_frequency of
        JointState stamps apart (robot_state_publisher's rule, with slack for jitter and
        lateness: :class:`.rates.SinceLast`)."""
        due, period_ns = self.tf_gate()
        return due is None or due(stamp_ns, period_ns)

    def tf_gate(self):
        """(due, period_ns): :meth:`tf_turn` of a stamp is ``due(stamp_ns, period_ns)``
        (the gate's own call, one Python call less per tick), or (None, 0) when every
        tick's is (ignore_timestamp)."""
        if self._settings.ignore_timestamp:
            return None, 0
        return self._tf_due.due, self._tf_period_ns

    @property
    def balance(self):
        """The publishers of ~/zmp, ~/capture_point and ~/cop (a frozenset)."""
        return self._balance

    def balance_read(self, read):
        """[(publisher, name)] of ~/zmp, ~/capture_point and ~/cop among the publishers
        ``read``, in that order (their messages' order)."""
        return [(p, name) for p, name in self._balance_named if p in read]

    def _new_stamp(self, stamp_ns):
        """False for a stamp already published; a stamp going backwards resets (logged)."""
        last = self._last_stamp_ns
        if last is not None and stamp_ns == last:
            return False
        if last is not None and stamp_ns < last:
            self._log.warning("stamp went back", f"JointState stamp went back "
                              f"{(last - stamp_ns) * 1e-9:.3f} s (clock jump or bag "
                              f"restart): resetting and publishing from the new stamp")
        self._last_stamp_ns = stamp_ns
        return True

    # -- contact mechanics: steps ----------------------------------------------------------
    def _schedule_steps(self, tick):
        """The tick's contact mechanics steps (:meth:`run_step`): on the sensor thread left
        to its idle moments, on any other thread run at once."""
        on_thread = self._on_sensor_thread()
        if not on_thread:         # (timer ticks) steps begun on the sensor thread end first
            self.finish_steps()
        if not self.mechanics.has_work(tick.stamp_ns):
            return                # (most ticks: neither due nor awaiting the worker)
        state = tick.state
        steps = self.mechanics.steps(self._model.kd, tick.result, state.s, tick.stamp)
        if self._deferred is not None and self._begun:
            self._next_deferred = steps     # after the begun ones, in place of an older tick
        else:             # a newer tick takes the turn of one whose steps have not begun
            self._deferred, self._begun = steps, False
        if not on_thread:
            self.finish_steps()

    def run_step(self):
        """One step of the contact mechanics of the latest tick (at equilibrium_rate:
        support polygon, margin, equilibrium torques), work that need not delay the next
        tick; True while steps remain.

        A tick on the sensor thread leaves them to the thread's idle moments (no input
        pending), one step each: a tick that a newer one overtakes before the first step
        leaves its turn to that one; once begun, a tick's steps are finished first, then
        those of the newest tick that came meanwhile (so the latest state always gets its
        turn, also when no input follows it). Any other tick runs them at once."""
        if self._deferred is None:
            return False
        try:
            self._begun = True
            next(self._deferred)
            return True
        except StopIteration:
            self._deferred, self._next_deferred, self._begun = self._next_deferred, None, False
            return self._deferred is not None
        except Exception:        # the steps end with it (the sensor thread reports it)
            self._deferred, self._next_deferred, self._begun = self._next_deferred, None, False
            raise

    def finish_steps(self):
        """Every remaining step of :meth:`run_step`."""
        while self.run_step():
            pass
