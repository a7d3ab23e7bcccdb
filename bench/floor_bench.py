"""bench_node.py --floor: the floor node processes, the in-process timing of the core's tick,
and the report (helpers of bench/bench_node.py, not a test).

The figures and the target (issue 22): the node's CPU time per JointState against the
floor's (bench/floor_node.py: the same inputs taken the same way, the same per-tick
messages published as prepared bytes, no dynamics) and against ``compute_tick``'s own CPU
time in this process on the same model and state, ``(ours - floor) / compute_tick <=
GLUE_TARGET``: all the node's work beyond the floor and the math is at most 20 % of the
math; and (issue 33) ``ours <= RATIO_TARGET x floor``.
"""

import os
import pathlib
import subprocess
import sys
import time

import numpy as np

FLOOR_SCRIPT = pathlib.Path(__file__).resolve().with_name('floor_node.py')
GLUE_TARGET = 1.2              # ours <= floor + GLUE_TARGET x compute_tick
RATIO_TARGET = 1.4             # ours <= RATIO_TARGET x floor (issue 33)
SLOW_CPU_MS, SLOW_PIN_MM_US = 0.5, 7.0    # <= 0.5 ms per JointState when Pinocchio's M ~7 us
TICK_PACED_S = 1.0             # compute_tick timed one call per ms for this long, per group


def floor_topic(namespace, topic):
    """``topic`` of the node (/tf, /kin_dyn_node/...) as a --floor node in ``namespace``
    publishes it ('' : the node's own)."""
    ns = namespace.strip('/')
    return f'/{ns}{topic}' if ns else topic


def floor_namespace(mode):
    return f'kin_dyn_floor_{mode}'


