"""The steady tick: between two changes of its inputs, a tick in a handful of calls.

Most ticks of a node at 1 kHz differ from the one before only by their JointState: the same
odometry and wrenches (they come at 100 Hz, or at each JointState: then every tick is
plain), the same readers, no ~/markers array and no contact mechanics due. A
:class:`SteadyTick` is learnt from a tick computed the plain way (:meth:`.loop.TickLoop.tick`:
:class:`.tick.TickComputer`, :meth:`.loop.TickLoop.render`) and computes the next ones by
one call of the core's PreparedTick, one call rendering every per-tick message
(:class:`.template_pack.TemplatePack`) and their publishes; the Tick it leaves makes its
inputs and result when read (:class:`SteadyTickRecord`). A tick it cannot compute exactly so
(an input taken since, a wrench going stale, other readers, forward dynamics turning on or
off, ~/markers or contact mechanics due, steps pending, the kernel declining) is computed
the plain way, and a new SteadyTick is learnt from it.

A performance trick, and nothing else: the plain path gives the same messages, states and
diagnostics (test/ros/test_steady_tick.py compares them on a stream that exercises every
way out); in the running node the plain tick cost ~50 us more per JointState at 1 kHz
(docs/performance.md).
"""

import numpy as np

from .inputs import TickInputs
from .tick import MeasuredState, Tick, same_inputs

__all__ = ["SteadyTick", "SteadyTickRecord"]

_PER_TICK = ("com", "momentum", "gravity")


