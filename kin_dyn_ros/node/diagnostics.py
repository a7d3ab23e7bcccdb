"""diagnostic_msgs/DiagnosticArray of the node (pure; no rclpy.init() needed).

Three statuses, named ``<node>: model``, ``<node>: inputs`` and ``<node>: tick``:

- model: OK with its name, root link, joint and frame counts and the dynamics path that
  runs (``dynamics.compiled.jit_status``: the compiled kernels and their cache, or the NumPy
  core and why); ERROR while none is loaded.
- inputs: ages [s] of the latest joint_states, odometry and each contact wrench (receive
  time on the node's clock), the model joints never received, and how old the odometry and
  each wrench were against the JointState the last tick combined them with (its stamp minus
  theirs [s], as ~/forward_dynamics carries them); WARN when joint_states are
  older than joint_state_timeout, a joint is missing, odometry is missing, or a wrench is
  stale (older than wrench_timeout at the last tick) or missing. Its "forward dynamics"
  says whether the last tick computed it, and names the joints whose accelerations are NaN
  (no inertia moves with them: a massless subtree, :mod:`.tick`).
- tick: ticks in the last second, their mean/max duration [ms] (compute + publish, wall
  clock) and the mean/max CPU time [ms] of the thread that ran them in that time: a tick
  much longer than its CPU time waited for the CPU (other processes, the machine). Its
  "equilibrium torques" counts the due equilibrium ticks since start, those published, and
  why the others were not.
"""

from collections import deque
from dataclasses import dataclass, field

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from ..dynamics.compiled import jit_status

__all__ = ["TickStats", "InputsReport", "build_diagnostics"]

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


class TickStats:
    """Durations and CPU times of the ticks of the last ``window`` seconds (times from
    ``time.perf_counter``), and how many JointStates were merged into a later tick
    meanwhile. At most the last ``kept`` of each are kept (the oldest dropped as new ones
    come: no trimming per tick); the default covers a 1 s window up to 4 kHz."""

    def __init__(self, window=1.0, kept=4096):
        self.window = window
        self._ticks = deque(maxlen=kept)
        self._merged = deque(maxlen=kept)
        # record((t, duration, cpu)): a tick that ended at t [s] and took duration [s] of
        # wall time and cpu [s] of its thread's CPU time (None: not read for this tick); the
        # deque's own append, without a Python call (the tick records one each tick)
        self.record = self._ticks.append

    def copy(self):
        """A copy (C copies of the records: ~0.1 ms for a full window, against ~1 ms for
        :meth:`summary`), so that the summary can be made outside the owner's lock."""
        out = TickStats(self.window, self._ticks.maxlen)
        out._ticks.extend(self._ticks)
        out._merged.extend(self._merged)
        return out

    def merged(self, t):
        """Record a JointState taken at ``t`` [s] that no tick of its own will follow: a
        newer one came before its tick, which takes both (merged by joint name)."""
        self._merged.append((t,))

    def summary(self, now):
        """(count, mean [s], max [s], CPU mean [s], CPU max [s], merged) of the ticks in
        (now - window, now] (the CPU figures of those whose CPU time was read; 0.0 for none),
        and the JointStates merged into a later tick in it."""
        merged = sum(1 for (t,) in self._merged if t > now - self.window)
        ticks = [(d, c) for t, d, c in self._ticks if t > now - self.window]
        if not ticks:
            return 0, 0.0, 0.0, 0.0, 0.0, merged
        durations = [d for d, _ in ticks]
        cpus = [c for _, c in ticks if c is not None] or [0.0]
        n = len(ticks)
        return n, sum(durations) / n, max(durations), sum(cpus) / len(cpus), max(cpus), merged


