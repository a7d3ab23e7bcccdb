"""Equilibrium torques in a worker process, so that the node's tick never waits for them.

:func:`~.dynamics.equilibrium.equilibrium_torques` (an LSEI solved with NNLS) takes ~0.4 ms
on iCub: inside a 1 kHz tick it would delay every due tick and the JointStates queued behind
it. The node hands it to :class:`EquilibriumWorker` instead: one request in flight at a time
and at most one waiting (a newer request replaces the waiting one, so the rate adapts to
what the worker sustains and the answers stay recent), answered by a separate process that
holds its own copy of the model, and published on a later tick with the stamp of the tick it
was computed for.

The worker imports no ROS: NumPy, SciPy and :mod:`kin_dyn_ros.dynamics` only. It is started
by :meth:`EquilibriumWorker.start` or on the first request, as
``python -m kin_dyn_ros.equilibrium_worker FD`` in the directory the node imported the
package from, so that it runs the same code (a fresh interpreter:
never ``fork``, the node's process runs DDS threads; and not multiprocessing's ``spawn``,
which re-runs the parent's main script in the child), talks over a socket pair with
:class:`multiprocessing.connection.Connection` (pickled messages), exits when the node closes
the socket or dies, and is restarted on the next request if it crashed (at most once per
``restart_s``, so that a worker that cannot start does not cost a process per tick). The
robot description goes through a temporary file that the worker reads and removes, not
through the socket: a socket holds ~200 KB, and a larger description (hundreds of fixed
frames, long mesh paths) would block the node until the worker, perhaps still importing
NumPy, had read it (~0.4 s for 600 KB on a 2-core machine). It runs
under SCHED_BATCH at nice +10 (Linux; elsewhere nice +10), once started (its start-up, ~1 s
of CPU, runs under SCHED_IDLE where the process may leave it later, so that it never
competes with the node's first ticks; leaving SCHED_IDLE needs CAP_SYS_NICE or an
RLIMIT_NICE, so without them the start-up runs at the working priority already): a batch
process does not preempt the tick when a request wakes it (a plain niced one did: handing a
request over cost the tick ~0.3 ms on a 2-core machine), and at nice +10 it gets ~10 % of a
CPU that the node wants (the scheduler's weights 110 against 1024), so it makes progress on
a saturated machine (SCHED_IDLE, its weight 3, is reported to have given the demo at 500 Hz
no answer at all on a saturated machine; not seen here since). A node whose ticking thread
is real-time (``thread_priority``) always runs first: a worker (re)started from such a
thread starts at the node's own scheduling instead of SCHED_IDLE (:func:`_real_time_caller`;
under SCHED_IDLE a restart took 6-8 s on a saturated 2-core machine, bench/soak.py). It
runs in a session of its own, so a terminal's Ctrl-C (sent to the foreground process group)
does not reach it, not even while its interpreter starts, and ignores SIGINT: it stops when
the node, shutting down (or dying), closes the socket.

:attr:`EquilibriumWorker.replaced` and :attr:`EquilibriumWorker.refused` count the requests
that were never solved: replaced while waiting for the worker, and refused while it was
restarting.
"""

import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from typing import NamedTuple

import numpy as np

__all__ = ["EquilibriumWorker", "EquilibriumAnswer", "QueryWorker"]


def worker_environment():
    """The workers' environment: the node's, with the NumPy core (``KIN_DYN_JIT=0``). numba
    and the loaded kernels cost ~120 MB resident per process, and a worker's answer (an LP,
    a service's matrices) is not on the tick's path: only the node's process loads them."""
    return dict(os.environ, KIN_DYN_JIT="0")


class EquilibriumAnswer(NamedTuple):
    """What the node publishes of an :class:`~.dynamics.equilibrium.EquilibriumTorques`:
    ``feasible``, ``tau`` (n,) [N m or N] or None, ``message``. It crosses the socket as
    ``(feasible, tau bytes or None, message)``: unpickling the whole result (its forces,
    points and wrenches as NumPy arrays) cost the node ~65 us, 185 us at p99, right after
    an idle wait."""

    feasible: bool
    tau: np.ndarray
    message: str


