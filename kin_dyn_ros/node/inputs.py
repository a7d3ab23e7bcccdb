"""The node's sensor inputs: joint states (merged by name), odometry and contact wrenches,
taken as bytes, read by :mod:`.cdr`, validated, kept, and matched to a JointState's stamp.

Taking them (:func:`subscribe_sensors`): on the node's :class:`.sensor_thread.SensorThread`
(the default: a wait set of just these subscriptions, ~0.25 ms less CPU per message than
rclpy's executor) or, with ``sensor_thread: false`` or where the thread's private rclpy API
is missing, on whatever executor spins the node. Either way every callback runs under the
lock given: the owner's one lock, also taken by its timers and parameter changes (never by
its services, which read a snapshot).

Matching (:meth:`SensorInputs.for_tick`): a tick uses the odometry and the wrench of each
contact with the JointState's stamp, else the newest one not newer, else the oldest one kept
(all newer); how far each was from the JointState's stamp is reported with the tick, so a
consumer can reject mismatched ticks.
"""

import functools
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.qos import qos_profile_sensor_data
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState

from ..dynamics.compiled import compiled_kernels
from ..dynamics.quaternions import QUATERNION_TOLERANCE
from .cdr import InputReader
from .compiled_inputs import CompiledJointStates, CompiledStamped
from .conversions import finite_array, ns_to_stamp, pose_list_to_matrix
from .outputs import NO_SUBSCRIPTION_EVENTS
from .sensor_thread import SensorThread

__all__ = ["INPUT_BUFFER", "NEVER", "Timed", "TickInputs", "SensorInputs", "subscribe_sensors"]

INPUT_BUFFER = 32   # odometry and wrench messages kept to match a JointState's stamp
NEVER = 2**63 - 1   # [ns] a stamp no input reaches (int64: the steady tick kernel's too)


class OdometryValue(NamedTuple):
    """An odometry's value: ``pose`` w_H_c (4, 4) and ``twist`` (6,) [v; w] in C's axes
    (BODY), and ``mixed``, the same twist in the world's axes [R v; R w] (MIXED), when the
    compiled reader gave it (else None)."""

    pose: object
    twist: object
    mixed: object = None


class Timed(NamedTuple):
    """A validated input: odometry (frame = child link, value = an :class:`OdometryValue`)
    or a wrench (frame = expressed-in link, value = (6,) [force; torque]); stamp and arrival
    on the node's clock in ns. (A named tuple: made at up to 3 kHz, a third of a frozen
    dataclass's cost.)"""

    frame: str
    value: object
    stamp_ns: int
    received_ns: int


def matching(buffer, stamp_ns):
    """The input of ``buffer`` with the stamp ``stamp_ns``, else the newest one not newer,
    else the oldest one (every buffered input is newer); None for an empty buffer."""
    return matched(buffer, stamp_ns)[0]


def matched(buffer, stamp_ns):
    """(:func:`matching`'s input, the first stamp [ns] from which a later stamp matches
    another: the least of the inputs' taken after it, all newer than ``stamp_ns``; NEVER
    when none was); (None, NEVER) for an empty buffer."""
    if not buffer:
        return None, NEVER
    until = later = NEVER           # (later: the least stamp after the entry looked at)
    for entry in reversed(buffer):
        if entry.stamp_ns <= stamp_ns:
            return entry, until
        later, until = until, min(until, entry.stamp_ns)
    return buffer[0], later         # (every one newer: the oldest, until the next one's)


@dataclass
class TickInputs:
    """What a tick at ``stamp_ns`` combines with its JointState: the matched odometry (None:
    none yet), the wrenches within wrench_timeout ({contact: (expressed link, w (6,))}), the
    contacts left out as stale, and the age [s] (JointState stamp minus input stamp) of the
    odometry (None without) and of each wrench used ({contact: age})."""

    stamp_ns: int
    odometry: Timed = None
    wrenches: dict = field(default_factory=dict)
    stale: set = field(default_factory=set)
    odometry_age: float = None
    wrench_ages: dict = field(default_factory=dict)


