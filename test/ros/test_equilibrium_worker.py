"""kin_dyn_ros.equilibrium_worker: equilibrium torques answered by a separate process.

Checked against the in-process core call (same function, same inputs: the answer must be
bit-identical after the round trip through the pipe), plus the protocol: one request in
flight and the newest one waiting, answers for a replaced model dropped, a dead worker
reported and restarted.
"""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import icub_models
import numpy as np
import pytest

from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.dynamics.contacts import Contact
from kin_dyn_ros.dynamics.equilibrium import equilibrium_torques
from kin_dyn_ros.equilibrium_worker import EquilibriumWorker

SOLE = np.array([[0.05, 0.025, 0.0], [-0.05, 0.025, 0.0], [-0.05, -0.025, 0.0],
                 [0.05, -0.025, 0.0]])
FEET = tuple(Contact(c, SOLE, [0, 0, 1], 0.6) for c in ('l_sole', 'r_sole'))
LINUX = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='Linux scheduling')
ANSWER_S = 60.0     # the first answer includes the worker's start (imports, URDF parse)


@pytest.fixture(scope='module')
def standing(icub_urdf):
    """(kd, w_H_b, s): iCub at a slightly bent posture, feet on the ground plane. ``kd`` runs
    the NumPy core, as the workers do (worker_environment): their answers equal its calls
    to the last bit (the compiled path agrees to 1e-12, test/dynamics/test_kernels.py)."""
    kd = KinDynComputations(icub_urdf, compiled=False)
    s = np.zeros(kd.NDoF)
    s[kd.joints_name_list.index('torso_pitch')] = 0.2
    w_H_b = np.eye(4)
    w_H_b[2, 3] = -kd.forward_kinematics('l_sole', np.eye(4), s)[2, 3]
    return kd, w_H_b, s


@pytest.fixture
def worker():
    w = EquilibriumWorker()
    yield w
    w.close()


def wait_answer(worker, timeout=ANSWER_S):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        answer = worker.poll()
        if answer is not None:
            return answer
        if not worker.busy:
            return None
        time.sleep(0.005)
    raise AssertionError(f'no answer from the worker in {timeout} s')


def test_answer_equals_the_in_process_call(worker, icub_urdf, standing):
    kd, w_H_b, s = standing
    assert not worker.submit('k', w_H_b, s, FEET)      # no model yet: nothing sent
    worker.set_model(icub_urdf)
    assert worker.submit('k', w_H_b, s, FEET)
    assert worker.busy
    key, res = wait_answer(worker)
    ref = equilibrium_torques(kd, w_H_b, s, FEET)
    assert key == 'k' and not worker.busy
    assert res.feasible and ref.feasible and res.message == ref.message == ''
    np.testing.assert_array_equal(res.tau, ref.tau)


def test_answered_says_when_poll_has_an_answer(worker, icub_urdf, standing):
    """The node asks ``answered`` on every tick and polls only then: it is False with
    nothing in flight, becomes True when the answer is there to take, and poll then gives
    it at once."""
    _, w_H_b, s = standing
    worker.set_model(icub_urdf)
    assert not worker.answered
    assert worker.submit('k', w_H_b, s, FEET)
    end = time.monotonic() + ANSWER_S
    while not worker.answered:
        assert time.monotonic() < end, 'no answer from the worker'
        time.sleep(0.002)
    assert worker.poll()[0] == 'k'
    assert not worker.answered and not worker.busy


def test_the_worker_runs_the_node_s_own_code(worker, icub_urdf, standing, tmp_path,
                                            monkeypatch):
    """Another kin_dyn_ros in the node's working directory (e.g. a source tree beside the
    installed package) is not what the worker runs: it is started where this one lives."""
    kd, w_H_b, s = standing
    other = tmp_path / 'kin_dyn_ros'
    other.mkdir()
    (other / '__init__.py').write_text('')
    marker = tmp_path / 'imported'
    (other / 'equilibrium_worker.py').write_text(f'open({str(marker)!r}, "w").close()\n')
    monkeypatch.chdir(tmp_path)
    worker.set_model(icub_urdf)
    assert worker.submit('k', w_H_b, s, FEET)
    _, res = wait_answer(worker)
    np.testing.assert_array_equal(res.tau, equilibrium_torques(kd, w_H_b, s, FEET).tau)
    assert not marker.exists()