class SteadyTick:
    """The ticks after a plain one (:meth:`learn`), while nothing but the JointState
    changes (:meth:`run`)."""

    __slots__ = ("_taken", "_read", "_stamp_ns", "_odometry", "_wrenches", "_stamps",
                 "_base", "_fd", "_prepared", "_pack", "_names", "_tf", "_publishers",
                 "_with_base", "_massless_at")

    @classmethod
    def learn(cls, loop, tick, read):
        """The SteadyTick of the ticks after ``tick`` (computed the plain way by ``loop``, a
        :class:`.loop.TickLoop`, while the publishers ``read`` were read), or None when
        those ticks need the plain way: its inputs not each its buffer's newest, a stale
        wrench, no odometry yet, odometry of a link other than the root (the base state then
        depends on the joints), forward dynamics failing, no compiled PreparedTick or no
        usable template pack."""
        sensors, ticker, settings = loop.inputs, loop.ticker, loop.settings
        matches, inputs, prepared = sensors.newest_matches(), tick.inputs, ticker.prepared
        odometry = inputs.odometry
        if matches is None or inputs.stale or prepared is None \
                or not same_inputs(prepared.frame_wrenches, inputs.wrenches) \
                or (odometry is None and settings.use_odometry) \
                or (odometry is not None and odometry.frame != ticker.kd.model.root_link) \
                or tick.result.forward_dynamics_error or not read.isdisjoint(loop.balance):
            return None
        fd = tick.result.base_acceleration is not None
        pack = loop.model.messages.pack_for(fd, inputs)
        if not pack:
            return None
        return cls(loop, tick, read, prepared, pack, fd)

    def __init__(self, loop, tick, read, prepared, pack, fd):
        pub, inputs = loop.publishers, tick.inputs
        self._taken, self._read, self._stamp_ns = loop.inputs.taken, read, tick.stamp_ns
        self._odometry, self._wrenches = inputs.odometry, inputs.wrenches
        self._stamps = [(c, w.stamp_ns) for c, w in loop.inputs.newest_matches()[1]
                        if c in inputs.wrenches]
        state = tick.state
        self._base = (state.w_H_b, state.base_vel, tick.have_base, state.representation)
        self._fd, self._prepared, self._pack = fd, prepared, pack
        names = [n for n in _PER_TICK if loop.by_name[n] in read]
        self._names = (tuple(names), (*names, "tf"))          # without, with /tf
        self._tf = loop.settings.publish_tf and pub.tf in read
        self._publishers = loop.by_name
        self._with_base = loop.settings.publish_base_tf and tick.have_base
        self._massless_at = len(tick.result.packed) - 1

    def run(self, loop, read):
        """Compute, hand the services and publish the tick of the latest JointState of
        ``loop`` (publishers ``read``) as :meth:`.loop.TickLoop.tick` would; its
        :class:`SteadyTickRecord`, or None (nothing done) when it needs the plain way."""
        sensors, stamp_ns = loop.inputs, loop.inputs.joint_state_stamp_ns
        if sensors.taken != self._taken or stamp_ns < self._stamp_ns or read != self._read \
                or loop.steps_pending or loop.markers_due(read) \
                or loop.mechanics.has_work(stamp_ns):
            return None
        ages = self._ages(stamp_ns, loop.settings.wrench_timeout)
        if ages is None:
            return None
        ticker = loop.ticker
        tau, fd_note = ticker.torques(sensors.merger, loop.publishers.forward_dynamics in read)
        if (tau is not None) != self._fd:
            return None
        s, s_dot = sensors.merger.state()
        w_H_b, nu, have_base, representation = self._base
        got = self._prepared.run(w_H_b, s, nu, s_dot, tau)
        if got is None:
            return None
        out, poses = got
        state = MeasuredState(w_H_b, s, nu, s_dot, representation)
        record = SteadyTickRecord(self, stamp_ns, state, have_base, fd_note, out, poses, ages,
                                  ticker)
        if self._fd and out[self._massless_at]:       # (their names: from the result)
            record.fd_note = ticker.massless_note(record.result.massless_joints)
        loop.planners.write(state)      # before the outputs: who got them can ask
        self._publish(loop, stamp_ns, out, w_H_b, ages)
        return record

    def _ages(self, stamp_ns, timeout):
        """The ages [s] of the odometry (0 without) and of each wrench at ``stamp_ns`` (the
        numbers ~/forward_dynamics carries, as :func:`.inputs._tick_inputs` computes them),
        or None when a wrench is further than ``timeout`` (stale: the plain way logs it)."""
        odometry = self._odometry
        ages = [0.0 if odometry is None else (stamp_ns - odometry.stamp_ns) * 1e-9]
        for _, stamp in self._stamps:
            age = (stamp_ns - stamp) * 1e-9
            if not abs(age) <= timeout:
                return None
            ages.append(age)
        return ages

    def _publish(self, loop, stamp_ns, out, w_H_b, ages):
        """The per-tick messages of the tick, rendered at once, then published (the order
        and gates of :meth:`.loop.TickLoop.render`)."""
        tf = self._tf and loop.tf_turn(stamp_ns)
        rendered = loop.model.messages.packed_outputs(
            self._pack, out, w_H_b, np.array(ages) if self._fd else None, stamp_ns,
            self._names[tf], self._with_base)
        publishers = self._publishers
        for name, data in rendered.items():
            publishers[name].publish(data)


class SteadyTickRecord(Tick):
    """The :class:`.tick.Tick` of a steady tick: its ``inputs`` (a TickInputs) and
    ``result`` (the core's TickResult) made when first read (the node's diagnostics read
    the inputs once a second; most ticks neither)."""

    __slots__ = ("_steady", "_out", "_poses", "_ages", "_ticker", "_inputs", "_made")

    def __init__(self, steady, stamp_ns, state, have_base, fd_note, out, poses, ages,
                 ticker):
        self.stamp_ns, self.state, self.have_base, self.fd_note = stamp_ns, state, \
            have_base, fd_note
        self._steady, self._out, self._poses, self._ages = steady, out, poses, ages
        self._ticker, self._inputs, self._made = ticker, None, None

    @property
    def inputs(self):
        if self._inputs is None:
            steady, ages = self._steady, self._ages
            self._inputs = TickInputs(
                self.stamp_ns, steady._odometry, dict(steady._wrenches), set(),
                None if steady._odometry is None else ages[0],
                {c: age for (c, _), age in zip(steady._stamps, ages[1:])})
        return self._inputs

    @property
    def result(self):
        if self._made is None:
            ticker = self._ticker
            self._made = self._steady._prepared.result(
                self.state.w_H_b, self._out, self._poses, self._steady._fd, ticker.geometry,
                ticker.settings.contact_force_threshold)
        return self._made
