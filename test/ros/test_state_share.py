"""node/state_share.py: the last tick's state in shared memory, read by another process.

Run:  python -m pytest test/ros/test_state_share.py
"""

import subprocess
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

from kin_dyn_ros.dynamics import Representations
from kin_dyn_ros.node.state_share import StateReader, StateWriter
from kin_dyn_ros.node.tick import MeasuredState

MIXED = Representations.MIXED_REPRESENTATION
BODY = Representations.BODY_FIXED_REPRESENTATION


def state(k, n=32, rep=MIXED):
    """A state whose every number tells its tick ``k``."""
    return MeasuredState(np.full((4, 4), float(k)), np.full(n, k + 0.25), np.full(6, k + 0.5),
                         np.full(n, k + 0.75), rep)


def test_a_reader_gets_the_last_state_of_its_model_only():
    writer = StateWriter()
    reader = StateReader(writer.fd)
    try:
        assert reader.read(1) is None                        # nothing written yet
        writer.write(1, state(3))
        writer.write(1, state(4, rep=BODY))
        got = reader.read(1)
        want = state(4, rep=BODY)
        for field in ('w_H_b', 's', 'base_vel', 's_dot'):
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
        assert got.representation is BODY
        assert reader.read(2) is None                        # another model's state
        writer.write(2, state(5, n=3))                       # a smaller model
        assert reader.read(2).s.shape == (3,)
        writer.announce(2)
        writer.configured(7)                                 # words outside the state
        assert (reader.announced(), reader.configured()) == (2, 7)
        assert reader.read(2).s.shape == (3,)
    finally:
        reader.close()
        writer.close()


def test_another_process_never_reads_half_of_two_ticks():
    """A writer at full speed (states whose numbers all equal their tick) and a reader in
    another process: every state read is one tick's."""
    writer = StateWriter()
    reader_code = textwrap.dedent(f"""
        import numpy as np, sys
        from kin_dyn_ros.node.state_share import StateReader
        reader, seen, bad = StateReader({writer.fd}), set(), 0
        for _ in range(20000):
            got = reader.read(1)
            if got is None:
                continue
            k = got.w_H_b[0, 0]
            ok = (got.w_H_b == k).all() and (got.s == k + 0.25).all() and \\
                (got.base_vel == k + 0.5).all() and (got.s_dot == k + 0.75).all()
            bad += not ok
            seen.add(k)
        print(len(seen), bad)
    """)
    proc = subprocess.Popen([sys.executable, '-c', reader_code], stdout=subprocess.PIPE,
                            text=True, pass_fds=(writer.fd,))
    try:
        k = 0
        while proc.poll() is None:
            k += 1
            writer.write(1, state(k))
        seen, bad = map(int, proc.stdout.read().split())
    finally:
        proc.wait()
        writer.close()
    assert bad == 0 and seen > 100, (seen, bad)


def test_a_writer_stopped_mid_write_leaves_the_last_state_read():
    """The tick's thread preempted in the middle of a write (the counter odd): a reader
    waits a moment, then answers with the last state it read of that model, not "none"."""
    writer = StateWriter()
    reader = StateReader(writer.fd)
    try:
        writer.write(1, state(7))
        assert reader.read(1).s[0] == 7.25
        writer.words[0] += 1                         # a write begun, never finished
        assert reader.read(1).s[0] == 7.25
        assert reader.read(2) is None
    finally:
        reader.close()
        writer.close()


def test_closing_twice_and_writing_after_close_do_nothing():
    """destroy_node may run twice; a last tick may race it."""
    writer = StateWriter()
    writer.close()
    writer.close()
    writer.write(1, state(1))


def test_a_writer_closes_while_a_tick_still_holds_its_words():
    """A steady tick's kernel arguments hold the shared words (shared_words): closing the
    writer (destroy_node) does not raise, and a last tick's write through them still lands
    in mapped memory (unmapped with the last array viewing it)."""
    writer = StateWriter()
    writer.use(SimpleNamespace(share_state=print))  # (kernels: shared_words gives the words)
    words, header, code = writer.shared_words(32, BODY)
    assert (header, code) == (7, list(Representations).index(BODY))
    writer.close()
    writer.close()
    assert writer.shared_words(32, BODY) is None
    words[:header] = 2.0                       # still mapped
    assert words[0] == 2.0


def test_the_compiled_writer_writes_the_numpy_writers_words():
    """StateWriter.use(kernels): :func:`.kernels.share_state` writes the words (bits) that
    the NumPy writer writes, checksum included, for models of 1 to 60 joints, and the reader
    reads them."""
    from kin_dyn_ros.dynamics.compiled import compiled_kernels, jit_status
    from kin_dyn_ros.dynamics import KinDynComputations
    from ros_helpers import MIMIC_URDF
    KinDynComputations(MIMIC_URDF)            # the kernels compiled in this process
    kernels = compiled_kernels()
    if kernels is None:
        pytest.skip(f'no compiled kernels in this process: {jit_status().describe()}')
    rng = np.random.default_rng(4)
    writers = StateWriter(), StateWriter()
    writers[1].use(kernels)
    reader = StateReader(writers[1].fd)
    try:
        for n in (1, 7, 32, 60):
            for rep in (MIXED, BODY):
                want = MeasuredState(rng.normal(size=(4, 4)), rng.normal(size=n),
                                     rng.normal(size=6), rng.normal(size=n), rep)
                for writer in writers:
                    writer.write(n, want)
                np.testing.assert_array_equal(writers[0].words.view(np.uint64),
                                              writers[1].words.view(np.uint64))
                frozen = want.w_H_b.copy()       # a type the kernel was not compiled for:
                frozen.setflags(write=False)     # the NumPy write, the same words
                odd = MeasuredState(frozen, want.s, want.base_vel, want.s_dot, rep)
                for writer in writers:
                    writer.write(n, odd)
                np.testing.assert_array_equal(writers[0].words.view(np.uint64),
                                              writers[1].words.view(np.uint64))
                got = reader.read(n)
                for field in ('w_H_b', 's', 'base_vel', 's_dot'):
                    np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
                assert got.representation is rep
    finally:
        reader.close()
        for writer in writers:
            writer.close()
