"""node/realtime.py and the node's thread_priority, cpu_affinity and lock_memory: the node
process started as launch starts it (MIMIC_URDF as its robot_description parameter), its
threads' scheduling read from /proc; then the same without the privileges (``setpriv``
drops CAP_SYS_NICE and CAP_IPC_LOCK from its bounding set; the rtprio and memlock limits
stay the machine's): one warning each, naming the cause, and the node runs on.

Run:  source scripts/env.sh && python -m pytest test/ros/test_realtime.py
"""

import errno
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
from ros_helpers import (MIMIC_URDF, Rig, joint_state_msg, loopback_context,  # noqa: E402
                         module_namespace, node_command, stop_process)

from kin_dyn_ros.node.realtime import memlock_refusal, rt_refusal  # noqa: E402

NAMESPACE = module_namespace(__name__)
LINUX = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='Linux scheduling')
DROP = ['--bounding-set=-sys_nice,-ipc_lock', '--inh-caps=-sys_nice,-ipc_lock']
SCHED_FIFO = 1


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(201, 210)


# -- the causes, as the OS gives them ---------------------------------------------------------
def test_a_refused_priority_names_the_limit_or_the_cgroup():
    assert rt_refusal(errno.EPERM, 50, rtprio_limit=0) == \
        'no CAP_SYS_NICE and the rtprio limit is 0, below 50'
    assert 'cgroup has no real-time runtime' in rt_refusal(errno.EPERM, 50, rtprio_limit=99)
    assert rt_refusal(errno.EINVAL, 50, rtprio_limit=99) == os.strerror(errno.EINVAL)


def test_a_refused_lock_names_the_memlock_limit():
    assert memlock_refusal(errno.ENOMEM, memlock_limit=8 << 20) == \
        'no CAP_IPC_LOCK and the memlock limit is 8388608 bytes, below what the node holds'
    assert memlock_refusal(errno.EPERM, memlock_limit=0) == 'no CAP_IPC_LOCK'


@LINUX
def test_a_middleware_thread_that_ended_is_passed_over(monkeypatch):
    """A thread listed, then ended before its priority is set (ESRCH), is neither a refusal
    nor the end of the list: the threads after it are still configured (it once left every
    middleware thread of a node at normal scheduling)."""
    import threading
    from kin_dyn_ros.node import realtime
    ended = threading.Thread(target=lambda: None)
    ended.start()
    ended.join()          # (Python's join returns before the OS thread is gone: wait for it)
    deadline = time.monotonic() + 5.0
    while os.path.exists(f'/proc/self/task/{ended.native_id}') and time.monotonic() < deadline:
        time.sleep(0.001)
    assert not os.path.exists(f'/proc/self/task/{ended.native_id}')   # no thread's id now
    configured = []
    monkeypatch.setattr(realtime, 'native_threads', lambda: [ended.native_id, 4242])

    def configure(priority, cpus, tid):
        configured.append(tid)
        return ['refused'] if tid == ended.native_id else []
    monkeypatch.setattr(realtime, 'configure_thread', configure)
    assert realtime.configure_native_threads(20) == []
    assert configured == [ended.native_id, 4242]


@LINUX
def test_called_again_only_threads_without_the_priority_are_configured(monkeypatch):
    """Called again (the node: once a second): the threads started since, and those that
    lost the priority; not those that have it, nor one refused before."""
    from kin_dyn_ros.node import realtime
    listed, configured, done, lost = [4242, 4343, 4545], [], {}, set()
    monkeypatch.setattr(realtime, 'native_threads', lambda: list(listed))
    monkeypatch.setattr(realtime, 'has_priority', lambda tid, priority: tid not in lost)

    def configure(priority, cpus, tid):
        configured.append(tid)
        return ['refused; the ticking thread'] if tid == 4545 else []
    monkeypatch.setattr(realtime, 'configure_thread', configure)
    realtime.configure_native_threads(20, done)
    listed.append(4444)                     # (started later)
    lost.add(4343)                          # (its scheduling changed)
    realtime.configure_native_threads(20, done)
    assert configured == [4242, 4343, 4545, 4343, 4444]
    assert done == {4242: True, 4343: True, 4545: False, 4444: True}


@LINUX
def test_has_priority_reads_the_thread_s_policy():
    import threading
    from kin_dyn_ros.node import realtime
    tid = threading.main_thread().native_id
    assert not realtime.has_priority(tid, 20)         # (this process: normal scheduling)
    assert realtime.has_priority(2**22 + 7, 20)       # (no such thread: nothing to do)


@LINUX
def test_a_refused_middleware_thread_leaves_the_others_configured(monkeypatch):
    """A thread the OS refuses (CI, 2026-11-29: once, every middleware thread of a node was
    left at normal scheduling) is one warning; the threads after it are still configured."""
    import threading
    from kin_dyn_ros.node import realtime
    alive = threading.main_thread().native_id          # exists: its refusal is reported
    monkeypatch.setattr(realtime, 'native_threads', lambda: [alive, 4242, 4343])
    configured = []

    def configure(priority, cpus, tid):
        configured.append(tid)
        return [f'thread_priority {priority}: refused; the ticking thread runs'] \
            if tid == alive else []
    monkeypatch.setattr(realtime, 'configure_thread', configure)
    assert realtime.configure_native_threads(20) == [
        "thread_priority 20: refused; the middleware's threads runs"]
    assert configured == [alive, 4242, 4343]