def _encode_answer(result):
    if isinstance(result, ValueError):
        return result
    tau = None if result.tau is None else np.asarray(result.tau, float).tobytes()
    return result.feasible, tau, result.message


def _decode_answer(answer):
    if isinstance(answer, ValueError):
        return answer
    feasible, tau, message = answer
    return EquilibriumAnswer(feasible, None if tau is None else np.frombuffer(tau), message)

_JOIN_S = 2.0
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NICE = 10     # added to the worker's niceness (lower priority than the node's)


def _serve(conn, on_model=None):
    """The worker's loop: ``("model", path, kwargs)`` builds the model from the URDF file
    ``path`` (then removed) and KinDynComputations ``kwargs``, ``("contacts", contacts)``
    sets the contacts of the next requests, ``("solve", key, w_H_b, s)`` (the arrays as
    float64 bytes: pickling NumPy arrays cost the node ~50 us after an idle wait, against
    ~9 us) answers ``(key, encoded EquilibriumAnswer or ValueError)``, ``("query", key,
    name, representation, args)`` answers ``(key, dict or ValueError)`` of
    :func:`~.dynamics.queries.run`; EOF ends it. ``on_model()`` is called once, when the
    first model is built (the worker's start-up is over)."""
    from .dynamics import KinDynComputations
    from .dynamics.equilibrium import equilibrium_torques
    from .dynamics.queries import run

    kd, contacts = None, ()
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request[0] == "model":
            kd = _load_model(KinDynComputations, *request[1:])
            if on_model is not None:
                on_model, started = None, on_model
                started()
            continue
        if request[0] == "contacts":
            contacts = request[1]
            continue
        key = request[1]
        try:
            if isinstance(kd, ValueError):
                raise kd
            if request[0] == "query":
                name, representation, args = request[2:]
                answer = run(kd, name, representation, *args)
            else:
                w_H_b, s = request[2:]
                answer = _encode_answer(equilibrium_torques(
                    kd, np.frombuffer(w_H_b).reshape(4, 4), np.frombuffer(s), contacts))
        except ValueError as exc:
            answer = exc
        try:
            conn.send((key, answer))
        except (BrokenPipeError, OSError):
            return


