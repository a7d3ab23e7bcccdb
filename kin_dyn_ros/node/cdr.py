"""The node's sensor inputs read from their serialised bytes (CDR), not as message objects.

The node subscribes to joint_states, odometry and the contact wrenches with ``raw=True`` and
reads the fields it uses straight from the bytes. rclpy's deserialisation builds a Python
object for every nested message and checks every field in Python: taking a JointState of 32
joints cost 13 us as an object against 2.5 us as bytes, an Odometry ~100 us inside the node
at 1 kHz (32 us alone); reading them here costs ~7 and ~3.5 us (Jazzy wheels, 2-core VM). An
Odometry and the wrenches arrive with the JointState of the same instant, so their
conversion delayed that tick.

Format: plain CDR (XCDR1), little-endian, which every ROS 2 middleware sends by default. The
bytes start with a 4-byte encapsulation header, ``00 01`` then two option bytes, ``00 00``;
each primitive is aligned to its size counted from the end of that header; a string is a
uint32 length n then n bytes, the last a NUL (read as rclpy reads them: up to the first NUL,
invalid UTF-8 replaced); a sequence is a uint32 count then its elements. The padding bytes
may hold anything (Fast-CDR leaves them unwritten), so nothing here depends on them. Bytes
with another encapsulation (big-endian, XCDR2) or non-zero options are deserialised by
rclpy and read from the message object: the same result, slower. The options are where
the distributions differ: Jazzy's Fast CDR ignores them, Kilted's (Fast DDS 3) reads their
low two bits as a count of padding bytes at the end and drops those (rejecting ``00 01 00
01`` on a message without them); rmw_fastrtps sends ``00 00`` on both, and our message
types need no end padding. Bytes that end early or hold impossible counts raise
``ValueError``, as every conversion in :mod:`.conversions` does.

Each reader also takes a message object of its type (the tests and the benchmarks use both).

The common JointState (a name list seen before, and as many positions, velocities and
efforts as names) has a shorter read, :meth:`InputReader.joint_state_block`: its three
arrays as one view of the bytes, for :meth:`.conversions.JointStateMerger.update_block`
(~9 against ~19 us warm on iCub, reading and merging); any other message is read by
:meth:`InputReader.joint_state`.
"""

import struct
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

__all__ = ["InputReader", "JointStateBlock", "JointStateInput", "OdometryInput",
           "WrenchInput"]

_ENCAPSULATION = 4                      # bytes before the first field
_PLAIN_CDR_LE = b"\x00\x01\x00\x00"     # representation CDR_LE, options none
_COVARIANCE = 36 * 8                    # float64[36] of PoseWithCovariance, TwistWithCovariance
_U32 = struct.Struct("<I").unpack_from
_STAMP = struct.Struct("<iI").unpack_from      # builtin_interfaces/Time: sec, nanosec
_NAME_LAYOUTS = 8                       # JointState name lists remembered (one per publisher)
# Longer name lists are decoded on each message and not remembered: a list of 100,000 names
# would otherwise hold ~20 MB, and building its layout peaked at ~60 MB more, which the
# process kept (found by bench/soak.py's bad input).
REMEMBERED_NAMES_MAX = 1024


class JointStateInput(NamedTuple):
    """The fields of a sensor_msgs/JointState that the node uses; arrays (k,) float64 in
    ``name`` order (empty when the message had none)."""

    stamp: Time
    name: tuple
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


class JointStateBlock(NamedTuple):
    """A JointState of k names with k positions, k velocities and k efforts, as read from its
    bytes: ``values`` (3, k + 1) float64, a read-only view of the bytes whose rows are
    position, velocity and effort, each after one word that is not a value (column 0: a
    count and padding); ``values[:, 1:]`` are the values in ``name`` order."""

    stamp: Time
    name: tuple
    values: np.ndarray


class OdometryInput(NamedTuple):
    """nav_msgs/Odometry: ``pose`` (7,) [x, y, z, qx, qy, qz, qw] of child_frame_id in
    frame_id; ``twist`` (6,) [linear; angular] in child_frame_id's axes (REP-105)."""

    stamp: Time
    frame_id: str
    child_frame_id: str
    pose: np.ndarray
    twist: np.ndarray


class WrenchInput(NamedTuple):
    """geometry_msgs/WrenchStamped: ``wrench`` (6,) [force; torque] in frame_id."""

    stamp: Time
    frame_id: str
    wrench: np.ndarray


