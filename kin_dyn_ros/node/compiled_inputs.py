"""The common sensor inputs read by one compiled call each, straight from their bytes: a
JointState merged (:class:`CompiledJointStates`), odometry and wrenches
(:class:`CompiledStamped`).

A JointState whose name list the node has merged before (one per publisher, e.g. one per
limb) and that carries a position, a velocity and an effort per name is most of what a
robot sends. Reading it (:meth:`.cdr.InputReader.joint_state_block`) and merging it
(:meth:`.conversions.JointStateMerger.update_block`) cost ~20 NumPy and Python calls, ~19
us warm and ~100 us in the running node at 1 kHz (caches cold between ticks);
:func:`..dynamics.kernels.merge_joint_state` does both in one call.

:class:`CompiledJointStates` is that fast path of :meth:`.inputs.SensorInputs.take_joint_state`:
:meth:`CompiledJointStates.merge` returns None for anything it does not take (a name list
it has not learnt, other array lengths, NaN or inf, another encoding, a message object), and
the plain path then reads the message as before (and names what is wrong). A name list is
learnt (:meth:`CompiledJointStates.learn`) once the plain path has merged it.
"""

import numpy as np

from ..dynamics.compiled import direct_call

__all__ = ["CompiledJointStates", "CompiledStamped", "LAYOUTS", "strings_layout"]

LAYOUTS = 8     # name lists kept (most recently merged first)


class CompiledJointStates:
    """Merges known JointStates into ``merger`` (a :class:`.conversions.JointStateMerger`)
    with ``kernels`` (:mod:`..dynamics.kernels`, compiled)."""

    def __init__(self, kernels, merger):
        self._merge, self._layout, self._ok = kernels.merge_joint_state, \
            kernels.merge_layout, kernels.OK
        self._merger = merger
        self._values, self._received, self._effort_received = merger.merged_arrays()
        # [(names, kernel arguments, how it is called)], most recent first
        self._layouts = []
        self._stamp = np.zeros(2, np.int64)

    def merge(self, data):
        """Merge ``data`` (JointState CDR bytes) when its name list is learnt; [sec,
        nanosec] of its stamp, or None (nothing changed)."""
        if not isinstance(data, bytes):
            return None
        raw = np.frombuffer(data, np.uint8)
        for k, (_, args, merge) in enumerate(self._layouts):
            if merge(raw, *args, self._values, self._received, self._effort_received,
                     self._stamp) == self._ok:
                if k:                                  # most recent first
                    self._layouts.insert(0, self._layouts.pop(k))
                return self._stamp.tolist()
        return None

    def sole_arguments(self):
        """(layout, expected, raw, block, received, effort_received, stamp): the arguments
        of :func:`..dynamics.kernels.merge_joint_state` but the bytes and the merged values,
        for the one name list learnt; None for none or several (:meth:`merge` tries each)."""
        if len(self._layouts) != 1:
            return None
        return (*self._layouts[0][1], self._received, self._effort_received, self._stamp)

    def learn(self, names, layout):
        """Take JointStates with the name list ``names`` (merged by ``merger`` before) as
        ``layout`` (:meth:`.cdr.InputReader.name_layout`) lays it out."""
        columns = self._merger.block_columns(names)
        if layout is None or columns is None or any(n == names for n, _, _ in self._layouts):
            return
        keep = np.asarray(layout.keep, np.int64)        # the compared offsets, as runs
        breaks = np.flatnonzero(np.diff(keep) != 1) + 1
        starts = keep[np.concatenate([[0], breaks])] if len(keep) else keep
        lengths = np.diff(np.concatenate([[0], breaks, [len(keep)]])) if len(keep) else keep
        raw = np.zeros(24 * (len(names) + 1), np.uint8)       # the kernel's scratch
        args = (self._layout(len(names), layout.size, starts, lengths, *columns),
                np.ascontiguousarray(layout.expected, np.uint8), raw, raw.view(np.float64))
        kept = (*args, self._values, self._received, self._effort_received, self._stamp)
        merge = direct_call(self._merge, dict(enumerate(kept, 1)))   # (the bytes: made)
        self._layouts = [(names, args, merge)] + self._layouts[:LAYOUTS - 1]


