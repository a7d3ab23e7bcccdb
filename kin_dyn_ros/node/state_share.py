"""The last tick's measured state in memory shared with the services' process.

The tick writes it once per tick (:meth:`StateWriter.write`, ~5 us; the node's steady tick
inside its kernel, :meth:`StateWriter.shared_words`), before publishing its outputs: a
client that received a tick's outputs and then asks for the measured state gets that
tick's. The services' process reads it per request (:meth:`StateReader.read`). One
block of memory, no lock: a sequence counter, odd while the tick writes, and a checksum of
the payload, so that a reader never takes half of two ticks (it reads again), also on CPUs
that reorder stores (aarch64), where the counter alone is not enough without a barrier.

Layout (float64 words): ``[sequence, generation, checksum, representation code, n,
announced, configured]`` then ``w_H_b`` (16), ``s`` (n), ``base_vel`` (6), ``s_dot`` (n),
for at most ``MAX_JOINTS``. ``generation`` names the model the state is of (the services'
process answers only with the state of the model it holds); ``announced`` is the node's
current model (:meth:`StateWriter.announce`, before any tick of it): a request that comes
while the services' process is still loading it waits for it; ``configured`` counts the
node's configurations (:meth:`StateWriter.configured`: a settings change too, e.g. the
representation), so that a request that comes after a change waits for it as well. The
memory is an anonymous file (``memfd``) handed to the services' process as a file
descriptor: nothing is left behind when both end.
"""

import mmap
import os
import tempfile
import time

import numpy as np

from ..dynamics.representations import Representations
from .tick import MeasuredState

__all__ = ["MAX_JOINTS", "StateWriter", "StateReader"]

MAX_JOINTS = 1024
HEADER = 7
REPRESENTATIONS = tuple(Representations)
_SIZE = 8 * (HEADER + 16 + 6 + 2 * MAX_JOINTS)
_SPINS = 100          # reads in a row before waiting for a writer in the middle of a write
_WAIT_S = 0.1         # longest wait for it (the tick's thread preempted mid-write)


def _anonymous_file(size):
    """A file descriptor of ``size`` bytes of memory: a memfd (Linux), else an unlinked
    temporary file."""
    try:
        fd = os.memfd_create("kin_dyn_state", 0)
    except (AttributeError, OSError):
        fd, path = tempfile.mkstemp(prefix="kin_dyn_state_")
        os.unlink(path)
    os.ftruncate(fd, size)
    return fd


def _checksum(generation, codes, payload):
    """XOR of the 64-bit words of ``generation``, ``codes`` (representation code, n) and
    ``payload``, as a float64 word (bits, not a number)."""
    bits = (np.bitwise_xor.reduce(payload.view(np.uint64))
            ^ np.bitwise_xor.reduce(codes.view(np.uint64))
            ^ np.float64(generation).view(np.uint64))
    return np.uint64(bits).view(np.float64)


class _Block:
    def __init__(self, fd):
        self.fd = fd
        self._map = mmap.mmap(fd, _SIZE)
        self.words = np.frombuffer(self._map, dtype=np.float64)

    def close(self):
        """Unmap (idempotent); a mapping still viewed by an array elsewhere (a tick's kernel
        arguments, :meth:`StateWriter.shared_words`) is unmapped with the last of them."""
        if self._map is None:
            return
        del self.words
        try:
            self._map.close()
        except BufferError:
            pass
        self._map = None