def _align(p, size):
    """Offset ``p`` in the bytes moved up to a multiple of ``size`` from the first field."""
    return p + (-(p - _ENCAPSULATION) % size)


def _string(data, p):
    """(the string at offset ``p``, the offset after it)."""
    p = _align(p, 4)
    (n,) = _U32(data, p)
    end = p + 4 + n
    if end > len(data):
        raise ValueError(f"a string of {n} bytes runs past the end")
    text = data[p + 4:end]
    nul = text.find(0)       # as rclpy: up to the first NUL, invalid UTF-8 replaced
    return (text if nul < 0 else text[:nul]).decode("utf-8", "replace"), end


def _header(data):
    """(stamp, frame_id, offset after the std_msgs/Header)."""
    if len(data) < _ENCAPSULATION + 12:
        raise ValueError(f"{len(data)} bytes: shorter than a header")
    sec, nanosec = _STAMP(data, _ENCAPSULATION)
    frame_id, p = _string(data, _ENCAPSULATION + 8)
    return Time(sec=sec, nanosec=nanosec), frame_id, p


def _doubles(data, p, count):
    """(float64 array (count,) at offset ``p`` aligned to 8, the offset after it)."""
    if count:
        p = _align(p, 8)
    values = np.frombuffer(data, "<f8", count, p)    # ValueError when the bytes end early
    return values.astype(float), p + 8 * count       # (a copy, writable)


def _sequence(data, p):
    """(float64[] sequence at offset ``p``, the offset after it)."""
    p = _align(p, 4)
    (count,) = _U32(data, p)
    if count > (len(data) - p) // 8:
        raise ValueError(f"a sequence of {count} float64 runs past the end")
    return _doubles(data, p + 4, count)


class _NameLayout:
    """A JointState name list as serialised: its bytes without the padding, to recognise
    the same list in the next messages without decoding it."""

    def __init__(self, data, start, end, keep, names):
        self.size, self.names = end - start, names
        self.raw = data[start:end]      # (with its padding: equal bytes are the same list)
        self.keep = np.array(keep, dtype=np.intp) - start
        self.expected = np.frombuffer(data, np.uint8, self.size, start)[self.keep]

    def matches(self, data, start):
        if data[start:start + self.size] == self.raw:
            return True
        if start + self.size > len(data):
            return False
        region = np.frombuffer(data, np.uint8, self.size, start)
        return bool((region[self.keep] == self.expected).all())