# byte offsets of the float64 blocks after the strings, from the first 8-aligned offset
# (cdr.py's readers): Odometry's pose (7), its covariance (36), the twist (6), its covariance;
# WrenchStamped's wrench (6)
_ODOMETRY = (np.array([0, 56 + 288], np.intp), np.array([7, 6], np.intp), 56 + 288 + 48 + 288)
_WRENCH = (np.array([0], np.intp), np.array([6], np.intp), 48)
_NO_POSE, _NO_TWIST = np.zeros((0, 0)), np.zeros(0)


def strings_layout(data, count):
    """(size, keep, expected) of the ``count`` strings from the header's frame_id on in
    plain little-endian CDR bytes ``data`` (read by the plain path before): the bytes they
    take, and the offsets (from the frame_id) and values of those that are not padding;
    None for other bytes."""
    if data[:4] != b"\x00\x01\x00\x00":
        return None
    p, keep = 12, []
    for _ in range(count):
        p += -(p - 4) % 4
        n = int.from_bytes(data[p:p + 4], "little")
        if p + 4 + n > len(data):
            return None
        keep.extend(range(p, p + 4 + n))
        p += 4 + n
    keep = np.array(keep, np.intp)
    return p - 12, keep - 12, np.frombuffer(data, np.uint8)[keep].copy()


class CompiledStamped:
    """Odometry and contact wrenches read by one compiled call
    (:func:`..dynamics.kernels.read_stamped`) once their frame ids are learnt (the last
    odometry's, each contact's last wrench's): the header, the strings compared, the
    numbers (NaN or inf: the plain path names them), the odometry's pose as a matrix. None
    for anything else: the plain path reads it (and learns it when it is good)."""

    def __init__(self, kernels, tolerance):
        self._read, self._ok, self._tolerance = kernels.read_stamped, kernels.OK, tolerance
        self._odometry = None             # (child link, kernel arguments, the call)
        self._wrenches = {}               # contact: (frame link, kernel arguments, the call)
        self._stamp = np.zeros(2, np.int64)

    def _arguments(self, data, strings, blocks):
        """(the kernel's arguments for messages laid out as ``data``, the kernel's call:
        :func:`..dynamics.compiled.direct_call`, the bytes and the outputs made at each
        call), or None."""
        layout = strings_layout(data, strings) if isinstance(data, bytes) else None
        if layout is None:
            return None
        raw = np.zeros(8 * int(blocks[1].sum()), np.uint8)
        arguments = (*layout, *blocks, raw, raw.view(np.float64))
        # (the call: bytes, arguments, values, stamp, pose, twist, tolerance)
        last = len(arguments)
        kept = {**dict(enumerate(arguments, 1)), last + 2: self._stamp,
                last + 5: self._tolerance}
        return arguments, direct_call(self._read, kept)

    def learn_odometry(self, data, child):
        """Odometry ``data`` taken by the plain path, of child link ``child``."""
        got = self._arguments(data, 2, _ODOMETRY)
        if got is not None:
            self._odometry = child, *got

    def learn_wrench(self, contact, data, frame):
        """Wrench ``data`` of ``contact`` taken by the plain path, expressed in link
        ``frame``."""
        got = self._arguments(data, 1, _WRENCH)
        if got is not None:
            self._wrenches[contact] = frame, *got

    def odometry(self, data):
        """((sec, nanosec), child link, w_H_c (4, 4), twist (6,) in C's axes, the same in
        the world's axes (6,)) of odometry bytes with the learnt frame ids, else None."""
        known = self._odometry
        if known is None or type(data) is not bytes:
            return None
        values, pose, mixed = np.empty(13), np.empty((4, 4)), np.empty(6)
        if known[2](data, *known[1], values, self._stamp, pose, mixed,
                    self._tolerance) != self._ok:
            return None
        return (int(self._stamp[0]), int(self._stamp[1])), known[0], pose, values[7:], mixed

    def wrench(self, contact, data):
        """((sec, nanosec), frame link, w (6,)) of ``contact``'s wrench bytes with its
        learnt frame id, else None."""
        known = self._wrenches.get(contact)
        if known is None or type(data) is not bytes:
            return None
        values = np.empty(6)
        if known[2](data, *known[1], values, self._stamp, _NO_POSE, _NO_TWIST,
                    self._tolerance) != self._ok:
            return None
        return (int(self._stamp[0]), int(self._stamp[1])), known[0], values
