"""bench/machine_speed.py: the spells found in one CPU's samples (made up here, so that the
right answer is known), and the witness processes running and answering (~1 s)."""

import os
import time
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
from machine_speed import (SpeedWitness, covered_ns, in_intervals, set_aside,  # noqa: E402
                           spells)

MS = 1_000_000


def samples(slow_at, n=400, period_ms=5, cpu_us=90, factor=12.0):
    """Wall times every ``period_ms`` and CPU times of ``cpu_us``, ``factor`` times that at
    the sample indices ``slow_at``."""
    walls = np.arange(n, dtype=np.int64) * period_ms * MS + 10**18
    cpu = np.full(n, cpu_us * 1000, np.int64)
    cpu[list(slow_at)] = int(cpu_us * 1000 * factor)
    return walls, cpu


def test_a_run_of_slow_samples_is_one_spell_from_the_sample_before_it():
    walls, cpu = samples(range(100, 110))
    assert spells(walls, cpu) == [(int(walls[99]), int(walls[109]), 12.0)]


def test_slow_samples_closer_than_the_merge_distance_make_one_spell():
    walls, cpu = samples([100, 101, 104, 105])          # 10 ms apart: merged
    assert spells(walls, cpu) == [(int(walls[99]), int(walls[105]), 12.0)]
    walls, cpu = samples([100, 101, 120, 121])          # 95 ms apart: two spells
    assert spells(walls, cpu) == [(int(walls[99]), int(walls[101]), 12.0),
                                  (int(walls[119]), int(walls[121]), 12.0)]


def test_samples_under_the_slow_factor_are_no_spell():
    walls, cpu = samples(range(100, 130), factor=2.5)    # a busier cache, not a spell
    assert spells(walls, cpu) == []
    assert spells(*samples([], n=5)) == []              # too few samples to judge


def test_the_worst_slowdown_of_a_spell_is_its_slowest_sample():
    walls, cpu = samples([200, 201, 202])
    cpu[201] *= 2
    assert spells(walls, cpu) == [(int(walls[199]), int(walls[202]), 24.0)]


def test_the_witness_measures_every_cpu_and_ends_with_stop():
    witness = SpeedWitness()
    procs = [proc for _, _, proc in witness._procs]
    time.sleep(1.0)
    medians = witness.median_cpu_us()
    assert set(medians) == set(os.sched_getaffinity(0))
    assert all(m is not None and 1.0 < m < 50_000 for m in medians.values()), medians
    assert all(proc.poll() is not None for proc in procs)
    found = witness.spells()
    assert all(start <= end and worst >= 3.0 for start, end, worst in found)
    assert witness.spells(0, 2**62) == found and witness.spells(0, 1) == []   # overlapping only


def test_what_a_spell_sets_aside_and_how_much_of_a_run_that_covers():
    intervals = set_aside([(100 * MS, 150 * MS, 12.0)], late_ns=5 * MS)
    assert intervals == [(95 * MS, 205 * MS)]      # 5 ms before, 50 + 5 ms after
    times = np.array([94, 95, 150, 205, 206]) * MS
    assert in_intervals(times, intervals).tolist() == [False, True, True, True, False]
    # overlapping intervals counted once, clipped to the run
    assert covered_ns([(0, 10), (5, 20), (30, 40)], 2, 35) == 18 + 5
    assert covered_ns([], 0, 100) == 0
