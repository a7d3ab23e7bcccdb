"""The soak runner (bench/soak.py, issue 17) in its CI variant: the real node as a separate
process under load at 200 Hz for 30 s, every fault once (--quick-schedule: worker kill,
publisher restart, model reload and back, broken description, stamp jump, 1 s of bad input,
parameter changes and back, SIGSTOP, service clients at 200 Hz each), every criterion of
the runner asserted but the memory slope (too short to mean anything).

The machine's own slow spells (bench/machine_speed.py: here both CPUs run the same code
10-15x slower for 25-120 ms every 1.5-3.5 s, seen on 2026-11-28 with nothing else running)
are set aside from the delivery criterion by the runner and counted; the test fails if they
take more than MAX_SET_ASIDE of the JointStates it judges (then the run judged too little).
Before that, CI failed here 3 times in 5 runs on 97-98 % on time, every late output in such
a spell.

200 Hz, not 1 kHz: the CI machine has 2 cores, shared by the node, the publisher, the
receiver and the service clients (and whatever else runs): at 1 kHz the outputs outside the
fault windows stay above 99 % only while the machine keeps up. At 250 Hz, in the slow spell
of 2026-11-27, the node took ~2.1 ms of CPU per JointState in this schedule (a fault every
2 s) and the outputs on time were 98.6-99.6 % (the NumPy core 97.9 %): too close to the
99 % to hold in a slow spell; 200 Hz leaves the margin. The 20 MB robot_description of
the bad-input burst is the runner's default, a well-formed URDF of ~900,000 links (the node
rejects it unparsed: over MAX_DESCRIPTION_CHARS; parsing it took the executor ~2 minutes).

Run:  source scripts/env.sh && python -m pytest test/ros/test_soak.py -q
"""

import json
import math
import os
import pathlib
import subprocess
import sys
import time

from ros_helpers import use_loopback_domain

from kin_dyn_ros.process_time import cpu_seconds

REPO = pathlib.Path(__file__).resolve().parents[2]
DURATION_S, RATE_HZ = 30, 200
TIMEOUT_S = 150        # the run is ~45 s; a stuck node must not hang the suite
QUIET_CORES, QUIET_WAIT_S = 0.3, 60.0   # the machine before the run (see quiet_machine)
MAX_SET_ASIDE = 0.3     # of the JointStates outside fault windows, in the machine's spells


def processes():
    """{pid: (command, CPU seconds so far)} of the machine's processes (/proc)."""
    out = {}
    for entry in pathlib.Path('/proc').glob('[0-9]*'):
        try:
            cmd = (entry / 'cmdline').read_bytes().replace(b'\0', b' ').decode()[:100]
        except OSError:
            continue
        seconds = cpu_seconds(int(entry.name))
        if not math.isnan(seconds):                # (NaN: it ended meanwhile)
            out[int(entry.name)] = (cmd, seconds)
    return out


def quiet_machine():
    """Wait (at most QUIET_WAIT_S) until the other processes use less than QUIET_CORES of
    the machine over half a second: what earlier tests started and left running (a worker
    finishing, a compiling process) takes the CPU the run's 200 Hz needs, and its delivery
    criterion would count that (this test process's own threads included). Returns
    [(cores, command)] of the busy ones last seen (in the report when the run fails)."""
    deadline = time.monotonic() + QUIET_WAIT_S
    while True:
        before = processes()
        time.sleep(0.5)
        after = processes()
        busy = sorted(((after[p][1] - before[p][1]) / 0.5, after[p][0]) for p in after
                      if p in before)[::-1]
        if sum(c for c, _ in busy) < QUIET_CORES or time.monotonic() > deadline:
            return [(round(c, 2), cmd) for c, cmd in busy[:3] if c > 0.05]


def test_soak_quick_schedule(tmp_path):
    waited_for = quiet_machine()
    domain = use_loopback_domain(226, 232)
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    env.pop('KIN_DYN_DOMAIN_AUTO', None)        # the runner keeps this domain
    out = tmp_path / 'soak.json'
    proc = subprocess.run(
        [sys.executable, str(REPO / 'bench' / 'soak.py'), '--duration', str(DURATION_S),
         '--rate', str(RATE_HZ), '--quick-schedule', '--no-memory-criterion',
         '--big-description', 'links', '--json', str(out), '--keep-log', str(tmp_path)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    report = proc.stdout + proc.stderr[-3000:] + f'\nbusy before the run: {waited_for}'
    assert out.exists(), report
    figures = json.loads(out.read_text())
    failed = {name: detail for name, (ok, detail) in figures['criteria'].items()
              if ok is False}
    assert not failed, f'criteria failed: {failed}\n{report}'
    assert proc.returncode == 0, report
    machine = figures['machine']
    assert machine['joint_states_set_aside'] <= \
        MAX_SET_ASIDE * figures['joint_states_outside_windows'], f'{machine}\n{report}'
    names = {w['name'] for w in figures['windows']}
    assert names >= {'worker_kill', 'publisher_restart', 'reload_alt', 'reload_back',
                     'broken_description', 'stamp_jump', 'bad_input', 'service_load',
                     'parameters_set', 'parameters_back', 'sigstop'}, names
    assert figures['correctness']['checked'] >= 100, figures['correctness']
    assert all(r['recovery_s'] is not None for r in figures['recovery']), figures['recovery']