class SensorInputs:
    """The latest inputs of the node, and their recent history.

    ``now_ns()`` is the node clock [ns] (arrival times, unstamped messages); ``frame_of(id)``
    the model link of a frame id or None (set by :meth:`configure`, None: no model). With
    ``ignore_timestamp`` (:meth:`configure`) every input is stamped on arrival, and each
    JointState later than the one before (by 1 ns when the clock has not advanced), so that
    each one ticks.
    Every ``take_*`` raises ValueError naming what was wrong (the input is then dropped and
    nothing is changed).
    """

    def __init__(self, now_ns):
        self._now_ns, self._reader = now_ns, InputReader()
        self._frame_of, self._world = None, ""
        self.merger = None                    # conversions.JointStateMerger of the model
        self._compiled = None                 # its CompiledJointStates (the compiled path)
        self._stamped = None                  # CompiledStamped (the compiled path)
        self.joint_state_stamp_ns = self.joint_state_received_ns = None   # of the latest
        self.ignore_timestamp = False
        self.odometry = None                  # the latest (diagnostics)
        self.odometry_buffer = deque(maxlen=INPUT_BUFFER)
        self.wrenches, self.wrench_buffers = {}, {}
        # a count of the odometry and wrench messages taken (and configurations): when it
        # has not changed, no input a tick combines has (read by the tick; only this class
        # counts)
        self.taken = 0
        self._matches = None        # for_tick's kept matches

    def configure(self, merger, frame_of, world_frame, ignore_timestamp=False):
        """A new model (its JointStateMerger and frame lookup), world frame or
        ``ignore_timestamp``; inputs naming frames the model lacks are dropped."""
        self.merger, self._frame_of, self._world = merger, frame_of, world_frame
        kernels = compiled_kernels() if merger is not None else None
        self._compiled = None if kernels is None else CompiledJointStates(kernels, merger)
        self._stamped = None if kernels is None \
            else CompiledStamped(kernels, QUATERNION_TOLERANCE)
        self.ignore_timestamp = ignore_timestamp
        self.taken += 1
        if frame_of is None:
            return
        if self.odometry is not None and frame_of(self.odometry.frame) is None:
            self.odometry = None
        self.odometry_buffer = deque((o for o in self.odometry_buffer
                                      if frame_of(o.frame) is not None), maxlen=INPUT_BUFFER)
        self.wrenches = {c: w for c, w in self.wrenches.items() if frame_of(w.frame)}
        self.wrench_buffers = {c: deque((w for w in b if frame_of(w.frame)), maxlen=INPUT_BUFFER)
                               for c, b in self.wrench_buffers.items()}

    def take_joint_state(self, data):
        """Merge a JointState (bytes or message) and keep its stamp (unstamped: arrival)."""
        if self.merger is None:
            raise ValueError("no robot_description yet")
        stamp = None if self._compiled is None else self._compiled.merge(data)
        if stamp is None:
            stamp = self._read_and_merge(data)
        self.joint_state_received_ns = now = self._now_ns()
        if self.ignore_timestamp:
            last = self.joint_state_stamp_ns
            stamp_ns = now if last is None or now > last or last - now > 1e9 else last + 1
            self.joint_state_stamp_ns = stamp_ns
            return
        self.joint_state_stamp_ns = stamp[0] * 1_000_000_000 + stamp[1] or now

    def merge_arguments(self):
        """The compiled merge's arguments for the JointStates of the one name list it knows
        (:meth:`.compiled_inputs.CompiledJointStates.sole_arguments`), for a caller that
        merges them itself (and then calls :meth:`joint_state_merged`); None without (the
        NumPy path, none or several lists learnt, or ``ignore_timestamp``: a stamp of its
        arrival)."""
        if self._compiled is None or self.ignore_timestamp:
            return None
        return self._compiled.sole_arguments()

    def joint_state_merged(self, stamp_ns):
        """A JointState of stamp ``stamp_ns`` [ns] (not 0) merged now by a caller of
        :meth:`merge_arguments`, as :meth:`take_joint_state` would have."""
        self.joint_state_stamp_ns, self.joint_state_received_ns = stamp_ns, self._now_ns()

    @property
    def joint_state_stamp(self):
        """builtin_interfaces/Time of the latest JointState's stamp (its arrival when it had
        none), or None; made when read (a tick needs only :attr:`joint_state_stamp_ns`)."""
        ns = self.joint_state_stamp_ns
        return None if ns is None else ns_to_stamp(ns)

    def _read_and_merge(self, data):
        """Read and merge a JointState the plain way ((sec, nanosec) of its stamp); the
        common one (:meth:`.cdr.InputReader.joint_state_block`) is then learnt by the
        compiled merge."""
        block = self._reader.joint_state_block(data)     # (the common message: faster)
        if block is not None and self.merger.update_block(block):
            if self._compiled is not None:
                self._compiled.learn(block.name, self._reader.name_layout(block.name))
            msg = block
        else:
            msg = self._merge(data)
        return msg.stamp.sec, msg.stamp.nanosec

    def _merge(self, data):
        """Read and merge a JointState (bytes or message); the message read."""
        msg = self._reader.joint_state(data)
        if not self.merger.update(msg) and not self.merger.knows_any(msg.name):
            raise ValueError(f"it names no joint of the model ({len(msg.name)} names)")
        return msg

    def take_odometry(self, data):
        """Keep a nav_msgs/Odometry (bytes or message) in world_frame (or no frame_id)."""
        got = None if self._stamped is None else self._stamped.odometry(data)
        if got is not None:
            stamp, child, pose, twist, mixed = got
            self.odometry = self._timed(child, OdometryValue(pose, twist, mixed), stamp)
        else:
            odom = self._reader.odometry(data)
            if odom.frame_id not in ("", self._world):
                raise ValueError(f"frame_id '{odom.frame_id}' is not world_frame "
                                 f"'{self._world}'")
            child = self._link(odom.child_frame_id, "child_frame_id")
            value = OdometryValue(pose_list_to_matrix(odom.pose),
                                  finite_array("twist", odom.twist))
            self.odometry = self._timed(child, value, (odom.stamp.sec, odom.stamp.nanosec))
            if self._stamped is not None:
                self._stamped.learn_odometry(data, child)
        self.odometry_buffer.append(self.odometry)
        self.taken += 1

    def take_wrench(self, contact, data):
        """Keep a WrenchStamped (bytes or message) of ``contact`` (no frame_id: the contact's
        link)."""
        got = None if self._stamped is None else self._stamped.wrench(contact, data)
        if got is not None:
            stamp, frame, wrench = got
            entry = self._timed(frame, wrench, stamp)
        else:
            msg = self._reader.wrench(data)
            frame = self._link(msg.frame_id or contact, "frame_id")
            entry = self._timed(frame, finite_array("wrench", msg.wrench),
                                (msg.stamp.sec, msg.stamp.nanosec))
            if self._stamped is not None:
                self._stamped.learn_wrench(contact, data, frame)
        self.wrenches[contact] = entry
        buffer = self.wrench_buffers.get(contact)      # (no deque made per message)
        if buffer is None:
            buffer = self.wrench_buffers[contact] = deque(maxlen=INPUT_BUFFER)
        buffer.append(entry)
        self.taken += 1

    def _link(self, frame_id, what):
        if self._frame_of is None:
            raise ValueError("no robot_description yet")
        link = self._frame_of(frame_id)
        if link is None:
            raise ValueError(f"{what} '{frame_id}' is not a link of the model")
        return link

    def _timed(self, frame, value, stamp):
        """:class:`Timed` of a value stamped ``stamp`` ((sec, nanosec))."""
        now = self._now_ns()
        stamp_ns = not self.ignore_timestamp and stamp[0] * 1_000_000_000 + stamp[1]
        return Timed(frame, value, stamp_ns or now, now)

    def kept_matches(self):
        """(odometry Timed or None, [(contact, Timed)], until_ns) of the last :meth:`for_tick`
        (stamp t): until :attr:`taken` changes, the matches of every stamp in [t,
        until_ns) too (NEVER: of every later stamp); None when it kept none."""
        kept = self._matches
        return None if kept is None or kept[0] != self.taken else (kept[4], kept[5], kept[3])

    def for_tick(self, stamp_ns, contacts, wrench_timeout):
        """:class:`TickInputs` of a tick at JointState stamp ``stamp_ns`` [ns] for the
        ``contacts`` of the model; a wrench further than ``wrench_timeout`` [s] is stale.

        The matches of the last call are kept, with the stamp up to which they hold (the
        least stamp of the inputs buffered after them, all newer: :func:`matched`): until an
        input is taken, they are the matches of every stamp from that call's up to it (most
        ticks: only the ages are computed)."""
        kept = self._matches
        if kept is not None and kept[0] == self.taken and kept[1] is contacts \
                and kept[2] <= stamp_ns < kept[3]:
            return _tick_inputs(stamp_ns, kept[4], kept[5], wrench_timeout)
        odometry, until = matched(self.odometry_buffer, stamp_ns)
        wrenches = []
        for contact in contacts:
            w, later = matched(self.wrench_buffers.get(contact), stamp_ns)
            if w is not None:
                wrenches.append((contact, w))
                until = min(until, later)
        self._matches = (self.taken, contacts, stamp_ns, until, odometry, wrenches)
        return _tick_inputs(stamp_ns, odometry, wrenches, wrench_timeout)