def test_start_runs_the_process_before_any_request(worker, icub_urdf, standing):
    kd, w_H_b, s = standing
    assert not worker.start() and not worker.running     # no model yet
    worker.set_model(icub_urdf)
    assert worker.start() and worker.running and not worker.busy
    pid = worker._process.pid
    assert worker.start() and worker._process.pid == pid   # already running: same process
    assert worker.submit('k', w_H_b, s, FEET)
    key, res = wait_answer(worker)
    assert key == 'k' and worker._process.pid == pid
    np.testing.assert_array_equal(res.tau, equilibrium_torques(kd, w_H_b, s, FEET).tau)
    worker.close()
    assert not worker.running


def test_one_in_flight_and_the_newest_waiting(worker, icub_urdf, standing):
    kd, w_H_b, s = standing
    worker.set_model(icub_urdf)
    assert worker.submit('a', w_H_b, s, FEET)            # sent
    bent = s.copy()
    bent[kd.joints_name_list.index('torso_pitch')] = 0.4
    assert not worker.submit('b', w_H_b, s, FEET)        # waits
    assert not worker.submit('c', w_H_b, bent, FEET)     # replaces 'b'
    assert wait_answer(worker)[0] == 'a'
    assert worker.busy                                   # 'c' sent with the answer to 'a'
    key, res = wait_answer(worker)
    assert key == 'c' and not worker.busy
    np.testing.assert_array_equal(res.tau, equilibrium_torques(kd, w_H_b, bent, FEET).tau)


def test_each_request_is_solved_on_its_own_contacts(worker, icub_urdf, standing):
    """Contacts go to the worker only when they are not the objects sent last: a request
    on other contacts (fewer, or equal but new objects) must still be solved on its own."""
    kd, w_H_b, s = standing
    worker.set_model(icub_urdf)
    left = (FEET[0],)
    moved = (Contact('l_sole', SOLE + [0.02, 0.0, 0.0], [0, 0, 1], 0.6), FEET[1])
    for key, contacts in (('both', FEET), ('left', left), ('both again', FEET),
                          ('moved', moved), ('both, new tuple', tuple(FEET))):
        assert worker.submit(key, w_H_b, s, contacts)
        got, res = wait_answer(worker)
        ref = equilibrium_torques(kd, w_H_b, s, contacts)
        assert got == key and res.feasible == ref.feasible and res.message == ref.message
        if ref.tau is None:
            assert res.tau is None
        else:
            np.testing.assert_array_equal(res.tau, ref.tau)


def big_description(urdf, size=600_000):
    """``urdf`` with a comment making it ``size`` characters longer: larger than a socket's
    buffer (~200 KB), as descriptions with hundreds of fixed frames and long mesh paths are."""
    return urdf.replace('</robot>', f'<!-- {"x" * size} --></robot>')


def model_files(directory):
    return sorted(pathlib.Path(directory).glob('kin_dyn_model_*'))


def test_a_large_description_never_blocks_the_node(worker, icub_urdf, standing,
                                                     monkeypatch, tmp_path):
    """The description goes through a file, not the socket: handing a 600 KB one to a worker
    that does not read (stopped here) returns at once, and the answers then come from it."""
    kd, w_H_b, s = standing
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    worker.set_model(icub_urdf)
    assert worker.submit('small', w_H_b, s, FEET)
    assert wait_answer(worker)[0] == 'small'
    assert model_files(tmp_path) == []                   # read and removed by the worker
    os.kill(worker._process.pid, signal.SIGSTOP)
    try:
        handing = threading.Thread(target=worker.set_model, daemon=True,
                                   args=(big_description(icub_urdf),))
        handing.start()
        handing.join(10.0)
        assert not handing.is_alive(), 'set_model waited for the worker to read'
        assert worker.submit('big', w_H_b, s, FEET)
    finally:
        os.kill(worker._process.pid, signal.SIGCONT)
    key, res = wait_answer(worker)
    assert key == 'big'
    np.testing.assert_array_equal(res.tau, equilibrium_torques(kd, w_H_b, s, FEET).tau)
    assert model_files(tmp_path) == []