# -- the node process -------------------------------------------------------------------------
def threads(pid):
    """[(policy, rt_priority, CPUs allowed, tid)] of every thread of process ``pid``."""
    out = []
    for task in pathlib.Path(f'/proc/{pid}/task').iterdir():
        try:
            stat = (task / 'stat').read_text()
            status = (task / 'status').read_text()
        except OSError:        # the thread ended meanwhile
            continue
        fields = stat[stat.rindex(')') + 2:].split()     # from field 3 on
        cpus = re.search(r'Cpus_allowed_list:\s*(\S+)', status).group(1)
        out.append((int(fields[38]), int(fields[37]), cpus, int(task.name)))
    return out


def proc_pid(tasks):
    """The process id: its main thread's id, the lowest."""
    return min(t[3] for t in tasks)


def locked_kb(pid):
    return int(re.search(r'VmLck:\s*(\d+)', pathlib.Path(f'/proc/{pid}/status').read_text())
               .group(1))


def run_node(ros_context, prefix, *params, until=None):
    """Start the node (``prefix`` + its command), tick it once: ((its threads, its locked
    kB), its output once it ended on SIGINT (exit 0 asserted)); with ``until``, the threads
    once ``until(threads)`` holds, or after 5 s."""
    proc = subprocess.Popen(
        prefix + node_command() + ['--ros-args', '-r', f'__ns:={NAMESPACE}', '-p',
                                   f'robot_description:={MIMIC_URDF}', '-p',
                                   'use_odometry:=false'] + [a for p in params
                                                             for a in ('-p', p)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
        env=dict(os.environ))
    helper = rclpy.create_node('kin_dyn_realtime_test', namespace=NAMESPACE,
                               context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(helper)
    try:
        rig = Rig(helper, executor)
        rig.wait_matched(timeout_s=60.0, odometry=False)

        def probe():
            rig.joint_states.publish(joint_state_msg(['j1', 'j2'], [0.3, 0.1], stamp=rig.now()))
        assert rig.spin_until(lambda: rig.received['com'], timeout_s=30.0, on_tick=probe)
        deadline = time.monotonic() + 5.0
        while until is not None and not until(threads(proc.pid)) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        seen = threads(proc.pid), locked_kb(proc.pid)
    finally:
        executor.shutdown()
        helper.destroy_node()
        out = stop_process(proc)
    assert proc.returncode == 0, out
    return seen, out


def can_be_real_time():
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        return False
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return True


@LINUX
def test_the_ticking_thread_alone_is_fifo_pinned_and_the_memory_locked(ros_context):
    if not can_be_real_time():
        pytest.skip('this process may not use SCHED_FIFO: the refusal is tested below')
    cpu = max(os.sched_getaffinity(0))
    (tasks, locked), out = run_node(
        ros_context, [], 'thread_priority:=20', f'cpu_affinity:=[{cpu}]', 'lock_memory:=true',
        until=lambda tasks: sum(t[0] == SCHED_FIFO for t in tasks) >= 2)
    fifo = [t for t in tasks if t[0] == SCHED_FIFO]
    pinned = [t for t in fifo if t[2] == str(cpu)]
    # the ticking thread (pinned) and the middleware's (DDS reception, events), all at 20
    # (those it starts after the node's start within a second: CI, twice, none at first);
    # the main thread (the executor: services, parameters) at normal scheduling
    assert len(pinned) == 1 and len(fifo) >= 2 and {t[1] for t in fifo} == {20}, tasks
    main = next(t for t in tasks if t[3] == proc_pid(tasks))
    assert main[0] != SCHED_FIFO, tasks
    assert locked > 100_000                   # kB: the whole process (numba, the model, ...)
    assert 'refused' not in out and 'deprecated' not in out


@LINUX
def test_without_the_privileges_one_warning_each_and_the_node_runs(ros_context):
    if shutil.which('setpriv') is None or os.geteuid() != 0:
        pytest.skip('needs setpriv run as root to drop the capabilities (util-linux)')
    (tasks, locked), out = run_node(ros_context, ['setpriv', *DROP], 'thread_priority:=50',
                                    'lock_memory:=true', 'sensor_thread_cpu:=0')
    assert all(t[0] != SCHED_FIFO for t in tasks) and locked == 0
    priority = re.findall(r'thread_priority 50: SCHED_FIFO refused \(([^)]*)\); the (\w+)', out)
    memory = re.findall(r'lock_memory: mlockall refused \(([^)]*)\)', out)
    # one for the ticking thread, one for the middleware's
    assert sorted(who for _, who in priority) == ['middleware', 'ticking'], out
    assert all('rtprio limit' in why or 'cgroup' in why for why, _ in priority)
    assert len(memory) == 1 and 'memlock limit' in memory[0], out
    assert out.count('sensor_thread_cpu is deprecated') == 1
    assert 'limits.conf' in out and 'Traceback' not in out