def _tick_inputs(stamp_ns, odometry, wrenches, wrench_timeout):
    """:class:`TickInputs` at ``stamp_ns`` of the matched ``odometry`` (or None) and
    ``wrenches`` [(contact, Timed)] (stale: further than ``wrench_timeout`` [s])."""
    out = TickInputs(stamp_ns, odometry)
    if odometry is not None:
        out.odometry_age = (stamp_ns - odometry.stamp_ns) * 1e-9
    for contact, w in wrenches:
        age = (stamp_ns - w.stamp_ns) * 1e-9
        if abs(age) <= wrench_timeout:
            out.wrenches[contact], out.wrench_ages[contact] = (w.frame, w.value), age
        else:
            out.stale.add(contact)
    return out


def _under(lock, callback):
    """``callback(*args)`` run under ``lock`` (its value returned)."""
    def locked(*args):
        with lock:
            return callback(*args)
    return locked


def subscribe_sensors(node, settings, lock, on_joint_state, on_odometry, on_wrench, on_error,
                      on_idle=None):
    """Create the sensor subscriptions of ``node`` (raw bytes, SensorDataQoS, QoS
    overridable): odometry (``settings.use_odometry``), each contact's wrench, joint_states,
    in that order (messages of one instant are then taken odometry and wrenches first).

    Their callbacks (``on_wrench(contact, data)``) run under ``lock``; ``on_idle``, called
    each time the thread has taken every pending input, takes it itself when it has work.
    Returns the started :class:`.sensor_thread.SensorThread` (``on_error`` as its), or None
    when they are left to the executor (``sensor_thread: false``, or the thread's private
    rclpy API is missing: :func:`.sensor_thread.available`)."""
    thread = None
    if settings.sensor_thread and SensorThread.available(node.get_logger()):
        thread = SensorThread(node, on_error, on_idle=on_idle, lock=lock,
                              realtime=(settings.thread_priority, settings.ticking_cpus))
    group = None if thread is None else thread.group

    def sensor(msg_type, topic, callback):      # (the thread takes the lock itself)
        node.create_subscription(
            msg_type, topic, callback if thread is not None else _under(lock, callback),
            qos_profile_sensor_data,
            callback_group=group, event_callbacks=NO_SUBSCRIPTION_EVENTS, raw=True,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
    if settings.use_odometry:
        sensor(Odometry, settings.odometry_topic, on_odometry)
    for contact, topic in settings.contact_topics:
        sensor(WrenchStamped, topic, functools.partial(on_wrench, contact))
    sensor(JointState, "joint_states", on_joint_state)
    if thread is not None:
        thread.start()
    return thread
