"""The steady tick: a tick in a handful of calls while the inputs keep their layout.

Most ticks of a node at 1 kHz differ from the one before only by their JointState, or by
odometry and wrenches of the same frames come since (at 100 Hz, or at each JointState),
with the same readers. A :class:`SteadyTick` is learnt from a tick computed the plain way
(:meth:`.loop.TickLoop.tick`: :class:`.tick.TickComputer`, :meth:`.loop.TickLoop.render`),
follows the odometry and wrenches taken since
(:meth:`SteadyTick.follow`: their match to the stamp, base state and PreparedTick, as the
plain way makes them) and computes each tick by one kernel call
(:func:`..dynamics.kernels.steady_tick`: the inputs' ages, the core's PreparedTick, the
state shared with the services' process, every per-tick message's numbers in its
:class:`.template_pack.TemplatePack`), their publishes and, when due, the ~/markers array
(the loop then hands the contact mechanics their steps, as after any tick); the Tick it
leaves makes its inputs and result when read (:class:`SteadyTickRecord`). Its ticks are
those of the stamps up to the first newer input buffered (JointStates behind the odometry
and wrenches, as in a backlog, are steady too; from that stamp on it follows them). A
tick it cannot compute exactly so (a wrench going stale, odometry of a link other than
the root, other readers, forward dynamics turning on or off, the kernel declining) is
computed the plain way, and a new SteadyTick is learnt from it. While ~/zmp,
~/capture_point or ~/cop is read, the same kernel call computes them too and writes their
bytes (while the contacts' CoPs defined are those of the last rendered), published through
the handles as :meth:`.loop.TickLoop.balance_messages` would give them.

While each JointState ticks at once, the steady tick also takes the JointState itself
(:meth:`SteadyTick.take`): the kernel, given its bytes, merges it (as the compiled merge of
:meth:`.inputs.SensorInputs.take_joint_state`) and ticks in the same call; whatever it
declines (another name list, a stamp not after the last tick's or before its inputs', a
stale wrench, bytes the merge does not read) goes the way above, unchanged. Odometry and
wrenches come since are caught up with first (:meth:`SteadyTick.catch_up`), when they are
new values of the same inputs: a robot's estimator and F/T sensors at the JointStates'
rate cost no plain tick and no separate merge.

The kernel takes ten arguments: what stays from tick to tick is held by one object made once
(:func:`..dynamics.kernels.steady_arguments`), and the tick's out, poses, ages, state and
balance outputs are one array (the record's views of it made when read). It is called
without numba's dispatch (:func:`..dynamics.compiled.direct`) while the arguments renewed
are of its signature (:meth:`SteadyTick._choose_call`), through it otherwise.

A performance trick, and nothing else: the plain path gives the same messages, states and
diagnostics (test/ros/test_steady_tick.py compares them on a stream that takes every way in
and out); in the running node the plain tick cost ~50 us more per JointState at 1 kHz, and
the take saves 4-16 us more (docs/performance.md).
"""

from typing import NamedTuple

import numpy as np

from ..dynamics.compiled import (NO_BALANCE_PACK, direct, direct_arrays, no_balancing,
                                 steady_ready)
from .balance_outputs import defined_at
from .conversions import ns_words
from .inputs import NEVER, TickInputs
from .outputs import byte_publisher
from .tick import EFFORTS_MISSING, MeasuredState, Tick, same_inputs

__all__ = ["SteadyTick", "SteadyTickRecord"]

_PER_TICK = ("com", "momentum", "gravity")
_NO_WORDS = np.zeros(0)
_UNASKED = object()     # SteadyTick._ask: not asked yet
# the kernel's merge arguments when it merges no JointState (not read: of their types)
_NO_MERGE = (np.zeros(0, np.int64), np.zeros(0, np.uint8), np.zeros(0, np.uint8), np.zeros(0),
             np.zeros(0, np.bool_), np.zeros(0, np.bool_), np.zeros(2, np.int64))


class _Inputs(NamedTuple):
    """A steady tick's inputs, renewed together (:meth:`SteadyTick._renew`), each tick's
    record keeping those of its tick: the matched odometry (a Timed or None), the wrenches
    {contact: (expressed link, w (6,))}, their stamps [(contact, ns)], the base (w_H_b,
    base velocity, from odometry?, representation) and the PreparedTick of the wrenches."""

    odometry: object
    wrenches: dict
    stamps: list
    base: tuple
    prepared: object