def test_a_model_file_the_worker_cannot_read_is_answered_as_an_error(
        worker, icub_urdf, standing, monkeypatch, tmp_path):
    _, w_H_b, s = standing
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    worker.set_model(icub_urdf)
    assert worker.start()
    os.kill(worker._process.pid, signal.SIGSTOP)        # before it reads the file
    try:
        for path in model_files(tmp_path):
            path.unlink()
        assert worker.submit('k', w_H_b, s, FEET)
    finally:
        os.kill(worker._process.pid, signal.SIGCONT)
    key, res = wait_answer(worker)
    assert key == 'k' and isinstance(res, ValueError)
    assert 'could not read the model' in str(res)


def test_no_writable_temporary_directory_is_reported_as_a_failed_start(
        icub_urdf, standing, monkeypatch, tmp_path):
    _, w_H_b, s = standing
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path / 'missing'))
    worker = EquilibriumWorker(restart_s=60.0)
    worker.set_model(icub_urdf)
    assert not worker.submit(0, w_H_b, s, FEET) and not worker.running
    with pytest.raises(RuntimeError, match='could not start the equilibrium worker'):
        worker.poll()
    worker.close()


def test_close_removes_the_model_files_no_worker_read(icub_urdf, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    worker = EquilibriumWorker()
    worker.set_model(icub_urdf)
    assert worker.start()
    os.kill(worker._process.pid, signal.SIGSTOP)
    assert len(model_files(tmp_path)) == 1
    os.kill(worker._process.pid, signal.SIGKILL)        # it never reads it
    worker.close()
    assert model_files(tmp_path) == []


def test_the_worker_runs_at_a_lower_priority(worker, icub_urdf, standing):
    _, w_H_b, s = standing
    worker.set_model(icub_urdf)
    assert worker.submit(0, w_H_b, s, FEET)
    wait_answer(worker)
    # Linux: SCHED_BATCH (no preemption of the node's threads on wake-up) at nice +10, once
    # started, with or without the right to leave SCHED_IDLE (test_start_priority_*)
    pid = worker._process.pid
    assert os.sched_getscheduler(pid) == os.SCHED_BATCH
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0)
                                                        + 10)
    assert os.getsid(pid) == pid            # a session of its own: a terminal's Ctrl-C misses it


PRIORITY_PROBE = """
import json, os, sys, threading
from kin_dyn_ros import equilibrium_worker as w
if sys.argv[1] == 'forbidden':
    w._may_leave_idle = lambda: False           # as an unprivileged process is
done = threading.Event()
threading.Thread(target=done.wait, daemon=True).start()     # a thread started before (DDS's)
def seen():         # [policy, nice] of every thread, when they all agree
    threads = {(os.sched_getscheduler(tid), os.getpriority(os.PRIO_PROCESS, tid))
               for tid in map(int, os.listdir('/proc/self/task'))}
    assert len(threads) == 1, threads
    return list(threads.pop())
started = w._start_priority('batch', sys.argv[2])
during = seen()
started()
print(json.dumps([w._may_leave_idle(), during, seen()]))
"""


LEAVE_IDLE = """
import os
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
try:
    os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    print('left')
except PermissionError:
    print('refused')
"""


def priority_probe(mode, prefix=(), start='idle'):
    """(may leave idle, [policy, nice] during the start-up, [policy, nice] once started) of
    every thread of a fresh interpreter (run under the command ``prefix``, with a thread
    started before) that runs equilibrium_worker._start_priority with ``start``."""
    out = subprocess.run([*prefix, sys.executable, '-c', PRIORITY_PROBE, mode, start],
                         capture_output=True, text=True, timeout=60,
                         check=True).stdout
    return json.loads(out)


@LINUX
def test_start_priority_where_sched_idle_may_be_left():
    may, during, after = priority_probe('as-is')
    nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
    if may:       # the start-up at SCHED_IDLE, then SCHED_BATCH nice +10
        assert during == [os.SCHED_IDLE, os.getpriority(os.PRIO_PROCESS, 0)]
    else:
        assert during == [os.SCHED_BATCH, nice]
    assert after == [os.SCHED_BATCH, nice]


@LINUX
def test_start_priority_of_a_real_time_nodes_worker_is_the_nodes_own():
    """A real-time node's worker (``start`` "now") starts at the scheduling it was started
    with, never SCHED_IDLE, and works at SCHED_BATCH nice +10 once started."""
    policy, nice = os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0)
    _, during, after = priority_probe('as-is', start='now')
    assert during == [policy, nice]
    assert after == [os.SCHED_BATCH, min(19, nice + 10)]