@dataclass
class InputsReport:
    """Freshness of the inputs; ages in s, None = never received."""

    joint_state_age: float = None
    joint_state_timeout: float = 0.5
    missing_joints: list = field(default_factory=list)
    use_odometry: bool = True
    odometry_age: float = None
    wrenches: list = field(default_factory=list)    # [(contact, age or None, stale)]
    forward_dynamics: str = ""                       # why it is skipped, if it is (or
                                                     # its massless joints, :mod:`.tick`)
    tick_odometry_age: float = None                  # at the last tick (None: no odometry)
    tick_wrench_ages: dict = field(default_factory=dict)    # {contact: s} at the last tick


def _status(name, level, message, values):
    return DiagnosticStatus(level=level, name=name, message=message, hardware_id="",
                            values=[KeyValue(key=k, value=str(v)) for k, v in values])


def _age(age):
    return "never" if age is None else f"{age:.3f}"


def _model_status(name, model):
    if model is None:
        return _status(f"{name}: model", ERROR, "no robot_description loaded", [])
    robot, root, joints, frames, *notes = model
    return _status(f"{name}: model", WARN if notes else OK,
                   "; ".join([f"{robot} loaded", *notes]),
                   [("robot", robot), ("root_link", root), ("joints", joints),
                    ("frames", frames), ("dynamics path", jit_status().describe())])


def _inputs_status(name, inputs):
    problems, values = [], [("joint_states age [s]", _age(inputs.joint_state_age))]
    if inputs.joint_state_age is None or inputs.joint_state_age > inputs.joint_state_timeout:
        problems.append("joint_states stale")
    if inputs.missing_joints:
        problems.append(f"{len(inputs.missing_joints)} joints never received")
    values.append(("missing joints", " ".join(inputs.missing_joints)))
    if inputs.use_odometry:
        values.append(("odometry age [s]", _age(inputs.odometry_age)))
        values.append(("odometry behind the last tick's joint_states [s]",
                       _age(inputs.tick_odometry_age)))
        if inputs.odometry_age is None:
            problems.append("no odometry")
    for contact, age, stale in inputs.wrenches:
        values.append((f"wrench {contact} age [s]", _age(age)))
        values.append((f"wrench {contact} behind the last tick's joint_states [s]",
                       _age(inputs.tick_wrench_ages.get(contact))))
        if age is None or stale:
            problems.append(f"wrench {contact} {'missing' if age is None else 'stale'}")
    values.append(("forward dynamics", inputs.forward_dynamics or "computed"))
    return _status(f"{name}: inputs", WARN if problems else OK,
                   "; ".join(problems) or "inputs fresh", values)


def _tick_status(name, summary, equilibrium=""):
    count, mean, worst, cpu_mean, cpu_worst, merged = summary
    message = f"{count} ticks in the last second" if count else "no tick in the last second"
    if merged:
        message += f"; {merged} JointStates merged into a later tick (the node is behind)"
    return _status(f"{name}: tick", OK if count else WARN, message,
                   [("ticks", count), ("mean [ms]", f"{1e3 * mean:.3f}"),
                    ("max [ms]", f"{1e3 * worst:.3f}"), ("CPU mean [ms]", f"{1e3 * cpu_mean:.3f}"),
                    ("CPU max [ms]", f"{1e3 * cpu_worst:.3f}"),
                    ("JointStates merged into a later tick", merged),
                    ("equilibrium torques", equilibrium or "off")])


def build_diagnostics(name, stamp, model, inputs, summary, equilibrium=""):
    """DiagnosticArray of the node.

    ``model``: None or (robot name, root link, joint count, frame count, *notes), notes
    making the status WARN (e.g. world_frame is a frame of the model); ``inputs``: an
    :class:`InputsReport`; ``summary``: :meth:`TickStats.summary`; ``equilibrium``: the
    contact mechanics' :meth:`~.contact_mechanics.ContactMechanics.equilibrium_report`.
    """
    msg = DiagnosticArray()
    msg.header.stamp = stamp
    msg.status = [_model_status(name, model), _inputs_status(name, inputs),
                  _tick_status(name, summary, equilibrium)]
    return msg
