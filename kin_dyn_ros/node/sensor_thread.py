"""A thread of the node's own that takes its high-rate sensor topics off rclpy's executor.

Why: rclpy's Python executors (SingleThreadedExecutor, MultiThreadedExecutor) rebuild their
wait set from every entity of every node on each wake-up (for kin_dyn_node: its services,
the parameter services, timers, subscriptions) and run each callback as a task. Measured at
1 kHz on a 2-core machine, that costs ~0.35 ms of CPU per JointState before the callback
runs, a third of the node's whole budget. Waiting on a wait set of just the sensor
subscriptions and calling their callbacks directly costs ~0.1 ms.

How: the sensor subscriptions are created in :attr:`SensorThread.group`, a callback group
whose entities no executor runs (executors leave them out of their wait sets). The thread
waits on those subscriptions and a guard condition (to stop it), then takes the pending
messages of those the wait found ready in rounds: one message of each per round, in the
order the subscriptions were created, until a round finds none, and calls the callbacks
(where rclpy cannot say which are ready, every subscription is tried). One per
round, as rclpy's executors do: inputs published together (odometry, wrenches, then the
JointState that triggers the tick) are taken in that order even while several of each wait
(taking every pending JointState first would tick them with older odometry). Without a wait
between rounds, a backlog drains at the callbacks' pace. The wait set and the take are the
calls rclpy's own ``wait_for_message`` makes (rclpy's implementation module, the same from
Humble to Jazzy). Everything else (services, parameters, timers,
robot_description) stays with whatever executor spins the node. The callbacks therefore run
on two threads: the owner serialises them (KinDynNode runs every callback under one lock).

This module is one of the two places of the node that use rclpy API that is private (the
wait set and the take of ``rclpy.impl.implementation_singleton``; a clock's C handle and the
node's time source in :func:`clock_ns`; the other: a publisher handle's ``publish_raw``,
:func:`.outputs.byte_publisher`): :meth:`SensorThread.available` checks it at start-up, and
without it the node leaves its sensor subscriptions to the executor (the public path, same
callbacks, same messages); :func:`clock_ns` falls back to ``clock.now()``.

The callback group is honoured by rclpy's Python executors (SingleThreadedExecutor,
MultiThreadedExecutor: what ``rclpy.spin`` uses); an executor that registers every
subscription itself (rclpy's experimental EventsExecutor) may take the messages too.

The thread ends on :meth:`SensorThread.stop` or when the context shuts down. An exception
out of a callback is handed to ``on_error`` and the thread goes on, so that one bad message
cannot stop the node's inputs.
"""

import atexit
import functools
import threading
import time

from rclpy.callback_groups import CallbackGroup
from rclpy.clock import ClockType
from rclpy.guard_condition import GuardCondition

from .realtime import configure_thread
try:
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
except ImportError:    # a future rclpy without it: the executor path (see available())
    _rclpy = None

__all__ = ["SensorThread", "clock_ns"]

WAIT_NS = 100_000_000   # wake-up period [ns] to notice a context shut down without a stop()
IDLE_MAX_S = 0.005      # [s] longest taking without an on_idle call (deferred work's turn)
_ACTIVE_FLAG = "_ros_time_is_active"   # rclpy TimeSource's (clock_ns; Humble on)
SWEEP_CREDIT = 8        # drains that try every subscription after a sweep found a message
SWEEP_EVERY = 8         # (and one in this many drains): SensorThread._drain