class StateWriter(_Block):
    """The tick's side: :meth:`write` each tick; :attr:`fd` for the reading process."""

    def __init__(self):
        super().__init__(_anonymous_file(_SIZE))
        self._bits = self.words.view(np.uint64)
        self._share = None

    def use(self, kernels):
        """Write with :func:`..dynamics.kernels.share_state` of ``kernels`` (the compiled
        :mod:`..dynamics.kernels`), or in NumPy (None): the same words."""
        self._share = None if kernels is None else kernels.share_state

    def announce(self, generation):
        """The node has taken model ``generation`` (one word: no sequence needed)."""
        self.words[5] = generation

    def configured(self, count):
        """The node has made its ``count``-th configuration (one word)."""
        self.words[6] = count

    def write(self, generation, measured):
        """Publish ``measured`` (a :class:`.tick.MeasuredState`) of model ``generation``."""
        n = measured.s.size
        if n > MAX_JOINTS or self._map is None:
            return
        w = self.words
        w[0] += 1.0                         # odd: writing
        code = REPRESENTATIONS.index(measured.representation)
        try:
            if self._share is None:
                raise TypeError
            self._share(w, self._bits, HEADER, generation, code, measured.w_H_b, measured.s,
                        measured.base_vel, measured.s_dot)
        except TypeError:       # (arrays of other types than the compiled ones: NumPy)
            self._write(generation, code, measured)
        w[0] += 1.0                         # even: done

    def shared_words(self, n, representation):
        """(words (float64), header, representation code) that a compiled tick of ``n``
        joints writes its state with base velocities in ``representation`` into, as
        :meth:`write` does (:func:`..dynamics.kernels.steady_tick`: the sequence word too), or
        None (the NumPy path, too many joints, closed)."""
        if self._share is None or n > MAX_JOINTS or self._map is None:
            return None
        return self.words, HEADER, REPRESENTATIONS.index(representation)

    def _write(self, generation, code, measured):
        """What :func:`..dynamics.kernels.share_state` does, in NumPy."""
        w, n = self.words, measured.s.size
        end = HEADER + 16 + 6 + 2 * n
        payload = w[HEADER:end]
        payload[:16] = measured.w_H_b.ravel()
        payload[16:16 + n] = measured.s
        payload[16 + n:22 + n] = measured.base_vel
        payload[22 + n:] = measured.s_dot
        w[1], w[3], w[4] = generation, code, n
        w[2] = _checksum(w[1], w[3:5], w[HEADER:end])

    def close(self):
        """Unmap and close the file (idempotent)."""
        if self._map is not None:
            self._bits = None
            super().close()
            os.close(self.fd)


class StateReader(_Block):
    """The services' side, on the writer's :attr:`StateWriter.fd` (not closed here)."""

    def __init__(self, fd):
        super().__init__(fd)
        self._last = None       # (generation, MeasuredState) of the last consistent read

    def announced(self):
        """The node's current model generation (:meth:`StateWriter.announce`)."""
        return int(self.words[5])

    def configured(self):
        """The number of the node's configurations (:meth:`StateWriter.configured`)."""
        return int(self.words[6])

    def read(self, generation):
        """The last :class:`.tick.MeasuredState` written for model ``generation``, or None
        (none yet, or of another model). While the writer is in the middle of a write (its
        thread preempted there), it reads again, then waits, at most ``_WAIT_S``; then it
        gives the last state it read of that model."""
        w, deadline = self.words, None
        for attempt in range(1_000_000):
            if attempt >= _SPINS:
                now = time.monotonic()
                deadline = deadline or now + _WAIT_S
                if now > deadline:
                    break
                time.sleep(50e-6)
            before = w[0]
            if before == 0:
                return None
            if before % 2:
                continue
            n = int(w[4])
            copy = w[1:HEADER + 22 + 2 * n].copy()
            if w[0] != before or copy[1].view(np.uint64) != _checksum(
                    copy[0], copy[2:4], copy[HEADER - 1:]).view(np.uint64):
                continue
            if copy[0] != generation:
                return None
            p = copy[HEADER - 1:]
            state = MeasuredState(p[:16].reshape(4, 4), p[16:16 + n], p[16 + n:22 + n],
                                  p[22 + n:], REPRESENTATIONS[int(copy[2])])
            self._last = (generation, state)
            return state
        last = self._last
        return last[1] if last is not None and last[0] == generation else None