class SteadyTick:
    """The ticks after a plain one (:meth:`learn`), while nothing but the JointState
    changes (:meth:`run`, or :meth:`take` with the JointState), and after each odometry or
    wrench taken (:meth:`follow`, :meth:`catch_up`). Its inputs are renewed in place when
    they are new values of the same ones (:meth:`_renew`; its ticks' records keep the
    inputs of their own tick); :meth:`take` gives up on a name list it does not know.

    ``taken``: the inputs' count its inputs are of (:attr:`.inputs.SensorInputs.taken`);
    its ticks: the stamps in [``since_ns``, ``until_ns``) (``until_ns``: the first stamp of
    a newer input buffered); ``offers``: whether JointStates may be given to :meth:`take`
    (False once it found it cannot take them)."""

    __slots__ = ("taken", "since_ns", "until_ns", "offers", "_read", "_in", "_fd", "_pack",
                 "_names", "_tf", "_senders", "_with_base", "_massless_at", "_timeout",
                 "_messages", "_balance", "_kernel", "_w_H_b", "_wrenches", "_times",
                 "_k", "_model", "_cuts", "_steady", "_targets", "_call", "_direct",
                 "_layouts", "_shared", "_fixed", "_live", "_sends", "_tf_gate", "_ok",
                 "_balance_sends", "_balance_names", "_render_balance", "_merging", "_merged",
                 "_unread", "_fd_note", "_markers", "_balance_messages", "_bal_len", "_bal_spec",
                 "_bal_model", "_bal_pack", "_bal_sends", "_bal_state", "_balancing")

    @classmethod
    def learn(cls, loop, tick, read):
        """The SteadyTick of the ticks after ``tick`` (computed the plain way by ``loop``, a
        :class:`.loop.TickLoop`, while the publishers ``read`` were read), or None when
        those ticks need the plain way (:meth:`_make`), or forward dynamics failed."""
        if tick.result.forward_dynamics_error:
            return None
        state = tick.state
        base = (state.w_H_b, state.base_vel, tick.have_base, state.representation)
        return cls._make(loop, read, tick.stamp_ns, tick.inputs, base, loop.ticker.prepared,
                         tick.result.base_acceleration is not None,
                         len(tick.result.packed) - 1)

    def follow(self, loop):
        """The SteadyTick of the latest JointState's tick and those after it, once odometry
        or wrenches were taken since this one (:attr:`taken` is not the inputs') or its
        stamp is not in [:attr:`since_ns`, :attr:`until_ns`): the inputs matched to its
        stamp (:meth:`.inputs.SensorInputs.for_tick`), their base state and PreparedTick;
        None when the plain way must compute it (:meth:`_make`). When the inputs are new
        values of this one's (:meth:`_newest`) matched to that stamp, this one renewed."""
        sensors, ticker = loop.inputs, loop.ticker
        stamp_ns = sensors.joint_state_stamp_ns
        newest = self._newest(sensors, ticker.contacts)
        if newest is not None and newest[2] <= stamp_ns:
            return self if self._renew(loop, *newest) else None
        inputs = sensors.for_tick(stamp_ns, ticker.contacts, loop.settings.wrench_timeout)
        odometry = inputs.odometry
        if not _base_from(loop, odometry):     # (before base_state: it would log or need s)
            return None
        w_H_b, nu, have_base = ticker.base_state(odometry, None, None)
        base = (w_H_b, nu, have_base, self._in.base[3])
        return self._make(loop, self._read, stamp_ns, inputs, base,
                          ticker.prepare(inputs.wrenches), self._fd, self._massless_at, self)

    def catch_up(self, loop):
        """Renew this one to the odometry and wrenches taken since (:attr:`taken` is not the
        inputs'), before a JointState's stamp is known, when they are new values of its
        inputs (:meth:`_newest`): True, its ticks then those of the stamps from the newest
        of theirs on (:attr:`since_ns`; :meth:`take` declines an earlier one, and
        :meth:`follow` matches it); False when not (nothing changed)."""
        newest = self._newest(loop.inputs, loop.ticker.contacts)
        return newest is not None and self._renew(loop, *newest)

    def _newest(self, sensors, contacts):
        """(odometry, [(contact, Timed)], since_ns): each buffer's newest input, when these
        are of the same links as this one's (the odometry's child; each wrench's contact
        and frame, in the order of ``contacts``) and none was left out as stale here; else
        None (the general way). :meth:`.inputs.SensorInputs.for_tick` matches them to every
        stamp from ``since_ns`` (the newest of their stamps; 0 for none) on."""
        odometry = sensors.odometry_buffer[-1] if sensors.odometry_buffer else None
        mine, since = self._in.odometry, 0
        if (odometry is None) != (mine is None) or odometry is not None and \
                odometry.frame != mine.frame:
            return None
        if odometry is not None:
            since = odometry.stamp_ns
        wrenches, buffers, frames = [], sensors.wrench_buffers, self._in.wrenches
        for contact in contacts:
            buffer = buffers.get(contact)
            if buffer:
                w = buffer[-1]
                known = frames.get(contact)
                if known is None or known[0] != w.frame:
                    return None
                wrenches.append((contact, w))
                if w.stamp_ns > since:
                    since = w.stamp_ns
        if len(wrenches) != len(frames):
            return None
        return odometry, wrenches, since

    def _renew(self, loop, odometry, matched, since_ns):
        """This one's inputs renewed in place to :meth:`_newest`'s: their base state and
        PreparedTick (the same targets, new values), its ticks the stamps from ``since_ns``
        on; the layout, pack and publishing stay (a take given up is asked for again, as by
        a steady tick made anew). False (nothing changed) when the core refuses them (the
        plain way then names why)."""
        wrenches = {contact: (w.frame, w.value) for contact, w in matched}
        prepared = self._in.prepared.renewed(wrenches)
        if prepared is None:
            return False
        base, times = self._in.base, self._times
        if odometry is not None:
            w_H_b, nu, have_base = loop.ticker.base_state(odometry, None, None)
            base = (w_H_b, nu, have_base, base[3])
            self._w_H_b = w_H_b
            times[1] = odometry.stamp_ns
        stamps = []
        for k, (contact, w) in enumerate(matched):
            stamps.append((contact, w.stamp_ns))
            times[2 + k] = w.stamp_ns
        self._in = _Inputs(odometry, wrenches, stamps, base, prepared)
        self._wrenches = prepared.values
        self._balance_arguments(loop)
        self.taken, self.since_ns, self.until_ns = loop.inputs.taken, since_ns, NEVER
        if self._merging is None:
            self._merging, self.offers = _UNASKED, True
        self._choose_call()
        return True

    @classmethod
    def _make(cls, loop, read, stamp_ns, inputs, base, prepared, fd, massless_at, like=None):
        """The SteadyTick of a tick at ``stamp_ns`` with ``inputs`` (TickInputs), ``base``
        (w_H_b, base velocity, from odometry?, representation), ``prepared`` (the
        PreparedTick of its wrenches), forward dynamics (``fd``) and ~/forward_dynamics'
        massless flag at ``massless_at`` of the kernel's output (``like``: a SteadyTick of the
        same readers and settings, whose publishing it takes); None when the next ticks
        need the plain way: no matches kept by the inputs, a stale wrench, a base state not
        from the odometry alone (:func:`_base_from`), no compiled PreparedTick, its kernel
        not loaded yet (:func:`..dynamics.compiled.steady_ready`: a start that compiled it)
        or no usable template pack with the compiled scatter. Its wrenches' stamps, and the
        stamp from which newer inputs apply, come from the matches once
        (:meth:`.inputs.SensorInputs.kept_matches`): its ticks are those of the stamps in
        between."""
        matches = loop.inputs.kept_matches()
        if matches is None or inputs.stale or prepared is None or not steady_ready() \
                or not same_inputs(prepared.frame_wrenches, inputs.wrenches) \
                or not _base_from(loop, inputs.odometry):
            return None
        pack = loop.model.messages.pack_for(fd, inputs)
        if not pack or pack.scatter_arguments() is None:       # (no compiled scatter)
            return None
        stamps = [(c, w.stamp_ns) for c, w in matches[1] if c in inputs.wrenches]
        return cls(loop, read, (stamp_ns, matches[2]), inputs.odometry, inputs.wrenches,
                   stamps, base, prepared, pack, fd, massless_at, like)

    def __init__(self, loop, read, span_ns, odometry, wrenches, stamps, base, prepared, pack,
                 fd, massless_at, like=None):
        settings = loop.settings
        self.taken, self._read = loop.inputs.taken, read
        self.since_ns, self.until_ns = span_ns     # (its ticks: the stamps in [since, until))
        self._in = _Inputs(odometry, wrenches, stamps, base, prepared)
        self._fd, self._pack = fd, pack
        self._with_base = settings.publish_base_tf and base[2]
        self._massless_at = massless_at
        self._balance = not read.isdisjoint(loop.balance)     # ~/zmp, ... read
        if like is not None:
            self._markers = like._markers
            self._names, self._tf, self._senders = like._names, like._tf, like._senders
            self._timeout, self._messages = like._timeout, like._messages
            self._balance_sends = like._balance_sends
            self._balance_names, self._render_balance = like._balance_names, \
                like._render_balance
            self._balance_messages = like._balance_messages
            self._bal_pack, self._bal_sends = like._bal_pack, like._bal_sends
        else:
            self._markers = loop.markers_gate(read)
            names = [n for n in _PER_TICK if loop.by_name[n] in read]
            self._names = (tuple(names), (*names, "tf"))          # without, with /tf
            self._tf = settings.publish_tf and loop.publishers.tf in read
            self._senders = {name: byte_publisher(p) for name, p in loop.by_name.items()}
            self._timeout, self._messages = float(settings.wrench_timeout), \
                loop.model.messages
            self._balance_sends = tuple((name, *byte_publisher(p))
                                        for p, name in loop.balance_read(read))
            self._balance_names = [name for name, _, _ in self._balance_sends]
            self._balance_messages = loop.model.balance_messages
            self._render_balance = self._balance_messages.render_vector
            self._bal_pack, self._bal_sends = NO_BALANCE_PACK, ()
        self._bal_state, self._bal_model = np.zeros(2, np.int64), None
        self._arguments(loop, like)

    def _arguments(self, loop, like):
        """The arguments of :func:`..dynamics.kernels.steady_tick` that stay the same from
        tick to tick (:meth:`run` gives the others), and the names and aliases of the
        messages it renders without /tf and with it; those of the readers, model and
        services (``_fixed``) taken from ``like`` when given."""
        odometry, _, stamps, base, prepared = self._in
        kernels, self._model, (self._targets, self._wrenches), size, shape = \
            prepared.arguments()
        self._w_H_b, _, _, representation = base
        n = loop.ticker.kd.NDoF
        self._k, self._kernel, self._ok = kernels, kernels.steady_tick, kernels.OK
        self._direct = direct(self._kernel)        # (~6 us: once, not at each renewal)
        # (the kernel's results: out, poses, ages, state, then the balance outputs)
        self._cuts = (*kernels.steady_results_layout(size, shape[0], 1 + len(stamps), n),
                      shape, (2, n))
        self._merged, self._unread = kernels.MERGED, kernels.UNREAD
        self._merging, self._fd_note = _UNASKED, None      # (asked by take(): _ask)
        self.offers = True
        if like is not None and like._with_base == self._with_base \
                and like._pack is self._pack:
            self._layouts, self._shared, self._fixed, self._live, self._sends, \
                self._tf_gate = like._layouts, like._shared, like._fixed, like._live, \
                like._sends, like._tf_gate
        else:
            self._layouts = tuple(self._messages.packed_layout(names, self._fd,
                                                               self._with_base)
                                  for names in self._names)
            shared = loop.planners.shared(n, representation)
            self._shared = shared is not None
            scatter = self._pack.scatter_arguments()
            self._fixed = (*(shared or (_NO_WORDS, 0, 0, 0)), *scatter)
            # (handle, publish, its bytes) of each message published, without /tf and with:
            # its bytes a copy of its slice of the kernel's buffer (a memoryview's tobytes)
            view = memoryview(scatter[0])
            self._sends = tuple(
                tuple((*self._senders[name], view[start:end].tobytes)
                      for name, (start, end) in zip(names, self._pack.slices(names, aliases)))
                for names, aliases, _ in self._layouts)
            merger = loop.inputs.merger          # (its merged array itself)
            self._live = merger.merged_arrays()[0]
            self._fixed += merger.mimic_arrays()
            self._tf_gate = loop.tf_gate()
        self._times = np.array([0, 0 if odometry is None else odometry.stamp_ns,
                                *(stamp for _, stamp in stamps)], np.int64)
        self._balance_arguments(loop)
        self._fixed_arguments()

    def _fixed_arguments(self, merging=_NO_MERGE):
        """The kernel's arguments that stay from tick to tick, in one
        (:func:`..dynamics.kernels.steady_arguments`: dispatched as one), with the merge's
        ``merging`` (:meth:`_ask`; by default none: empty arrays of their types)."""
        poses_at, _, _, _, shape, _ = self._cuts
        self._steady = self._k.steady_arguments(
            *merging, *self._model, self._live, self._targets, self._times,
            bool(self._tf and self._layouts[1][2]), self._in.odometry is not None,
            self._timeout, bool(self._fd), *self._fixed, poses_at, shape[0])
        self._choose_call()

    def _choose_call(self):
        """The kernel called without numba's dispatch (:func:`..dynamics.compiled.direct`:
        ~5-7 us less per tick in a node at 1 kHz) while the arguments renewed are of its
        signature: the two made by the kernels (:func:`..dynamics.kernels.steady_arguments`
        and ``steady_balancing``: of their one signature's types) and the base's and
        wrenches' arrays (:func:`..dynamics.compiled.direct_arrays`); else through numba's
        dispatch, which raises TypeError on another type. The rest of each call is of its
        types by making: bytes, ints and a new float64 array."""
        self._call, got = self._kernel, self._direct
        if got is not None and self._steady._numba_type_ is got[1][4] \
                and self._balancing._numba_type_ is got[1][9] \
                and direct_arrays((self._w_H_b, 2), (self._in.base[1], 1), (self._wrenches, 1)):
            self._call = got[0]

    def _balance_arguments(self, loop):
        """The kernel's balance arguments for this one's wrenches, while the balance
        outputs are read (:meth:`_publish_balance`): the length of its balance vector
        (``_bal_len``; 0: none computed) and ``balancing`` (:func:`..dynamics.kernels.
        _steady_balance`: the core's arguments, then the messages' pack of the last pattern
        of defined CoPs, :meth:`_learn_pack`)."""
        got = None
        if self._balance:
            threshold = loop.ticker.settings.contact_force_threshold
            got = self._in.prepared.balance_arguments(loop.ticker.geometry, threshold)
        if got is None:
            self._bal_len, self._bal_spec, self._balancing = 0, None, no_balancing(self._k)
            self._bal_model = None
            return
        names, layout, model = got
        self._bal_len, self._bal_spec = int(layout[-1]), (names, layout, threshold)
        # new values of the same wrenches (the rows the core holds for the same contacts
        # and wrench frames; the same threshold): the holder stays, the kernel reads them
        held = self._bal_model
        if held is not None and model[2] is held[2] and model[8] == held[8]:
            return
        self._bal_model = model
        self._balancing = self._k.steady_balancing((*model, *self._bal_pack, self._bal_state))

    def run(self, loop, read):
        """Compute, hand the services and publish the tick of the latest JointState of
        ``loop`` (publishers ``read``) as :meth:`.loop.TickLoop.tick` would, with the inputs
        of this SteadyTick (:attr:`taken` is the inputs'); its :class:`SteadyTickRecord`, or
        None (nothing done) when it needs the plain way.

        One kernel call and two functions: in the running node each Python call costs
        0.5-2 us on cold caches (docs/performance.md, "Session 34"; the kernel in place of
        three calls and the Python between them: "Session 36")."""
        sensors, stamp_ns = loop.inputs, loop.inputs.joint_state_stamp_ns
        if not self.since_ns <= stamp_ns < self.until_ns \
                or (read is not self._read and read != self._read):
            return None
        tau, fd_note = loop.ticker.torques(sensors.merger,
                                           loop.publishers.forward_dynamics in read)
        if (tau is not None) != self._fd:
            return None
        # one kernel: the ages [s] of the odometry (0 without) and of each wrench (a wrench
        # further than wrench_timeout is stale: the plain way logs it), the joints' state
        # copied from the merged values (mimic joints from their masters), the tick, its
        # state shared with the services' process (before the outputs: who got them can
        # ask) and every per-tick message rendered (the base pose whenever /tf may carry it)
        results = np.empty(self._cuts[3] + self._bal_len)
        self._times[0] = stamp_ns
        if self._call(b"", 0, 0, 0, self._steady, self._w_H_b, self._in.base[1],
                      self._wrenches, results, self._balancing) != self._ok:
            return None
        return self._publish(loop, read, stamp_ns, fd_note, results)

    def _ask(self, loop):
        """Whether :meth:`take` can take the JointStates of ``loop``: those of the one name
        list the compiled merge knows (:meth:`.inputs.SensorInputs.merge_arguments`), while
        each ticks at once and forward dynamics' note can only be this steady tick's (every
        joint received, each effort unless forward dynamics is off by the settings or the
        readers). Asked once, by the first :meth:`take` (not for the steady ticks that only
        follow odometry and wrenches at each JointState); :attr:`offers` False when not."""
        self._merging = None
        if loop.takes_joint_states and loop.ticker.every_joint_received:
            note = loop.ticker.torques(loop.inputs.merger,
                                       loop.publishers.forward_dynamics in self._read)[1]
            if (note == "") == self._fd and note is not EFFORTS_MISSING:
                self._merging, self._fd_note = loop.inputs.merge_arguments(), note
        self.offers = self._merging is not None
        if self.offers:
            self._fixed_arguments(self._merging)
        return self.offers

    def take(self, loop, read, data, last_ns):
        """Take the JointState ``data`` (CDR bytes) and tick it as :meth:`run` would once
        :meth:`.inputs.SensorInputs.take_joint_state` took it, in one kernel call
        (:func:`..dynamics.kernels.steady_tick` given the bytes: merged, then ticked), when
        its stamp is after ``last_ns`` (the last tick's): its :class:`SteadyTickRecord`;
        None when it was taken but not ticked (the plain way ticks it); False when it was
        not taken (nothing changed: the plain way takes it, and names what is wrong). Asked
        while :attr:`offers` (:meth:`_ask`, once)."""
        sensors = loop.inputs
        if read is not self._read and read != self._read or type(data) is not bytes \
                or self._fd and not sensors.merger.efforts_complete \
                or self._merging is _UNASKED and not self._ask(loop) or self._merging is None:
            return False            # (missing efforts may come with it: known once merged)
        results = np.empty(self._cuts[3] + self._bal_len)
        times = self._times
        status = self._call(data, last_ns, self.since_ns, self.until_ns, self._steady,
                            self._w_H_b, self._in.base[1], self._wrenches, results,
                            self._balancing)
        if status != self._ok:
            if status == self._merged:
                sensors.joint_state_merged(times.item(0))
                return None
            if status == self._unread:      # (another name list, or another layout: this
                # one takes no more, the next one made asks)
                self._merging, self.offers = None, False
            return False
        stamp_ns = times.item(0)
        sensors.joint_state_merged(stamp_ns)
        return self._publish(loop, read, stamp_ns, self._fd_note, results)

    def _publish(self, loop, read, stamp_ns, fd_note, results):
        """The record of a tick the kernel computed (``results``: its out, poses, ages,
        state and balance vector), its state handed to the services (when not shared by
        the kernel), its messages published."""
        ticker = loop.ticker
        record = SteadyTickRecord(self, stamp_ns, results, fd_note, ticker)
        if self._fd and results[self._massless_at]:   # (out's; their names: the result's)
            record.fd_note = ticker.massless_note(record.result.massless_joints)
        if not self._shared:
            loop.planners.write(record.state)
        # published through the handles (:func:`.outputs.byte_publisher`; the order and
        # gates of TickLoop.render: /tf by TickLoop.tf_turn's gate)
        due, period = self._tf_gate
        for handle, publish, data in self._sends[
                self._tf and (due is None or due(stamp_ns, period))]:
            with handle:
                publish(data())
        if self._balance:           # (computed only while read)
            self._publish_balance(loop, record, read, results[self._cuts[3]:])
        markers = self._markers     # (TickLoop.publish_markers' gate)
        if markers is not None and markers[0](loop.inputs.joint_state_received_ns, markers[1]):
            loop.publish_markers_of(record)
        return record

    def _publish_balance(self, loop, record, read, balanced):
        """~/zmp, ~/capture_point and ~/cop of the tick while read, as
        :meth:`.loop.TickLoop.balance_messages` gives them: their numbers from the kernel's
        balance vector ``balanced`` (``PreparedTick.balance_vector``'s: no TickResult
        made), published through the handles; their bytes written by the kernel when its
        CoPs were defined as in the messages' pack it was given (most ticks), else rendered
        here (and that pack given for the next ticks: :meth:`_learn_pack`); from the
        record's result where the vector cannot give them (an active contact not a sole)."""
        state, spec = self._bal_state, self._bal_spec
        vector = None
        if spec is not None and state.item(0) == self._ok:
            vector = (spec[0], balanced, spec[1], spec[2])
        record.balance_vector = vector
        if vector is not None and state.item(1):        # (the kernel wrote their bytes)
            for handle, publish, data, at in self._bal_sends:
                if at is None or balanced[at]:
                    with handle:
                        publish(data())
            return
        rendered = self._render_balance(vector, ns_words(record.stamp_ns),
                                        self._balance_names)
        if rendered is None:
            for publisher, msg in loop.balance_messages(record.result, record.stamp, read):
                publisher.publish(msg)
            return
        for name, handle, publish in self._balance_sends:
            data = rendered.get(name)
            if data is not None:
                with handle:
                    publish(data)
        if rendered:
            self._learn_pack(vector)

    def _learn_pack(self, vector):
        """Give the kernel the balance messages' pack of ``vector``'s pattern of defined
        CoPs (:meth:`.balance_outputs.BalanceMessages.pack_for`), and the publishing of
        their bytes from its buffer: ~/cop, and ~/zmp and ~/capture_point when defined
        (:func:`.balance_outputs.defined_at`)."""
        got = self._balance_messages.pack_for(vector)
        if not got:
            return
        pack, defined = got
        arguments = pack.scatter_arguments()
        if arguments is None:                   # (no compiled scatter: rendered each tick)
            return
        view, lay = memoryview(arguments[0]), vector[2]
        self._bal_sends = tuple(
            (handle, publish, view[start:end].tobytes, defined_at(name, lay))
            for (name, handle, publish), (start, end)
            in zip(self._balance_sends, pack.slices(self._balance_names)))
        self._bal_pack = (np.array(defined, np.int64), *arguments)
        self._balancing = self._k.steady_balancing((*self._bal_model, *self._bal_pack,
                                                    self._bal_state))
        self._choose_call()