@LINUX
def test_a_worker_started_by_a_real_time_thread_starts_at_once(worker, icub_urdf, standing):
    """Started (on a request) by a SCHED_FIFO thread (a node's ticking thread with
    ``thread_priority``), the worker is told to start at once (its command line), answers
    and then works at SCHED_BATCH; started by a normal thread, told to start under
    SCHED_IDLE (where it may leave it: _start_priority)."""
    from kin_dyn_ros.node.realtime import configure_thread
    _, w_H_b, s = standing
    worker.set_model(icub_urdf)
    outcome = {}

    def request():
        outcome['refused'] = configure_thread(10)
        if not outcome['refused']:
            outcome['submitted'] = worker.submit(0, w_H_b, s, FEET)
    thread = threading.Thread(target=request)
    thread.start()
    thread.join()
    if outcome['refused']:
        pytest.skip(f"SCHED_FIFO refused here: {outcome['refused'][0]}")
    assert outcome['submitted']
    wait_answer(worker)
    assert worker._process.args[-1] == 'now'
    assert os.sched_getscheduler(worker._process.pid) == os.SCHED_BATCH
    worker.close()
    assert worker.submit(1, w_H_b, s, FEET)             # (from this, a normal thread)
    assert worker._process.args[-1] == 'idle'


@LINUX
def test_start_priority_never_leaves_a_worker_at_sched_idle():
    """Without the right to leave SCHED_IDLE (an unprivileged user's RLIMIT_NICE 0), the
    start-up runs at the working priority already, and stays there (nice +10 once)."""
    _, during, after = priority_probe('forbidden')
    nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
    assert during == after == [os.SCHED_BATCH, nice]


@LINUX
@pytest.mark.skipif(shutil.which('setpriv') is None, reason='needs util-linux setpriv')
def test_a_process_without_cap_sys_nice_may_not_leave_sched_idle():
    """Without CAP_SYS_NICE and with RLIMIT_NICE 0 (an unprivileged user's), the kernel
    refuses to leave SCHED_IDLE: _may_leave_idle must read its rule the same way."""
    import resource
    if resource.getrlimit(resource.RLIMIT_NICE)[0] != 0:
        pytest.skip('RLIMIT_NICE is not 0 here')
    drop = ['setpriv', '--inh-caps=-sys_nice', '--bounding-set=-sys_nice']
    refused = subprocess.run(drop + [sys.executable, '-c', LEAVE_IDLE], capture_output=True,
                             text=True, timeout=60)
    assert refused.stdout.split() == ['refused'], refused.stderr
    may, during, after = priority_probe('as-is', prefix=drop)
    assert may is False
    assert during == after and during[0] == os.SCHED_BATCH


def test_the_worker_makes_progress_on_a_saturated_machine(worker, icub_urdf, standing):
    """A busy loop on every CPU at the node's priority: the worker still answers (~10 % of a
    CPU at nice +10: the scheduler's weight 110 against 1024; SCHED_IDLE's weight is 3, yet
    on this machine's kernel it passes too: 0.08-0.18 s for the 20 answers either way)."""
    _, w_H_b, s = standing
    worker.set_model(icub_urdf)
    assert worker.submit(0, w_H_b, s, FEET)
    wait_answer(worker)                     # started and warm before the machine fills up
    hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for _ in range(os.cpu_count() or 1)]
    try:
        start = time.monotonic()
        for k in range(1, 21):
            assert worker.submit(k, w_H_b, s, FEET)
            assert wait_answer(worker, timeout=60.0)[0] == k
        took = time.monotonic() - start
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert took < 30.0, f'20 answers took {took:.1f} s'


def test_the_worker_runs_the_numpy_core_without_numba(worker, icub_urdf, standing):
    """Only the node's process loads numba and the kernels (~120 MB resident each)."""
    _, w_H_b, s = standing
    worker.set_model(icub_urdf)
    assert worker.submit(0, w_H_b, s, FEET)
    wait_answer(worker)
    with open(f"/proc/{worker._process.pid}/environ", "rb") as f:
        assert b"KIN_DYN_JIT=0" in f.read().split(b"\0")
    with open(f"/proc/{worker._process.pid}/maps", encoding="ascii", errors="replace") as f:
        assert "llvmlite" not in f.read()


