"""Several serialised message templates in one buffer, filled by one call per tick.

Each per-tick output rendered from its own :class:`.outputs.SerializedTemplate` costs a few
NumPy and Python calls (~4-6, 10-20 us per output in the running node, where the caches are
cold between ticks). :class:`TemplatePack` lays the templates of a tick's outputs (/tf with
and without the base, ~/com, ~/centroidal_momentum, ~/gravity_torques,
~/forward_dynamics) side by side in one byte buffer, each at an offset that keeps its
payload 8-byte aligned, so that one call (:func:`..dynamics.kernels.scatter_words`; NumPy's
fancy indexing without the kernels) writes every float64 field of every message from one
source vector and the stamp into every stamp field; each message is then a slice of the
buffer.

It is the fast path of :meth:`.outputs.TickMessages.per_tick`, used only when every template
in it is usable (``ok``); otherwise the templates render one by one (the same bytes: a test
compares them).
"""

import numpy as np

from ..dynamics.quaternions import rotation_to_quaternion

__all__ = ["TemplatePack"]


class TemplatePack:
    """``parts``: [(name, template, sources)]: a usable :class:`.outputs.SerializedTemplate`
    whose integer fields are all stamps (sec, nanosec pairs), and ``sources`` (d,) the index
    of each of its d float64 fields (in the template's order) in the source vector: the
    values (m,) given to :meth:`render`, then a pose's translation and quaternion (7), then
    the extra values.

    ``kernel``: :func:`..dynamics.kernels.scatter_words` (compiled), or None: the same in
    NumPy."""

    def __init__(self, parts, kernel=None):
        self.names = tuple(name for name, _, _ in parts)
        # a template's buffer is 4 header bytes + a payload of whole float64 words (length
        # 4 mod 8): at offsets 4 mod 8 with 4 bytes between, every payload is 8-aligned
        offsets, end = [], 4
        for _, template, _ in parts:
            offsets.append(end)
            end += template.nbytes + 4
        self._buf = np.zeros(end + (-end % 8), np.uint8)
        targets, sources, stamps, self._slices = [], [], [], {}
        for (name, template, source), offset in zip(parts, offsets):
            data, doubles, stamp_words = template.layout()
            self._buf[offset:offset + len(data)] = data
            payload = offset + 4
            targets.append(payload // 8 + doubles)
            sources.append(np.asarray(source, np.intp))
            stamps.append(payload // 4 + stamp_words)
            self._slices[name] = (offset, offset + template.size)
        self._f64, self._u32 = self._buf.view("<f8"), self._buf.view("<u4")
        self._aliased = {(): self._slices}      # render's slices, per aliases
        self._targets = np.concatenate(targets).astype(np.intp)
        self._sources = np.concatenate(sources)
        self._stamps = np.concatenate(stamps).astype(np.intp)
        if len(self._targets) != len(self._sources):
            raise ValueError("a template's sources do not match its float64 fields")
        self._kernel = kernel

    def render(self, values, extra, pose, with_pose, stamp_words, names, aliases=()):
        """{name: serialised bytes} of ``names`` (each of :attr:`names`, or an alias of one
        of them in ``aliases``: ((alias, name), ...)), every message with its numbers from
        ``values`` (m,), the translation and unit quaternion (x, y, z, w), w >= 0, of
        ``pose`` (4, 4) (only when ``with_pose``) and ``extra``, and the stamp
        ``stamp_words`` (sec modulo 2**32, nanosec)."""
        sec, nanosec = stamp_words
        try:
            if self._kernel is None:
                raise TypeError
            self._kernel(values, extra, pose, with_pose, self._sources, self._targets,
                         self._f64, self._stamps, self._u32, sec, nanosec)
        except TypeError:       # (arrays of other types than the compiled ones: NumPy)
            self._scatter(values, extra, pose, with_pose, sec, nanosec)
        buf, out = self._buf, {}        # (a loop, not a comprehension: no frame of its own)
        slices = self._aliased.get(aliases) or self._alias(aliases)
        for name in names:
            start, end = slices[name]
            out[name] = buf[start:end].tobytes()
        return out

    def slices(self, names, aliases=()):
        """[(start, end)] of each of ``names`` in the buffer (:meth:`scatter_arguments`'
        first): the bytes of a message are ``buffer[start:end]`` once written."""
        slices = self._aliased.get(aliases) or self._alias(aliases)
        return [slices[name] for name in names]

    def scatter_arguments(self):
        """(buffer (uint8), sources, places, stamp pairs) that a compiled caller of
        :func:`..dynamics.kernels.scatter_words` writes the buffer with (as :meth:`render`
        does; :func:`..dynamics.kernels.steady_tick`), or None without the kernel."""
        if self._kernel is None:
            return None
        return self._buf, self._sources, self._targets, self._stamps

    def _alias(self, aliases):
        """{name or alias: (start, end)} with ``aliases``, kept."""
        slices = {**self._slices, **{a: self._slices[n] for a, n in aliases}}
        self._aliased[aliases] = slices
        return slices

    def _scatter(self, values, extra, pose, with_pose, sec, nanosec):
        """What the kernel does, in NumPy."""
        base = np.zeros(7)
        if with_pose:
            base[:3], base[3:] = pose[:3, 3], rotation_to_quaternion(pose[:3, :3])
        self._f64[self._targets] = np.concatenate([values, base, extra])[self._sources]
        self._u32[self._stamps] = sec, nanosec