class InputReader:
    """Reads the node's sensor messages from their bytes (or from message objects).

    Remembers the last few JointState name lists (of at most :data:`REMEMBERED_NAMES_MAX`
    names): a list seen before costs one comparison of its bytes, not one decode per name.
    Each method raises ValueError for bytes that are not a message of its type.
    """

    def __init__(self):
        self._layouts = []

    def joint_state(self, data):
        """:class:`JointStateInput` of a sensor_msgs/JointState."""
        return _read(data, JointState, _joint_state_from_message, self._joint_state)

    @staticmethod
    def odometry(data):
        """:class:`OdometryInput` of a nav_msgs/Odometry."""
        return _read(data, Odometry, _odometry_from_message, _odometry)

    @staticmethod
    def wrench(data):
        """:class:`WrenchInput` of a geometry_msgs/WrenchStamped."""
        return _read(data, WrenchStamped, _wrench_from_message, _wrench)

    def _joint_state(self, data):
        stamp, _, p = _header(data)
        p = _align(p, 4)
        (count,) = _U32(data, p)
        names, p = self._names(data, p + 4, count)
        position, p = _sequence(data, p)
        velocity, p = _sequence(data, p)
        effort, p = _sequence(data, p)
        return JointStateInput(stamp, names, position, velocity, effort)

    def joint_state_block(self, data):
        """:class:`JointStateBlock` of a JointState's plain CDR bytes whose name list (not
        empty) was read before (and remembered) and that has a position, a velocity and an
        effort per name; None for anything else (a message object, other bytes, a new name
        list, arrays of other lengths): :meth:`joint_state` reads those (and raises for bad
        ones)."""
        if not isinstance(data, bytes) or data[:_ENCAPSULATION] != _PLAIN_CDR_LE \
                or len(data) < _ENCAPSULATION + 12:
            return None
        (n,) = _U32(data, _ENCAPSULATION + 8)                 # frame_id's length
        p = _align(_ENCAPSULATION + 12 + n, 4)
        if p + 4 > len(data):
            return None
        (count,) = _U32(data, p)
        known = self._known_names(data, p + 4, count) if count else None
        if known is None:
            return None
        names, p = known
        p = _align(p, 4)
        start = _align(p + 4, 8)          # the positions; velocities and efforts 8 bytes apart
        stride = 8 * (count + 1)
        if start + 3 * stride - 8 > len(data) or any(
                _U32(data, q)[0] != count for q in (p, start + stride - 8, start + 2 * stride - 8)):
            return None
        values = np.frombuffer(data, "<f8", 3 * (count + 1), start - 8).reshape(3, count + 1)
        sec, nanosec = _STAMP(data, _ENCAPSULATION)
        return JointStateBlock(Time(sec=sec, nanosec=nanosec), names, values)

    def name_layout(self, names):
        """The remembered layout of the name list ``names`` (its ``size`` in bytes, and the
        bytes ``expected`` at offsets ``keep`` from its first name: its padding left out),
        or None."""
        return next((layout for layout in self._layouts if layout.names == names), None)

    def _known_names(self, data, start, count):
        """(names, offset after them) of a remembered name list of ``count`` strings at
        ``start``, or None."""
        for layout in self._layouts:
            if len(layout.names) == count and layout.matches(data, start):
                return layout.names, start + layout.size
        return None

    def _names(self, data, start, count):
        """(names (tuple of str), offset after them) of ``count`` strings from ``start``."""
        known = self._known_names(data, start, count)
        if known is not None:
            return known
        if count > (len(data) - start) // 4:     # each string takes at least 4 bytes
            raise ValueError(f"{count} names run past the end")
        remember = count <= REMEMBERED_NAMES_MAX
        names, keep, p = [], [], start
        for _ in range(count):
            p = _align(p, 4)
            name, end = _string(data, p)
            names.append(name)
            if remember:
                keep.extend(range(p, end))
            p = end
        names = tuple(names)
        if remember:
            layout = _NameLayout(data, start, p, keep, names)
            self._layouts = [layout] + self._layouts[:_NAME_LAYOUTS - 1]
        return names, p


def _odometry(data):
    stamp, frame_id, p = _header(data)
    child, p = _string(data, p)
    pose, p = _doubles(data, p, 7)
    twist, p = _doubles(data, p + _COVARIANCE, 6)
    if p + _COVARIANCE > len(data):
        raise ValueError("the twist covariance runs past the end")
    return OdometryInput(stamp, frame_id, child, pose, twist)


def _wrench(data):
    stamp, frame_id, p = _header(data)
    wrench, _ = _doubles(data, p, 6)
    return WrenchInput(stamp, frame_id, wrench)


def _read(data, msg_type, from_message, from_bytes):
    """A message object, or bytes: plain little-endian CDR without options read by
    ``from_bytes``; any other encapsulation, or options (read differently by each
    distribution's Fast CDR), deserialised by rclpy first. ValueError for bytes that are
    not a ``msg_type``."""
    if not isinstance(data, bytes):
        return from_message(data)
    if data[:_ENCAPSULATION] != _PLAIN_CDR_LE:
        return from_message(_deserialize(data, msg_type))
    try:
        return from_bytes(data)
    except (struct.error, ValueError) as exc:
        raise ValueError(f"malformed {msg_type.__name__} bytes: {exc}") from None


def _deserialize(data, msg_type):
    try:
        return deserialize_message(data, msg_type)
    except Exception as exc:  # rclpy raises its own error types
        raise ValueError(f"cannot deserialise {msg_type.__name__}: {exc}") from None


def _floats(values):
    return np.asarray(values, dtype=float)


def _joint_state_from_message(msg):
    return JointStateInput(msg.header.stamp, tuple(msg.name), _floats(msg.position),
                           _floats(msg.velocity), _floats(msg.effort))


def _odometry_from_message(msg):
    p, q, t = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
    return OdometryInput(msg.header.stamp, msg.header.frame_id, msg.child_frame_id,
                         _floats((p.x, p.y, p.z, q.x, q.y, q.z, q.w)),
                         _floats((t.linear.x, t.linear.y, t.linear.z,
                                  t.angular.x, t.angular.y, t.angular.z)))


def _wrench_from_message(msg):
    f, t = msg.wrench.force, msg.wrench.torque
    return WrenchInput(msg.header.stamp, msg.header.frame_id,
                       _floats((f.x, f.y, f.z, t.x, t.y, t.z)))