def test_errors_come_back_as_values(worker, icub_urdf, standing):
    _, w_H_b, s = standing
    worker.set_model(icub_urdf)
    assert worker.submit(1, w_H_b, s[:-1], FEET)
    key, res = wait_answer(worker)
    assert key == 1 and isinstance(res, ValueError) and 'shape' in str(res)


def test_an_answer_for_a_replaced_model_is_dropped(worker, icub_urdf, standing):
    _, w_H_b, s = standing
    worker.set_model(icub_urdf)
    assert worker.submit('old', w_H_b, s, FEET)
    assert not worker.submit('old, waiting', w_H_b, s, FEET)
    worker.set_model(icub_urdf, gravity=np.array([0.0, 0.0, -1.62]))   # the Moon
    assert wait_answer(worker) is None and not worker.busy   # both dropped
    assert worker.submit('new', w_H_b, s, FEET)
    key, res = wait_answer(worker)
    moon = KinDynComputations(icub_urdf, gravity=np.array([0.0, 0.0, -1.62]), compiled=False)
    assert key == 'new'
    np.testing.assert_array_equal(res.tau, equilibrium_torques(moon, w_H_b, s, FEET).tau)


def test_a_dead_worker_is_reported_and_restarted(icub_urdf, standing):
    _, w_H_b, s = standing
    worker = EquilibriumWorker(restart_s=0.5)
    worker.set_model(icub_urdf)
    assert worker.submit(0, w_H_b, s, FEET)
    wait_answer(worker)
    pid = worker._process.pid
    assert worker.submit(1, w_H_b, s, FEET)
    os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + ANSWER_S
    while not worker.answered:          # (its socket's end is there to take)
        assert time.monotonic() < end
        time.sleep(0.005)
    with pytest.raises(RuntimeError, match='worker process died'):
        worker.poll()
    died = time.monotonic()
    assert not worker.busy
    assert not worker.submit(2, w_H_b, s, FEET)         # not again within restart_s
    while time.monotonic() - died < 0.5:
        time.sleep(0.05)
    try:
        assert worker.submit(3, w_H_b, s, FEET)         # a new process
        assert worker._process.pid != pid
        assert wait_answer(worker)[0] == 3
    finally:
        worker.close()


def test_sigint_to_the_worker_is_ignored(worker, icub_urdf, standing):
    """Ctrl-C reaches the whole process group: the worker keeps serving until the node closes
    the socket."""
    _, w_H_b, s = standing
    worker.set_model(icub_urdf)
    assert worker.submit(0, w_H_b, s, FEET)
    wait_answer(worker)
    assert worker.submit(1, w_H_b, s, FEET)
    os.kill(worker._process.pid, signal.SIGINT)
    assert wait_answer(worker)[0] == 1
    assert worker._process.poll() is None


def test_a_worker_that_cannot_start_is_reported(monkeypatch, icub_urdf, standing):
    """An interpreter that cannot be run: submit returns False, poll reports it once."""
    _, w_H_b, s = standing
    worker = EquilibriumWorker(restart_s=60.0)
    worker.set_model(icub_urdf)
    monkeypatch.setattr(sys, 'executable', '/nonexistent/python')
    assert not worker.submit(0, w_H_b, s, FEET)
    assert worker.answered
    with pytest.raises(RuntimeError, match='could not start the equilibrium worker'):
        worker.poll()
    assert not worker.answered
    assert worker.poll() is None and not worker.busy
    assert not worker.submit(1, w_H_b, s, FEET)         # within restart_s: not retried
    assert not worker.start() and not worker.running
    with pytest.raises(RuntimeError, match='could not start the equilibrium worker'):
        worker.poll()
    worker.close()


def test_close_stops_the_process(icub_urdf, standing):
    _, w_H_b, s = standing
    worker = EquilibriumWorker()
    worker.set_model(icub_urdf)
    worker.submit(0, w_H_b, s, FEET)
    process = worker._process
    wait_answer(worker)
    worker.close()
    assert process.poll() is not None
    worker.close()                                       # idempotent


