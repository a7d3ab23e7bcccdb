"""The common JointState merged by one compiled call, straight from its bytes.

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

__all__ = ["CompiledJointStates", "LAYOUTS"]

LAYOUTS = 8     # name lists kept (most recently merged first)


class CompiledJointStates:
    """Merges known JointStates into ``merger`` (a :class:`.conversions.JointStateMerger`)
    with ``kernels`` (:mod:`..dynamics.kernels`, compiled)."""

    def __init__(self, kernels, merger):
        self._merge, self._ok = kernels.merge_joint_state, kernels.OK
        self._merger = merger
        self._values, self._received, self._effort_received = merger.merged_arrays()
        self._layouts = []            # [(names, kernel arguments)], most recent first
        self._stamp = np.zeros(2, np.int64)

    def merge(self, data):
        """Merge ``data`` (JointState CDR bytes) when its name list is learnt; (sec,
        nanosec) of its stamp, or None (nothing changed)."""
        if not isinstance(data, bytes):
            return None
        raw = np.frombuffer(data, np.uint8)
        for k, (_, args) in enumerate(self._layouts):
            if self._merge(raw, *args, self._values, self._received, self._effort_received,
                           self._stamp) == self._ok:
                if k:                                  # most recent first
                    self._layouts.insert(0, self._layouts.pop(k))
                return int(self._stamp[0]), int(self._stamp[1])
        return None

    def learn(self, names, layout):
        """Take JointStates with the name list ``names`` (merged by ``merger`` before) as
        ``layout`` (:meth:`.cdr.InputReader.name_layout`) lays it out."""
        columns = self._merger.block_columns(names)
        if layout is None or columns is None or any(n == names for n, _ in self._layouts):
            return
        src, dst, mimic_src, mimic_dst = (np.ascontiguousarray(c, np.intp) for c in columns)
        raw = np.zeros(24 * (len(names) + 1), np.uint8)       # the kernel's scratch
        args = (len(names), layout.size, np.ascontiguousarray(layout.keep, np.intp),
                np.ascontiguousarray(layout.expected, np.uint8), src, dst, mimic_src, mimic_dst,
                raw, raw.view(np.float64))
        self._layouts = [(names, args)] + self._layouts[:LAYOUTS - 1]