def _load_model(kin_dyn, path, kwargs):
    """``kin_dyn(urdf text of path, **kwargs)``, the file removed; a ValueError (answered to
    every request until the next model) when the file cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            urdf = f.read()
    except OSError as exc:
        return ValueError(f"the equilibrium worker could not read the model ({exc})")
    finally:
        _remove(path)
    return kin_dyn(urdf, **kwargs)


def _remove(path):
    try:
        os.unlink(path)
    except OSError:     # already removed (by the worker, or the node on close)
        pass


class EquilibriumWorker:
    """Parent side: :meth:`set_model`, :meth:`submit`, :meth:`poll`, :meth:`close`.

    Answers are matched to the model they were computed with: one computed for a model that
    has since been replaced is dropped.
    """

    _PRIORITY = "batch"     # the worker's scheduling (see _lower_priority)

    def __init__(self, restart_s=1.0):
        self.replaced = self.refused = 0     # requests never solved (see the module)
        self._process = self._conn = self._poller = self._model = self._waiting = None
        self._generation, self._in_flight, self._sent_contacts = 0, None, None
        self._restart_s, self._died = float(restart_s), None   # monotonic time of a death
        self._model_files = []      # sent to a worker that may not have read them yet
        self._start_error = None

    @property
    def busy(self):
        """True while a request is in flight."""
        return self._in_flight is not None

    @property
    def answered(self):
        """True when :meth:`poll` has something to give now: an answer (or the worker's end)
        readable on the socket, or a start-up error not yet reported. One ``poll(0)`` while
        a request is in flight (~2 us), no call otherwise: the node asks on every tick."""
        if self._in_flight is None:
            return self._start_error is not None
        return bool(self._poller.poll(0))

    @property
    def running(self):
        """True while the worker process runs."""
        return self._process is not None and self._process.poll() is None

    def start(self):
        """Start the worker process now, if it does not run, rather than on the next request:
        its start-up (~1 s of CPU: the interpreter, NumPy, SciPy, the model) then happens at
        configuration, not while the node ticks. Returns whether it runs; a failure to start
        is raised by the next :meth:`poll`. False before :meth:`set_model`."""
        if self._model is None:
            return False
        if self.running:
            return True
        try:
            self._start()
        except OSError as exc:          # e.g. the interpreter cannot be run
            self._stop()
            self._died, self._start_error = time.monotonic(), exc
            return False
        return self.running

    def set_model(self, urdf, root_link=None, gravity=None):
        """The model to solve on (KinDynComputations arguments); answers still in flight for
        the previous one will be dropped."""
        self._model = (urdf, dict(root_link=root_link))
        if gravity is not None:
            self._model[1]["gravity"] = gravity
        self._generation += 1
        self._waiting = None
        if self._process is not None:
            self._send_model()

    def submit(self, key, w_H_b, s, contacts):
        """Ask for ``equilibrium_torques(kd, w_H_b, s, contacts)``; ``key`` comes back with the
        answer. Sent at once when the worker is idle (returns True); while it is busy the
        request waits for the answer in flight, replacing an older waiting one (returns
        False). Ignored before :meth:`set_model`, and within ``restart_s`` of the worker's
        death (returns False)."""
        if self._model is None or (self._died is not None
                                   and time.monotonic() - self._died < self._restart_s):
            self.refused += 1
            return False
        request = (key, w_H_b, s, tuple(contacts))
        if self.busy:
            self.replaced += self._waiting is not None
            self._waiting = request
            return False
        return self._solve(request)

    def _solve(self, request):
        """Send ``(key, w_H_b, s, contacts)``; the contacts only when they are not the
        objects sent last (a node's contacts are the same objects tick after tick: this
        saves pickling them, most of a request's cost)."""
        key, w_H_b, s, contacts = request
        if self._conn is None and not self.start():   # a dead worker fails the send below
            return False
        sent = self._sent_contacts      # held, so that no other object can take their ids
        if sent is None or len(sent) != len(contacts) or any(
                a is not b for a, b in zip(sent, contacts)):
            if not self._send(("contacts", contacts)):
                return False
            self._sent_contacts = contacts
        if not self._send(("solve", key, np.asarray(w_H_b, float).tobytes(),
                           np.asarray(s, float).tobytes())):
            return False
        self._in_flight = self._generation
        return True

    def poll(self):
        """``(key, EquilibriumAnswer or ValueError)`` when an answer for the current model has
        arrived, else None. Never blocks. Raises RuntimeError, once, when the worker died or
        could not be started (:meth:`submit` starts a new one after ``restart_s``)."""
        if self._start_error is not None:
            exc, self._start_error = self._start_error, None
            raise RuntimeError(f"could not start the equilibrium worker process ({exc!r}); "
                               f"trying again on a due tick after {self._restart_s:g} s")
        if not self.busy:
            return None
        try:
            if not self._poller.poll(0):    # a dead worker's socket polls readable (EOF)
                return None
            key, result = self._conn.recv()
        except (EOFError, OSError) as exc:
            self._stop()
            self._died = time.monotonic()
            raise RuntimeError(f"the equilibrium worker process died ({exc!r}); restarting "
                               f"it on a due tick after {self._restart_s:g} s") from exc
        generation, self._in_flight = self._in_flight, None
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self._solve(waiting)
        return (key, _decode_answer(result)) if generation == self._generation else None

    def close(self):
        """Stop the worker process (idempotent)."""
        self._stop()

    def _start(self):
        self._stop()
        mine, theirs = socket.socketpair()
        with theirs:
            # "-m" puts the working directory first on the worker's path: start it in the
            # directory this package was imported from, so that it runs the node's own code
            # (not another kin_dyn_ros in the node's working directory, e.g. a source tree)
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(theirs.fileno()), self._PRIORITY,
                 "now" if _real_time_caller() else "idle"],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, cwd=_PACKAGE_PARENT,
                env=worker_environment(), start_new_session=True)
        self._conn = Connection(mine.detach())
        # one poll object for the connection's lifetime: Connection.poll() builds a selector
        # on every call (~20 us at 1 kHz on a 2-core machine, against ~2 us)
        self._poller = select.poll()
        self._poller.register(self._conn.fileno(), select.POLLIN)
        self._send_model()

    def _send_model(self):
        """Hand the model to the worker without waiting for it: the description in a
        temporary file (the worker reads and removes it; :meth:`_stop` removes what a worker
        left), its path and the other arguments on the socket."""
        urdf, kwargs = self._model
        try:
            fd, path = tempfile.mkstemp(prefix="kin_dyn_model_", suffix=".urdf")
            self._model_files = [p for p in self._model_files if os.path.exists(p)] + [path]
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(urdf)
        except OSError as exc:          # no writable temporary directory: like a failed start
            self._stop()
            self._died, self._start_error = time.monotonic(), exc
            return
        self._send(("model", path, kwargs))

    def _send(self, message):
        try:
            self._conn.send(message)
            return True
        except (BrokenPipeError, OSError):
            self._stop()
            return False

    def _stop(self):
        self._in_flight = self._waiting = self._poller = self._sent_contacts = None
        if self._conn is not None:
            self._conn.close()
        if self._process is not None:
            _end(self._process)
        self._process = self._conn = None
        for path in self._model_files:          # model files no worker read
            _remove(path)
        self._model_files = []