def test_a_script_without_a_main_guard_runs_once(tmp_path, icub_urdf, standing):
    """The worker is a fresh interpreter on this module, not multiprocessing's spawn (which
    would re-run the user's main script in the child)."""
    _, w_H_b, s = standing
    script = tmp_path / 'unguarded.py'
    np.save(tmp_path / 'state.npy', np.concatenate([w_H_b.ravel(), s]))
    script.write_text(f'''
import pathlib, time
import numpy as np
from kin_dyn_ros.dynamics.contacts import Contact
from kin_dyn_ros.equilibrium_worker import NICE, EquilibriumWorker
print("script ran", flush=True)
x = np.load({str(tmp_path / 'state.npy')!r})
worker = EquilibriumWorker()
worker.set_model(pathlib.Path({icub_models.get_model_file('iCubGazeboV2_5').__str__()!r}).read_text())
sole = np.array({SOLE.tolist()!r})
worker.submit(0, x[:16].reshape(4, 4), x[16:],
              [Contact(c, sole, [0, 0, 1], 0.6) for c in ('l_sole', 'r_sole')])
end = time.monotonic() + {ANSWER_S}
answer = None
while answer is None and time.monotonic() < end:
    answer = worker.poll()
    time.sleep(0.005)
print("feasible", answer[1].feasible, flush=True)
worker.close()
''')
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=2 * ANSWER_S, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count('script ran') == 1 and 'feasible True' in out.stdout, out.stdout


# -- the services' QueryWorker: the same answers in its process and in the calling thread ------
from kin_dyn_ros.dynamics import Representations  # noqa: E402
from kin_dyn_ros.dynamics.queries import run  # noqa: E402
from kin_dyn_ros.equilibrium_worker import QueryWorker  # noqa: E402

QUERY_CASES = (('jacobian', ('l_sole',)), ('mass_matrix', ()),
               ('dynamics', (np.arange(6) * 0.1, None, ['l_sole', 'r_sole'])),
               ('equilibrium_check', (FEET,)))


@pytest.fixture
def queries(icub_urdf, standing):
    w = QueryWorker()
    w.set_model(icub_urdf, model=standing[0].model)
    yield w
    w.close()


def assert_same_answer(got, want):
    assert got.keys() == want.keys()
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(got[key], value, err_msg=key)
        else:
            assert got[key] == value, key


def query_args(kd, args):
    """The case's arguments, with a velocity of the model's size for ``None``."""
    return tuple(np.linspace(-1, 1, kd.NDoF) if a is None else a for a in args)


@pytest.mark.parametrize('name, args', QUERY_CASES, ids=[c[0] for c in QUERY_CASES])
def test_a_query_in_the_worker_equals_the_calling_thread(queries, standing, name, args):
    kd, w_H_b, s = standing
    args = query_args(kd, args)
    rep = Representations.BODY_FIXED_REPRESENTATION
    assert queries.start()
    got = queries.call(kd, name, rep, w_H_b, s, *args)
    assert queries.running and queries._key == 1          # answered by the process
    assert_same_answer(got, run(kd, name, rep, w_H_b, s, *args))


def test_query_errors_cross_as_value_errors(queries, standing):
    kd, w_H_b, s = standing
    with pytest.raises(ValueError, match="unknown frame 'nowhere'"):
        queries.call(kd, 'jacobian', kd.rep, w_H_b, s, 'nowhere')
    assert queries.running


def test_a_dead_or_other_model_worker_leaves_the_query_to_the_calling_thread(
        queries, standing, icub_urdf):
    """kill -9 of the worker: the call is answered in the calling thread (same answer), a
    new worker after restart_s; a caller on another model than the worker's: in its
    thread too."""
    kd, w_H_b, s = standing
    want = run(kd, 'mass_matrix', kd.rep, w_H_b, s)
    assert queries.start()
    os.kill(queries._process.pid, signal.SIGKILL)
    queries._process.wait(5.0)
    assert_same_answer(queries.call(kd, 'mass_matrix', kd.rep, w_H_b, s), want)
    assert not queries.running
    queries._restart_s = 0.0
    assert_same_answer(queries.call(kd, 'mass_matrix', kd.rep, w_H_b, s), want)
    assert queries.running
    other = KinDynComputations(icub_urdf, compiled=False)
    pid, key = queries._process.pid, queries._key
    assert_same_answer(queries.call(other, 'mass_matrix', other.rep, w_H_b, s), want)
    assert queries._key == key and queries._process.pid == pid      # not sent