def clock_ns(clock, node=None):
    """A function returning ``clock``'s time [ns] (ROS time under use_sim_time): through the
    clock's C handle, without building rclpy's Time object (0.7 against 1.9 us, read a few
    times per tick); ``clock.now().nanoseconds`` where the handle lacks ``get_now``.

    With ``node`` (whose time source turns ROS time on and off), a ROS clock reads the
    system clock while ROS time is off, as rcl does (CLOCK_REALTIME: ``time.time_ns()``),
    without the handle (2.1-2.6 against 6.5 us per read in the running node); through
    the handle while it is on, or where the node has no such time source. Whether it is
    on is read from the time source's flag (rclpy's private ``_ros_time_is_active``, from
    Humble on: no property called per read), else its ``ros_time_is_active``."""
    handle = getattr(clock, "handle", None)
    if handle is None or not hasattr(handle, "get_now"):
        return lambda: clock.now().nanoseconds

    def now_ns():
        with handle:
            return handle.get_now().nanoseconds
    source = getattr(node, "_time_source", None)
    if clock.clock_type != ClockType.ROS_TIME \
            or not isinstance(getattr(type(source), "ros_time_is_active", None), property):
        return now_ns

    if type(getattr(source, _ACTIVE_FLAG, None)) is bool:
        def ros_now_ns():
            return now_ns() if source._ros_time_is_active else time.time_ns()  # _ACTIVE_FLAG
    else:
        def ros_now_ns():
            return now_ns() if source.ros_time_is_active else time.time_ns()
    return ros_now_ns


class _ExecutorExcluded(CallbackGroup):
    """A callback group whose entities no executor waits on or runs."""

    def can_execute(self, entity):
        return False

    def beginning_execution(self, entity):
        return False

    def ending_execution(self, entity):
        pass