_UNAVAILABLE = object()


def _end(process):
    """Wait for a worker ``process`` to exit on its closed socket; after _JOIN_S, back at
    normal priority (on a busy machine it may run seldom, even to die) and killed. Never
    raises, a Ctrl-C (KeyboardInterrupt) during the wait included: a process that still
    has not gone is killed, or reaped later."""
    try:
        process.wait(_JOIN_S)
        return
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        pass
    try:
        os.sched_setscheduler(process.pid, os.SCHED_OTHER, os.sched_param(0))
    except (AttributeError, OSError):
        pass
    process.kill()
    try:
        process.wait(_JOIN_S)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        pass


class QueryWorker(EquilibriumWorker):
    """The services' worker: :meth:`call` runs a query of :mod:`.dynamics.queries` in a
    process of its own and waits for the answer (the calling thread waits on a socket, the
    interpreter lock released: the node's tick goes on meanwhile). When the worker cannot
    run (not started, died, or holding another model than the caller's), the query runs in
    the calling thread instead (the plain path: the same function, the same answer).

    Its process runs as the equilibrium worker's: SCHED_BATCH at nice +10, so a waking
    worker does not preempt the tick, and its answers still come on a saturated machine.
    """

    _PRIORITY = "batch"

    def __init__(self, restart_s=1.0, timeout_s=30.0):
        super().__init__(restart_s)
        self._call_lock = threading.Lock()     # one query at a time on the socket
        self._timeout_s, self._key, self._model_id = float(timeout_s), 0, None

    def set_model(self, urdf, root_link=None, gravity=None, model=None):
        """As :meth:`EquilibriumWorker.set_model`; ``model`` (the caller's model object)
        identifies it: :meth:`call` with another model runs in the calling thread."""
        with self._call_lock:
            super().set_model(urdf, root_link, gravity)
            self._model_id = model

    def call(self, kd, name, representation, w_H_b, s, *args):
        """``queries.run(kd, name, representation, w_H_b, s, *args)``, in the worker when it
        holds ``kd``'s model; ValueError as the query raises it."""
        with self._call_lock:
            answer = _UNAVAILABLE
            if self._model_id is kd.model:
                answer = self._ask(("query", name, representation, (w_H_b, s, *args)))
        if answer is _UNAVAILABLE:
            from .dynamics.queries import run
            answer = run(kd, name, representation, w_H_b, s, *args)
        if isinstance(answer, ValueError):
            raise answer
        return answer

    def _ask(self, query):
        """The worker's answer to ``query``, or _UNAVAILABLE (not running, died, timed out)."""
        if self._died is not None and time.monotonic() - self._died < self._restart_s:
            return _UNAVAILABLE
        if self._conn is None and not self.start():
            return _UNAVAILABLE
        self._key += 1
        if not self._send((query[0], self._key, *query[1:])):
            return _UNAVAILABLE
        deadline = time.monotonic() + self._timeout_s
        try:
            while time.monotonic() < deadline:
                if self._poller.poll(max(1, int(1e3 * (deadline - time.monotonic())))):
                    key, answer = self._conn.recv()
                    if key == self._key:
                        return answer
        except (EOFError, OSError):
            pass
        self._stop()                # died or timed out: a new one on a later call
        self._died = time.monotonic()
        return _UNAVAILABLE


