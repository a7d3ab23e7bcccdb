#!/usr/bin/env python3
"""A witness of the machine's own speed during a bench run (not a test): one small process
per CPU, pinned to it, that every PERIOD_S runs the same short piece of Python (~0.1 ms)
and records the CPU time it took (its thread's CPU clock, so that waiting for the CPU
behind other processes does not count: only the CPU running slow does).

Why: the shared 2-vCPU machines here have spells, every 1.5-3.5 s, in which both CPUs run
the same code 10-15x slower for 25-120 ms (measured on 2026-11-28 with this witness alone
on an idle machine; the kernel counts no steal time for them). A node ticking at 200 Hz
falls behind in each one, whatever it does; a delivery criterion that counts those ticks
judges the machine, not the node. ``spells()`` names them, so that a bench can set them
aside and say how much it set aside. Costs ~2-3 % of each CPU.

Usage (a bench):   witness = SpeedWitness(); ...; witness.stop(); witness.spells()
       (by hand):  python bench/machine_speed.py [SECONDS]   prints the spells seen
"""

import array
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import time

import numpy as np

PERIOD_S = 0.005        # one measurement per CPU every 5 ms
WORK_ITERATIONS = 1000  # ~0.08 ms of CPU on this machine kind at full speed
SLOW_FACTOR = 3.0       # a sample this many times its median CPU time is a slow one
MERGE_NS = 20_000_000   # slow samples closer than this make one spell

__all__ = ["SpeedWitness", "covered_ns", "in_intervals", "set_aside", "spells"]


def _work():
    s = 0
    for i in range(WORK_ITERATIONS):
        s += i * i
    return s


def run_child(cpu, path):
    """The witness on ``cpu`` until its stdin closes; then [wall ns, CPU ns, ...] (int64) of
    every measurement to ``path``."""
    try:
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):
        pass
    samples = array.array('q')
    clock = time.thread_time_ns
    print('ready', flush=True)
    while not select.select([sys.stdin], [], [], PERIOD_S)[0]:
        c0 = clock()
        _work()
        samples.append(time.time_ns())
        samples.append(clock() - c0)
    pathlib.Path(path).write_bytes(samples.tobytes())


def spells(walls, cpu_ns, slow_factor=SLOW_FACTOR, merge_ns=MERGE_NS):
    """[(start ns, end ns, worst slowdown)] of the spells in one CPU's samples: runs of
    samples whose CPU time is at least ``slow_factor`` times the median, merged when less
    than ``merge_ns`` apart; a spell starts at the sample before its first slow one (the
    slowness began after it) and ends at its last slow one's wall time."""
    if len(walls) < 10:
        return []
    ratio = cpu_ns / np.median(cpu_ns)
    out = []
    for i in np.flatnonzero(ratio >= slow_factor):
        start = int(walls[i - 1]) if i else int(walls[i]) - int(cpu_ns[i])
        if out and start - out[-1][1] < merge_ns:
            out[-1] = (out[-1][0], int(walls[i]), max(out[-1][2], float(ratio[i])))
        else:
            out.append((start, int(walls[i]), float(ratio[i])))
    return out


def set_aside(found, late_ns):
    """[(start ns, end ns)] of what the spells ``found`` disturb in a stream whose output
    counts as late after ``late_ns``: from ``late_ns`` before each (an output then on its
    way meets it) to as long again as the spell after it, plus ``late_ns`` (the backlog
    worked off)."""
    return [(s - late_ns, e + (e - s) + late_ns) for s, e, *_ in found]


def in_intervals(times, intervals):
    """Boolean mask of ``times`` [ns] inside one of ``intervals`` [(start, end)]."""
    times = np.asarray(times)
    mask = np.zeros(times.shape, bool)
    for start, end in intervals:
        mask |= (times >= start) & (times <= end)
    return mask


def covered_ns(intervals, first, last):
    """How much of [first, last] [ns] the ``intervals`` cover (overlaps counted once)."""
    total, reach = 0, first
    for start, end in sorted(intervals):
        start, end = max(start, reach), min(end, last)
        if end > start:
            total, reach = total + end - start, end
    return total


class SpeedWitness:
    """One witness process per CPU this process may run on (see the module)."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix='kin_dyn_speed_')
        self._procs = []
        for cpu in sorted(os.sched_getaffinity(0)):
            path = pathlib.Path(self._dir.name) / f'cpu{cpu}.bin'
            proc = subprocess.Popen([sys.executable, __file__, '--child', str(cpu), str(path)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            proc.stdout.readline()
            self._procs.append((cpu, path, proc))
        self._samples = None

    def stop(self):
        """End the witnesses and read their samples (idempotent)."""
        if self._samples is not None:
            return
        self._samples = {}
        for cpu, path, proc in self._procs:
            proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
            data = np.fromfile(path, np.int64) if path.exists() else np.zeros(0, np.int64)
            self._samples[cpu] = (data[0::2], data[1::2])
        self._dir.cleanup()

    def spells(self, first=None, last=None):
        """[(start ns, end ns, worst slowdown)] of every CPU's spells, sorted, overlapping
        ones merged (the CPUs here slow down together); with ``first`` and ``last`` [wall
        ns], those that overlap [first, last] only."""
        self.stop()
        both = sorted(s for walls, cpu in self._samples.values() for s in spells(walls, cpu))
        out = []
        for start, end, worst in both:
            if out and start <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end), max(out[-1][2], worst))
            else:
                out.append((start, end, worst))
        if first is None:
            return out
        return [(s, e, worst) for s, e, worst in out if e >= first and s <= last]

    def median_cpu_us(self):
        """{cpu: median CPU time [us] of one measurement} (the machine's speed at its best)."""
        self.stop()
        return {cpu: float(np.median(c)) * 1e-3 if len(c) else None
                for cpu, (_, c) in self._samples.items()}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == '--child':
        return run_child(int(sys.argv[2]), sys.argv[3])
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    witness = SpeedWitness()
    t0 = time.time_ns()
    time.sleep(seconds)
    found = witness.spells()
    print(f'{seconds:.0f} s, median CPU per measurement (us): {witness.median_cpu_us()}')
    print(f'{len(found)} spells of >= {SLOW_FACTOR:.0f}x slower, '
          f'{sum(e - s for s, e, _ in found) * 1e-6:.0f} ms in all')
    for start, end, worst in found:
        print(f'  at {(start - t0) * 1e-9:7.3f} s  {(end - start) * 1e-6:6.1f} ms  '
              f'worst {worst:5.1f}x')
    return 0


if __name__ == '__main__':
    sys.exit(main())
