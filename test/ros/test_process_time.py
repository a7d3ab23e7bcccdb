"""kin_dyn_ros.process_time: CPU time of this process and of another one (Linux /proc)."""

import os
import subprocess
import sys
import time

import pytest

from kin_dyn_ros.process_time import cpu_seconds

linux = pytest.mark.skipif(not os.path.exists('/proc/self/stat'), reason='needs Linux /proc')


def _spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_this_process_grows_with_work():
    """os.times counts user and system time apart, each truncated to clock ticks of 10 ms:
    over any interval the sum is off the exact process CPU time by less than two ticks."""
    before, exact_before = cpu_seconds(), time.process_time()
    _spin(0.2)
    grown, exact = cpu_seconds() - before, time.process_time() - exact_before
    assert exact >= 0.2
    assert abs(grown - exact) < 0.021


@linux
def test_proc_agrees_with_os_times():
    """Both ways of reading this process's CPU time, to /proc's 10 ms clock ticks."""
    _spin(0.05)
    assert abs(cpu_seconds(os.getpid()) - cpu_seconds()) < 0.03


@linux
def test_another_process_is_read_from_proc():
    child = subprocess.Popen([sys.executable, '-c', 'import time\nend = time.process_time() '
                              '+ 0.3\nwhile time.process_time() < end: pass\ninput()'],
                             stdin=subprocess.PIPE)
    start = time.monotonic()
    try:
        while cpu_seconds(child.pid) < 0.3 and time.monotonic() < start + 20.0:
            time.sleep(0.05)
        used, wall = cpu_seconds(child.pid), time.monotonic() - start
        assert 0.3 <= used <= wall + 0.02          # one thread: no more CPU than wall time
    finally:
        child.communicate(b'\n')
    assert cpu_seconds(child.pid) != cpu_seconds(child.pid)    # gone: NaN