def _lower_priority(priority="batch"):
    """``batch``: SCHED_BATCH (Linux) at nice +NICE; ``idle``: SCHED_IDLE (Linux), else nice
    +NICE; ``nice``: nice +NICE; at the node's priority when none is permitted. For every
    thread of the process: Linux schedules threads, and a policy or nice value set for "pid
    0" is the calling thread's only (threads started before it, e.g. DDS's, keep theirs;
    threads started after it inherit their starter's)."""
    policy = getattr(os, {"batch": "SCHED_BATCH", "idle": "SCHED_IDLE"}.get(priority, ""),
                     None)
    nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE)
    for tid in _threads():
        try:
            if policy is not None:
                os.sched_setscheduler(tid, policy, os.sched_param(0))
                if priority == "idle":
                    continue
        except (AttributeError, OSError):
            pass
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        except OSError:
            pass


def _threads():
    """The thread ids of this process (Linux's /proc), else [0] (the calling thread)."""
    try:
        return [int(tid) for tid in os.listdir("/proc/self/task")]
    except (OSError, ValueError):
        return [0]


def _start_priority(priority="batch", start="idle"):
    """The start-up's scheduling: with ``start`` "idle", SCHED_IDLE where this process may
    leave it later (returns a function that switches to ``priority``, to call once started);
    otherwise ``priority`` at once (returns a function that does nothing), so that a worker
    never stays at SCHED_IDLE, where it would starve on a saturated machine. With ``start``
    "now": the scheduling it was started with until then (the node's, SCHED_OTHER: a
    real-time node's threads preempt it)."""
    if start == "now":
        return lambda: _lower_priority(priority)
    if _may_leave_idle():
        _lower_priority("idle")
        return lambda: _lower_priority(priority)
    _lower_priority(priority)
    return lambda: None


def _real_time_caller():
    """Whether the calling thread runs real-time (SCHED_FIFO or SCHED_RR: the ticking thread
    of a node with ``thread_priority``, its grant not refused). Its ticks preempt whatever a
    worker's start-up runs at, so a worker it starts need not start under SCHED_IDLE, where
    the node's other processes (service clients, its services' process) would starve it."""
    try:
        policy = os.sched_getscheduler(0) & ~getattr(os, "SCHED_RESET_ON_FORK", 0)
        return policy in (os.SCHED_FIFO, os.SCHED_RR)
    except (AttributeError, OSError):
        return False


def _may_leave_idle():
    """True when Linux will let this process leave SCHED_IDLE: CAP_SYS_NICE, or an RLIMIT_NICE
    that allows its nice value (an unprivileged process's limit is usually 0: it may not)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            caps = next(line for line in f if line.startswith("CapEff:"))
        if int(caps.split()[1], 16) >> 23 & 1:      # CAP_SYS_NICE
            return True
        import resource
        limit = resource.getrlimit(resource.RLIMIT_NICE)[0]
        return limit == resource.RLIM_INFINITY or \
            20 - os.getpriority(os.PRIO_PROCESS, 0) <= limit
    except (OSError, ValueError, StopIteration, ImportError, AttributeError):
        return False


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the start-up (the interpreter, NumPy, SciPy, the model: ~1 s of CPU) under SCHED_IDLE
    # where it may be left, so that it never competes with the node's first ticks (or, for
    # a real-time node, at once: argv[3] "now"); then the working priority
    _serve(Connection(int(sys.argv[1])),
           on_model=_start_priority(*sys.argv[2:4]))