class SensorThread:
    """Runs the callbacks of ``node``'s subscriptions in :attr:`group` on a thread.

    Create the subscriptions with ``callback_group=thread.group``, then :meth:`start`;
    :meth:`stop` before the node is destroyed.

    - ``on_error(subscription, exception)`` is called on the thread for an exception raised
      by a subscription's callback (the thread goes on), ``on_error("idle", exception)`` for
      one raised by ``on_idle`` (it goes on), and ``on_error(None, exception)`` when waiting
      fails other than by stop() or shutdown (the thread ends; ``running`` is then False).
      An exception raised once the context is shut down (a publish racing Ctrl-C) is not
      reported: the thread ends at its next wait.
    - ``with_info``: callbacks get ``(message, info)``, ``info`` the dict of rclpy's
      ``take_message`` (``source_timestamp``, ``received_timestamp`` [ns], ...).
    - ``lock``: held around each callback (one the callbacks share with other threads; the
      thread takes it itself: no wrapping function called per message).
    - ``realtime``: (SCHED_FIFO priority, CPUs) of the thread, set as it starts
      (:func:`.realtime.configure_thread`; refusals are warnings on the node's logger).
    - ``on_idle()``, if given, is called on the thread each time no message is pending,
      before it waits: for work that may wait but should not delay the callbacks. Work done
      in steps returns True while steps remain: the thread then takes the messages that
      came meanwhile and calls it again, without waiting. Under a stream it cannot keep up
      with, it is still called after every ``IDLE_MAX_S`` of taking (so that deferred work
      is delayed, never starved; one step's delay to the callbacks in each such period).
    """

    # what the thread uses of rclpy's implementation module (and, where there,
    # get_ready_entities: :func:`_ready_pointers`)
    _WAIT_SET_METHODS = ("clear_entities", "add_subscription", "add_guard_condition", "wait")

    @classmethod
    def available(cls, logger=None):
        """True when the private rclpy API the thread uses is there (the wait set with its
        methods, a subscription handle's ``take_message``); otherwise False, logged once on
        ``logger``: the caller then subscribes on the executor instead."""
        missing = []
        wait_set = getattr(_rclpy, "WaitSet", None)
        if wait_set is None:
            missing.append("rclpy_implementation.WaitSet")
        else:
            missing += [f"WaitSet.{m}" for m in cls._WAIT_SET_METHODS
                        if not hasattr(wait_set, m)]
        subscription = getattr(_rclpy, "Subscription", None)
        if subscription is None or not hasattr(subscription, "take_message"):
            missing.append("Subscription.take_message")
        if missing and logger is not None:
            logger.warning(f"sensor thread unavailable (this rclpy lacks {missing}): the "
                           f"sensor inputs are taken by the executor instead")
        return not missing

    def __init__(self, node, on_error, with_info=False, on_idle=None, realtime=(0, ()),
                 lock=None):
        self.group = _ExecutorExcluded()
        self._node, self._on_error, self._with_info = node, on_error, with_info
        self._lock = lock
        self._realtime = realtime
        self._on_idle = on_idle
        self._stopping = False   # (a plain flag: Event.is_set is a Python call, ~5 a tick)
        self._wake = GuardCondition(None, None, context=node.context)
        self._thread = None
        self._ident = None        # the thread's threading ident while it runs

    @property
    def running(self):
        """True from :meth:`start` until the thread ends."""
        return self._thread is not None and self._thread.is_alive()

    def is_current(self):
        """True when called on the thread itself."""
        return threading.get_ident() == self._ident   # (C calls: current_thread() is Python)

    @property
    def native_id(self):
        """The thread's id in the OS (e.g. to change its priority), None before start()."""
        return None if self._thread is None else self._thread.native_id

    def start(self):
        """Start taking messages of the node's subscriptions in :attr:`group` (created by
        now; their handles, message types and callbacks are read once, as it starts); a
        thread named ``<node>_sensors``."""
        subscriptions = [s for s in self._node.subscriptions if s.callback_group is self.group]
        self._thread = threading.Thread(target=self._run, args=(subscriptions,), daemon=True,
                                        name=f"{self._node.get_name()}_sensors")
        self._thread.start()
        # A daemon thread still inside rclpy's wait at interpreter exit aborts the process
        # ("terminate called without an active exception"): stop it first.
        atexit.register(self.stop)

    def stop(self, timeout_s=5.0):
        """Stop the thread (after the callback it is running) and wait for it (idempotent)."""
        atexit.unregister(self.stop)
        if self._stopping:
            return
        self._stopping = True
        if self._thread is not None:
            self._wake.trigger()
            self._thread.join(timeout_s)
        self._wake.destroy()

    def _configure(self):
        """``realtime`` = (SCHED_FIFO priority, CPUs) of this thread (:mod:`.realtime`: 0 and
        empty leave it as it is); each refusal is one warning, and the thread runs on."""
        priority, cpus = self._realtime
        for warning in configure_thread(priority, cpus):
            self._node.get_logger().warning(warning)

    def _run(self, subscriptions):
        self._ident = threading.get_ident()
        try:
            self._loop(subscriptions)
        finally:
            self._ident = None    # (an ident is reused by threads started later)

    def _loop(self, subscriptions):
        self._configure()
        context = self._node.context
        wait_set = _rclpy.WaitSet(len(subscriptions), 1, 0, 0, 0, 0, context.handle)
        # (subscription, handle, its pointer, message type, raw, callback): rclpy's
        # properties read once (a few Python calls per message each)
        entries = [(sub, sub.handle, sub.handle.pointer, sub.msg_type, sub.raw, sub.callback)
                   for sub in subscriptions]
        held = (context.handle, self._wake.handle, *(entry[1] for entry in entries))
        self._ready_pointers = _ready_pointers(wait_set)
        self._sweep_credit, self._drains = SWEEP_CREDIT, 0
        more = False      # on_idle has steps left: take what came, then call it again
        self._idle_due = time.monotonic() + IDLE_MAX_S
        while not self._stopping and context.ok():
            ready = entries
            try:
                if not more:
                    ready = self._wait(wait_set, held, entries)
                    self._idle_due = time.monotonic() + IDLE_MAX_S     # taking begins
            except Exception as exc:  # a handle destroyed under us, the context shut down
                if not self._stopping:
                    self._report(None, exc)
                return
            self._drain(entries, ready)
            more = self._idle()

    def _idle(self):
        """Call ``on_idle`` (unless stopping); True when it has steps left."""
        if self._on_idle is None or self._stopping:
            return False
        self._idle_due = time.monotonic() + IDLE_MAX_S
        try:
            return bool(self._on_idle())
        except Exception as exc:  # a bug in it: reported, the inputs go on
            self._report("idle", exc)
            return False

    def _report(self, source, exc):
        """``on_error(source, exc)``, unless the context is shut down (Ctrl-C came while a
        callback ran: its publish failed for that)."""
        if self._node.context.ok():
            self._on_error(source, exc)

    def _wait(self, wait_set, held, entries):
        """Until a subscription has a message, stop() or at most WAIT_NS; the entries whose
        subscription the wait found ready (:func:`_ready_pointers`), in their order; all of
        them where rclpy cannot say. The ``held`` handles (the context's, the guard
        condition's, the subscriptions') are held (not destroyed) while the wait set uses
        them, as rclpy's executors do."""
        entered = 0
        try:
            for handle in held:
                handle.__enter__()
                entered += 1
            wait_set.clear_entities()
            for entry in entries:
                wait_set.add_subscription(entry[1])
            wait_set.add_guard_condition(held[1])
            wait_set.wait(WAIT_NS)
            ready_pointers = self._ready_pointers
            if ready_pointers is None:          # (each is then tried: an empty take)
                return entries
            pointers, ready = ready_pointers(), []
            for entry in entries:               # (loops, not comprehensions: no frame)
                if entry[2] in pointers:
                    ready.append(entry)
            return ready
        finally:
            for handle in held[entered - 1::-1] if entered else ():
                handle.__exit__(None, None, None)

    def _drain(self, entries, ready):
        """Rounds of one message per subscription, in creation order: over the ``ready``
        entries, each round over those that gave one in the round before, until a round
        finds none (an empty take costs ~1.5 us, a wait ~10 times more) or, with
        ``on_idle``, its call is due (``IDLE_MAX_S`` since the last one); then the same
        over the others (the sweep), while sweeps find messages there (``SWEEP_CREDIT``
        drains after one did: inputs published together, of which the wait saw part, as
        sensors at the same rate publish them) and in every ``SWEEP_EVERY``-th drain;
        otherwise what came to them since the wait is taken after the next wait."""
        swept = ready is entries
        if not swept:
            self._drains += 1
            swept = self._sweep_credit <= 0 and self._drains % SWEEP_EVERY != 0
        pending = ready
        while not self._stopping:
            sweeping = not pending
            if sweeping:
                if swept:
                    return
                pending, swept = [], True
                for entry in entries:           # (loops, not comprehensions: no frame)
                    if entry not in ready:
                        pending.append(entry)
            taken = []
            for entry in pending:
                if self._take_one(entry):
                    taken.append(entry)
            pending = taken
            if sweeping:
                self._sweep_credit = SWEEP_CREDIT if taken else self._sweep_credit - 1
            if pending and self._on_idle is not None and time.monotonic() >= self._idle_due:
                return

    def _take_one(self, entry):
        """Call the callback of ``entry``'s subscription on its oldest pending message; False
        if it had none, or when its handle is being destroyed (stop(), the node destroyed,
        or the context shut down, which destroys its nodes on Kilted): the thread then ends
        at its next wait."""
        sub, handle, _, msg_type, raw, callback = entry
        try:
            with handle:
                taken = handle.take_message(msg_type, raw)
        except Exception as exc:  # InvalidHandle: destruction requested under us
            if not self._stopping and self._node.context.ok():
                self._report(sub, exc)
            return False
        if taken is None:
            return False
        lock = self._lock
        try:
            if lock is None:
                callback(*(taken if self._with_info else taken[:1]))
            else:
                with lock:
                    callback(*(taken if self._with_info else taken[:1]))
        except Exception as exc:  # a bug in a callback: reported, the inputs go on
            self._report(sub, exc)
        return True


def _ready_pointers(wait_set):
    """A function giving the pointers of the subscriptions ``wait_set`` found ready (rclpy's
    ``get_ready_entities``, as its executors read them), or None where this rclpy lacks
    it."""
    get_ready = getattr(wait_set, "get_ready_entities", None)
    return None if get_ready is None else functools.partial(get_ready, "subscription")