def _base_from(loop, odometry):
    """Whether the base state of a steady tick can come from ``odometry`` (the matched
    :class:`.inputs.Timed` or None) alone: odometry of the root link, or none with
    use_odometry off (no odometry yet: the plain way logs it; odometry of another link: its
    base state depends on the joints)."""
    if odometry is None:
        return not loop.settings.use_odometry
    return odometry.frame == loop.ticker.kd.model.root_link


class SteadyTickRecord(Tick):
    """The :class:`.tick.Tick` of a steady tick: its ``state`` (from the joints' (2, n)
    positions and velocities and the steady tick's base at this tick), ``inputs`` (a
    TickInputs) and ``result`` (the core's TickResult) made when first read (the node's
    diagnostics read the inputs once a second; most ticks none), with the balance vector
    the tick computed for its balance outputs, if it did (``balance_vector``: not again
    for the contact mechanics)."""

    __slots__ = ("_in", "_fd", "_results", "_cuts", "_ticker", "_state", "_inputs", "_made",
                 "balance_vector")

    def __init__(self, steady, stamp_ns, results, fd_note, ticker):
        self._in, self._fd = steady._in, steady._fd   # (this tick's inputs: renewed after)
        self.stamp_ns, self.have_base, self.fd_note = stamp_ns, self._in.base[2], fd_note
        self._results, self._cuts = results, steady._cuts     # (its views made when read)
        self._ticker, self._state, self._inputs, self._made = ticker, None, None, None
        self.balance_vector = None

    @property
    def state(self):
        if self._state is None:
            w_H_b, nu, _, representation = self._in.base
            _, _, at, end, _, pair = self._cuts
            joints = self._results[at:end].reshape(pair)
            self._state = MeasuredState(w_H_b, joints[0], nu, joints[1], representation)
        return self._state

    @property
    def inputs(self):
        if self._inputs is None:
            odometry, wrenches, stamps, _, _ = self._in
            _, at, end, _, _, _ = self._cuts
            ages = self._results[at:end].tolist()
            self._inputs = TickInputs(
                self.stamp_ns, odometry, dict(wrenches), set(),
                None if odometry is None else ages[0],
                {c: age for (c, _), age in zip(stamps, ages[1:])})
        return self._inputs

    @property
    def result(self):
        if self._made is None:
            ticker = self._ticker
            at, end, _, _, shape, _ = self._cuts
            results = self._results
            self._made = self._in.prepared.result(
                self.state.w_H_b, results[:at], results[at:end].reshape(shape), self._fd,
                ticker.geometry, ticker.settings.contact_force_threshold)
            if self.balance_vector is not None:       # (the same kernel's, the same inputs)
                vars(self._made)["balance_vector"] = self.balance_vector
        return self._made