class FloorProcess:
    """A floor node (bench/floor_node.py) in a process of its own, in
    :func:`floor_namespace` (``balance``: also publishing the balance outputs; ``priority``:
    its threads' SCHED_FIFO priority); ``pid``; :meth:`wait_ready` once the receiver exists."""

    def __init__(self, mode, model=None, balance=False, priority=0):
        self.mode, self.namespace = mode, floor_namespace(mode)
        self.proc = subprocess.Popen(
            [sys.executable, str(FLOOR_SCRIPT), '--namespace', self.namespace, '--mode', mode,
             *(['--model', model] if model else []), *(['--balance'] if balance else []),
             *(['--thread-priority', str(priority)] if priority else [])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
        self.pid = self.proc.pid

    @property
    def label(self):
        return f'floor ({self.mode})'

    def wait_ready(self):
        """Until every output of the floor has a subscriber (the receiver's)."""
        if self.proc.stdout.readline().strip() != 'ready':
            raise RuntimeError(f'the floor process ({self.mode}) ended (exit '
                               f'{self.proc.wait()})')

    def close(self):
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class TickTimer:
    """compute_tick of the node's model and the bench publisher's state, timed in this
    process (thread CPU time), and Pinocchio's mass matrix (crba) of iCub as the machine's
    speed gauge. :meth:`sample` once per group of runs; :meth:`summary`."""

    def __init__(self, urdf):
        sys.path.insert(0, str(FLOOR_SCRIPT.parent))
        from floor_node import model_urdf, tick_inputs
        from kin_dyn_ros.dynamics import KinDynComputations
        self.kd = KinDynComputations(urdf)
        self.args = tick_inputs(self.kd)          # MIXED, as the node by default
        self.paced, self.warm, self.pin_mm = [], [], []
        try:        # the gauge is iCub's, whatever the model (the figure is iCub's)
            import pinocchio as pin
            model = pin.buildModelFromXML(model_urdf(), pin.JointModelFreeFlyer())
            data = model.createData()
            q = pin.neutral(model)
            self._crba = lambda: pin.crba(model, data, q)
        except Exception:   # no Pinocchio in this environment: no gauge
            self._crba = None

    def sample(self, paced_s=TICK_PACED_S, period_s=1e-3):
        """Time compute_tick one call per ``period_s`` for ``paced_s`` (as the node ticks at
        1 kHz: each call after an idle ms), then 200 calls back to back; and crba."""
        tick, args = self.kd.compute_tick, self.args
        clock = time.thread_time
        tick(*args)
        end, paced = time.monotonic() + paced_s, []
        while time.monotonic() < end:
            t0 = clock()
            tick(*args)
            paced.append(clock() - t0)
            time.sleep(period_s)
        warm = []
        for _ in range(10):
            t0 = clock()
            for _ in range(20):
                tick(*args)
            warm.append((clock() - t0) / 20)
        self.paced.append(float(np.median(paced)))
        self.warm.append(min(warm))
        if self._crba is not None:
            crba, runs = self._crba, []
            for _ in range(20):
                t0 = time.perf_counter()
                for _ in range(50):
                    crba()
                runs.append((time.perf_counter() - t0) / 50)
            self.pin_mm.append(min(runs))

    def summary(self):
        """{"paced", "warm", "pin_mm"}: medians over the samples [ms] (pin_mm [us], None)."""
        med = (lambda v: float(np.median(v)) if v else None)
        return {'paced': 1e3 * med(self.paced), 'warm': 1e3 * med(self.warm),
                'pin_mm': None if not self.pin_mm else 1e6 * med(self.pin_mm),
                'paced_all': [1e3 * x for x in self.paced]}


def _worst(row, keys):
    key = max(keys, key=lambda k: row[k]['p99'])
    return key, min(row[k]['ratio'] for k in keys)


def print_floor(rows, timer, labels, keys, model_name):
    """The --floor report: every run (the node and each floor, alternating), then per rate
    the pooled CPU per JointState side by side with compute_tick's, the ratio and the
    targets. ``labels``: {namespace: label} ('' the node)."""
    tick = timer.summary()
    print()
    print(f'== floor: {model_name}; the node vs minimal rclpy nodes publishing the same '
          f'per-tick messages as prepared bytes (no dynamics) ==')
    print(f"{'rate':>5} {'run':>3}  {'process':<16} {'JS':>6} {'recv% min':>9} "
          f"{'worst output':>16} {'p50/p99 [ms]':>13} {'CPU [ms/JS]':>11} {'load 1m':>7}")
    counts = {}
    for row in rows:
        target = row['target']
        counts[(row['rate'], target)] = n = counts.get((row['rate'], target), 0) + 1
        key, recv = _worst(row, keys)
        cpu = 'n/a' if row['cpu_ms'] is None else f"{row['cpu_ms']:.3f}"
        print(f"{row['rate']:>5} {n:>3}  {labels[target]:<16} {row['sent']:>6} "
              f"{100 * recv:8.1f}% {key:>16} {row[key]['p50']:5.2f}/{row[key]['p99']:5.2f}  "
              f"{cpu:>11} {row['load']:7.2f}")
    paced = ', '.join(f'{x:.3f}' for x in tick['paced_all'])
    print(f"compute_tick in this process (thread CPU, MIXED, the node's state): median of "
          f"one call per ms {tick['paced']:.3f} ms (per group: {paced}); back to back "
          f"{tick['warm']:.3f} ms")
    if tick['pin_mm'] is not None:
        print(f"machine gauge: Pinocchio crba (mass matrix) of iCub {tick['pin_mm']:.1f} "
              f"us (the issue's slow spell: ~{SLOW_PIN_MM_US:g} us on iCub)")
    for rate in sorted({r['rate'] for r in rows}):
        runs = [r for r in rows if r['rate'] == rate]
        pooled = {}
        for target in labels:
            mine = [r for r in runs if r['target'] == target and r['cpu_ms'] is not None]
            if not mine:
                continue
            # mean of the runs' CPU per JointState (the runs send about the same count)
            pooled[target] = (float(np.mean([r['cpu_ms'] for r in mine])),
                              min(r['cpu_ms'] for r in mine), max(r['cpu_ms'] for r in mine),
                              len(mine))
        print()
        print(f'{rate} Hz, pooled over the alternating runs (mean, min-max, runs):')
        for target, (mean, lo, hi, n) in pooled.items():
            print(f'  {labels[target]:<16} CPU per JointState {mean:.3f} ms ({lo:.3f}-{hi:.3f}, '
                  f'{n} runs)')
        ours = pooled.get('')
        for label, ct in (('one call per ms', tick['paced']), ('back to back', tick['warm'])):
            print(f'  {"compute_tick":<16} {ct:.3f} ms ({label})')
        if ours is None:
            continue
        for target, (mean, *_rest) in pooled.items():
            if target != floor_namespace('thread'):     # the target's floor: the same path
                continue
            ratio = ours[0] / mean
            print(f'  ours / {labels[target]} = {ours[0]:.3f} / {mean:.3f} = {ratio:.2f} '
                  f'(target <= {RATIO_TARGET}: {"met" if ratio <= RATIO_TARGET else "NOT met"})')
            for label, ct in (('one call per ms', tick['paced']),
                              ('back to back', tick['warm'])):
                glue = (ours[0] - mean) / ct
                print(f'  (ours - {labels[target]}) / compute_tick ({label}) = '
                      f'({ours[0]:.3f} - {mean:.3f}) / {ct:.3f} = {glue:.2f} (target <= '
                      f'{GLUE_TARGET}: {"met" if glue <= GLUE_TARGET else "NOT met"}); glue '
                      f'beyond floor + compute_tick {ours[0] - mean - ct:.3f} ms')
        if tick['pin_mm'] is not None:
            scaled = SLOW_CPU_MS * tick['pin_mm'] / SLOW_PIN_MM_US
            print(f"  ours {ours[0]:.3f} ms per JointState against the 1 kHz budget "
                  f"{SLOW_CPU_MS} ms at crba ~{SLOW_PIN_MM_US:g} us, scaled to this run's "
                  f"crba {tick['pin_mm']:.1f} us: {scaled:.3f} ms "
                  f"({'met' if ours[0] <= scaled else 'NOT met'})")
