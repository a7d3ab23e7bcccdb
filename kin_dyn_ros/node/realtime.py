"""Real-time scheduling of the ticking thread and memory locking, as ros2_control's
controller_manager does it (``thread_priority``, ``cpu_affinity``, ``lock_memory``).

Each request either takes effect or gives one warning naming why the OS refused it (no
CAP_SYS_NICE and an rtprio limit below the priority, a cgroup without real-time runtime, no
CAP_IPC_LOCK and a memlock limit below what the process holds) and how to allow it; the
node runs on either way. Linux only (elsewhere: a warning). The standard library only.

SCHED_FIFO is set with SCHED_RESET_ON_FORK: the worker processes the ticking thread starts
run at normal priority (they lower theirs further), never at the tick's. The middleware's
own threads (Fast DDS's reception and event threads: not started by Python) carry the
tick's inputs and outputs: :func:`configure_native_threads` gives them the tick's priority,
as ``chrt -f`` would give the whole process (the node calls it again once a second, for
threads the middleware starts later or whose scheduling changed); the executor's thread
(services, parameters, timers) keeps normal scheduling.
"""

import ctypes
import errno
import os
import resource
import threading

__all__ = ["configure_thread", "configure_native_threads", "has_priority", "lock_memory",
           "rt_refusal", "memlock_refusal"]

_MCL_CURRENT, _MCL_FUTURE = 1, 2
HOW_TO = ("Allow it with /etc/security/limits.conf (`<user> - rtprio 99`, `<user> - memlock "
          "unlimited`) or, in a container, --cap-add=sys_nice --ulimit rtprio=99 --ulimit "
          "memlock=-1")


def configure_thread(priority=0, cpus=(), tid=0):
    """SCHED_FIFO at ``priority`` (1-99; 0: leave the policy) and the CPU set ``cpus``
    (empty: leave it) of the thread ``tid`` (0: the calling thread). Returns the warnings
    (empty when both took effect)."""
    warnings = []
    if cpus:
        try:
            os.sched_setaffinity(tid, set(cpus))
        except (AttributeError, OSError, ValueError) as exc:
            warnings.append(f"cpu_affinity {list(cpus)}: the OS refused ({exc}); the ticking "
                            f"thread runs on any CPU")
    if priority > 0:
        try:
            policy = os.SCHED_FIFO | getattr(os, "SCHED_RESET_ON_FORK", 0)
            os.sched_setscheduler(tid, policy, os.sched_param(priority))
        except AttributeError:
            warnings.append(f"thread_priority {priority}: no SCHED_FIFO on this OS; the "
                            f"ticking thread runs at normal priority")
        except OSError as exc:
            warnings.append(f"thread_priority {priority}: SCHED_FIFO refused "
                            f"({rt_refusal(exc.errno, priority)}); the ticking thread runs at "
                            f"normal priority. {HOW_TO}")
    return warnings


def native_threads():
    """Ids of the process's threads that Python did not start (the middleware's: DDS
    reception and events), Linux; empty elsewhere."""
    try:
        tids = {int(t) for t in os.listdir("/proc/self/task")}
    except OSError:
        return []
    return sorted(tids - {t.native_id for t in threading.enumerate()})


def configure_native_threads(priority, done=None):
    """SCHED_FIFO at ``priority`` (> 0) for every thread of :func:`native_threads`: the
    middleware threads that deliver the ticking thread's inputs and send its outputs, which
    would otherwise wait behind it for the CPU. Every thread is tried: one refused (or one
    that ended since it was listed) does not leave the others at normal scheduling. With
    ``done`` ({thread id: configured?}, for a caller that calls again: threads the
    middleware starts later, or whose scheduling changed), a thread refused before is left
    out, one configured before only when it still has ``priority`` (:func:`has_priority`),
    and the outcome of each one tried is kept there. Returns the warnings: the first
    refusal of a thread that still exists, if any."""
    refused = []
    for tid in native_threads() if priority > 0 else ():
        if done is not None and tid in done and (not done[tid]
                                                 or has_priority(tid, priority)):
            continue
        warnings = configure_thread(priority, (), tid)
        if done is not None:
            done[tid] = not warnings
        if warnings and not refused and os.path.exists(f"/proc/self/task/{tid}"):
            refused.append(warnings[0].replace("the ticking thread", "the middleware's threads"))
    return refused


def has_priority(tid, priority):
    """Whether thread ``tid`` runs SCHED_FIFO at ``priority`` (True when that cannot be read:
    it ended, or no such call here)."""
    try:
        policy = os.sched_getscheduler(tid) & ~getattr(os, "SCHED_RESET_ON_FORK", 0)
        return policy == os.SCHED_FIFO and os.sched_getparam(tid).sched_priority == priority
    except (AttributeError, OSError):
        return True


def rt_refusal(code, priority, rtprio_limit=None):
    """Why SCHED_FIFO at ``priority`` was refused with errno ``code`` (``rtprio_limit``: the
    soft RLIMIT_RTPRIO, read when None)."""
    if code != errno.EPERM:
        return os.strerror(code)
    limit = resource.getrlimit(resource.RLIMIT_RTPRIO)[0] if rtprio_limit is None \
        else rtprio_limit
    if limit < priority:
        return f"no CAP_SYS_NICE and the rtprio limit is {limit}, below {priority}"
    return ("permitted by the rtprio limit, refused by the kernel: the cgroup has no "
            "real-time runtime (cpu.rt_runtime_us; Docker: --cpu-rt-runtime)")


def lock_memory():
    """mlockall(MCL_CURRENT | MCL_FUTURE): the process's memory never pages out. Returns a
    warning, or None when it took effect."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        failed = libc.mlockall(_MCL_CURRENT | _MCL_FUTURE) != 0
    except (AttributeError, OSError) as exc:
        return f"lock_memory: mlockall unavailable ({exc}); memory is not locked"
    if not failed:
        return None
    return (f"lock_memory: mlockall refused ({memlock_refusal(ctypes.get_errno())}); memory "
            f"is not locked. {HOW_TO}")


def memlock_refusal(code, memlock_limit=None):
    """Why mlockall was refused with errno ``code`` (``memlock_limit``: the soft
    RLIMIT_MEMLOCK in bytes, read when None)."""
    limit = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0] if memlock_limit is None \
        else memlock_limit
    if code == errno.ENOMEM:
        shown = "unlimited" if limit == resource.RLIM_INFINITY else f"{limit} bytes"
        return f"no CAP_IPC_LOCK and the memlock limit is {shown}, below what the node holds"
    if code == errno.EPERM:
        return "no CAP_IPC_LOCK"
    return os.strerror(code)
