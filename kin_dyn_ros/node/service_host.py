"""The planners' services in a process of their own, so that their traffic (taking requests,
building responses) never competes with the tick for the node's interpreter.

The node (:class:`ServiceHost`) starts ``python -m kin_dyn_ros.service_process``: a ROS
node of its own, ``<node name>_services`` in the node's namespace, that serves the node's
``~/get_jacobian``, ``~/get_mass_matrix``, ``~/get_dynamics``, ``~/get_dynamics_horizon``
and ``~/check_equilibrium`` under the node's full name, with the same types and answers as
the node's own would (:class:`.services.DynamicsServices`,
:class:`.horizon_service.HorizonService`, :class:`.services.EquilibriumService`). It reads the
last tick's measured state from memory the tick writes (:mod:`.state_share`), and the
model from the description the node loaded: on every model or settings change the node
sends one JSON line on the process's stdin with what the answers depend on (model
generation, base link, gravity, representation, frame prefix, contacts) and, when the
process does not hold that generation's model yet, the path of a temporary file with the
description (the process reads and removes it). The state of another model than
the one it holds is not used ("no measured state yet").

The process computes ~/get_* and ~/get_dynamics_horizon itself (it is not the tick's
process), and ~/check_equilibrium in a QueryWorker of its own (milliseconds to tens:
~/get_dynamics does not queue behind it), started at the first check (~1 s then; ~65-85 MB
resident that a robot whose planners never check does not hold). ~/get_* run on the NumPy core (as the workers:
numba and the kernels cost ~110 MB and ~1 s of CPU at every start); ~/get_dynamics_horizon
on the compiled kernels, which the process loads at its first horizon request (~1 s from
the cache the node's start-up filled; :meth:`_Host.horizon_source`): a 50-state horizon
costs ~2 ms there against ~40 ms on the NumPy core. It runs at SCHED_BATCH nice +10 once
it serves (its start-up under SCHED_IDLE where the process may leave it: never against the
node's first ticks), in a session of its own (a terminal's
Ctrl-C does not reach it). It ends when its stdin closes: when the node closes it, or dies. The node
restarts it if it crashed (checked with each /diagnostics, at most once per ``RESTART_S``).
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from ..dynamics.compiled import compiled_kernels

__all__ = ["ServiceHost", "planner_services", "main"]

# glibc's malloc, in the services' process: buffers up to 32 MB from the heap and freed
# memory kept up to 128 MB, where by default each large one (a 50-state horizon's answer:
# ~1 MB in several buffers) is fresh mmap'd pages whose faults cost ~0.7 ms per MB here.
# Variables the user set win; other C libraries ignore them.
MALLOC_ENVIRONMENT = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20),
                      "MALLOC_TRIM_THRESHOLD_": str(128 << 20)}
RESTART_S = 1.0
LOAD_WAIT_S = 30.0     # longest a request waits for the services' process to load a model
JOIN_S = 2.0
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def planner_services(node, own_process):
    """The node's services: in a process of their own (:class:`ServiceHost`) or, with
    ``own_process`` false, in the node's (:class:`.services.InProcessServices`). Both have
    ``configure(kd, urdf, settings, contacts)``, ``write(measured)`` (each tick, before its
    outputs), ``shared(n, representation)`` (the memory a compiled tick writes the state
    into instead, or None), ``check()`` and ``close()``, and answer the same."""
    if own_process:
        return ServiceHost(node)
    from .services import InProcessServices
    return InProcessServices(node)


class ServiceHost:
    """The node's side: :meth:`configure` (a model or settings change), :meth:`write` (each
    tick), :meth:`check` (restart a dead process), :meth:`close`. ``node`` is the tick's
    node (its full name, namespace and logger)."""

    def __init__(self, node):
        from .state_share import StateWriter
        self._fqn, self._namespace = node.get_fully_qualified_name(), node.get_namespace()
        self._name, self._logger = f"{node.get_name()}_services", node.get_logger()
        self._writer = StateWriter()
        self._process, self._config, self._died = None, {"generation": 0, "urdf": None}, None
        self._sent = None           # the generation whose description the process has
        self._model_key, self.generation = None, 0
        self._configurations = 0    # every configure (StateWriter.configured)
        self._files = []            # descriptions sent that the process may not have read
        self._start()

    @property
    def pid(self):
        return None if self._process is None else self._process.pid

    def _start(self):
        self._process = subprocess.Popen(
            [sys.executable, "-m", "kin_dyn_ros.service_process", str(self._writer.fd),
             self._fqn, self._name, self._namespace], stdin=subprocess.PIPE, text=True,
            pass_fds=(self._writer.fd,), env={**MALLOC_ENVIRONMENT, **os.environ},
            cwd=_PACKAGE_PARENT, start_new_session=True)
        self._sent = None
        self._send(self._config)

    def configure(self, kd, urdf, settings, contacts):
        """The model (``kd`` built from ``urdf`` with ``settings``' base frame and gravity;
        None: no model), representation, frame prefix and ``contacts`` ({name: Contact})
        the services answer with. A new model is a new :attr:`generation`."""
        self._writer.use(compiled_kernels() if kd is not None and kd.compiled else None)
        key = None if kd is None else (urdf, kd.model.root_link, tuple(kd.gravity))
        if key != self._model_key:
            self._model_key, self.generation = key, self.generation + 1
            self._writer.announce(self.generation)
        self._configurations += 1            # (a request after this waits for it)
        self._writer.configured(self._configurations)
        self._config = {
            "generation": self.generation, "configured": self._configurations,
            "urdf": urdf if kd is not None else None,
            "root_link": None if kd is None else kd.model.root_link,
            "gravity": None if kd is None else [float(g) for g in kd.gravity],
            "representation": settings.velocity_representation,
            "prefix": settings.frame_prefix,
            "horizon_max_states": settings.horizon_max_states,
            "contacts": [[name, c.link, c.points.ravel().tolist(), list(map(float, c.normal)),
                          float(c.friction)] for name, c in contacts.items()]}
        self._send(self._config)

    def write(self, measured):
        """The tick's :class:`.tick.MeasuredState`, of the current model."""
        self._writer.write(self.generation, measured)

    def shared(self, n, representation):
        """(words, header, generation, representation code) that a compiled tick of ``n``
        joints with base velocities in ``representation`` writes its state into instead of
        :meth:`write` (:meth:`.state_share.StateWriter.shared_words`), or None."""
        words = self._writer.shared_words(n, representation)
        return None if words is None else (words[0], words[1], self.generation, words[2])

    def _send(self, config):
        """One JSON line; the description, unless the process has it already, through a
        temporary file (a pipe holds ~64 KB: a larger one would block the node until the
        process read it)."""
        if self._process is None or self._process.poll() is not None:
            return
        line = dict(config, model=config["urdf"] is not None)
        if line["urdf"] is not None and self._sent == line["generation"]:
            line["urdf"] = None                     # same model: settings only
        elif line["urdf"] is not None:
            self._sent = line["generation"]
            fd, path = tempfile.mkstemp(prefix="kin_dyn_services_", suffix=".urdf")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(line["urdf"])
            line["urdf"] = path
            self._files = [p for p in self._files if os.path.exists(p)] + [path]
        try:
            self._process.stdin.write(json.dumps(line) + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            if line.get("urdf"):
                _remove(line["urdf"])

    def check(self):
        """Restart the process if it died (at most once per RESTART_S); a warning each time."""
        if self._process is None or self._process.poll() is None:
            return
        now = time.monotonic()
        if self._died is None:
            self._died = now
            self._logger.warning(f"the services' process ended (exit "
                                 f"{self._process.returncode}): restarting it",
                                 throttle_duration_sec=30.0)
        if now - self._died >= RESTART_S:
            self._died = None
            self._start()

    def close(self):
        """End the process (its stdin closed; killed after JOIN_S) and free the memory."""
        process, self._process = self._process, None
        if process is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
            try:
                process.wait(JOIN_S)
            except (subprocess.TimeoutExpired, KeyboardInterrupt):
                process.kill()
                try:
                    process.wait(JOIN_S)
                except (subprocess.TimeoutExpired, KeyboardInterrupt):
                    pass
        for path in self._files:        # descriptions no process read
            _remove(path)
        self._writer.close()


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


# -- the services' process ----------------------------------------------------------------------
class _InProcess:
    """Queries computed in this process (it is not the tick's): the QueryWorker interface."""

    @staticmethod
    def call(kd, name, representation, w_H_b, s, *args):
        from ..dynamics.queries import run
        return run(kd, name, representation, w_H_b, s, *args)


class _Host:
    """The process's state: the model of the last configuration and the shared state."""

    def __init__(self, node, reader, fqn):
        from ..equilibrium_worker import QueryWorker
        from .horizon_service import HorizonService
        from .services import DynamicsServices, EquilibriumService, Snapshot
        self._reader, self._snapshot = reader, Snapshot(None, None, "MIXED", "")
        self._generation = self._configured = 0
        self._loaded = threading.Condition()   # notified when a configuration is applied
        self._checks = QueryWorker()
        self._logger = node.get_logger()
        self._compiled = None      # (the model's KinDynComputations, its compiled twin)
        self._description = (None, None)    # (the model's KinDynComputations, its URDF)
        self.services = (DynamicsServices(node, self.source, _InProcess(), base=fqn),
                         HorizonService(node, self.horizon_source, _InProcess(), base=fqn),
                         EquilibriumService(node, self.source, self._checks, base=fqn))

    def source(self):
        """The :class:`.services.Snapshot` of a request: the held model and the last tick's
        state of that model; while the node has a newer model or configuration than the
        one applied, once it is applied (at most LOAD_WAIT_S)."""
        reader = self._reader
        with self._loaded:
            self._loaded.wait_for(lambda: self._generation >= reader.announced()
                                  and self._configured >= reader.configured(), LOAD_WAIT_S)
        snapshot = self._snapshot
        if snapshot.kd is None:
            return snapshot
        return snapshot._replace(measured=self._reader.read(self._generation))

    def horizon_source(self):
        """:meth:`source` with the model on the compiled kernels, built at the first
        ~/get_dynamics_horizon request of each model (numba and the kernels load then: ~1 s
        from the cache the node's start-up filled; a process whose planners never ask for a
        horizon never loads them); the NumPy core where they cannot run."""
        snapshot = self.source()
        kd = snapshot.kd
        if kd is None:
            return snapshot
        held = self._compiled
        if held is None or held[0] is not kd:
            from ..dynamics import KinDynComputations
            owner, urdf = self._description
            if owner is not kd:                 # a new model came meanwhile
                raise ValueError("the robot model changed while the request was taken: "
                                 "ask again")
            twin = KinDynComputations(urdf, root_link=kd.model.root_link, gravity=kd.gravity,
                                      compiled=None)
            held = self._compiled = (kd, twin)
        return snapshot._replace(kd=held[1])

    def configure(self, config):
        """A configuration line of the node (see the module)."""
        from ..dynamics import KinDynComputations
        from .settings import make_contact
        import numpy as np
        path, kd = config.get("urdf"), None
        if path is not None:                # a new model (for this process)
            try:
                with open(path, encoding="utf-8") as f:
                    urdf = f.read()
            finally:
                _remove(path)
            kd = KinDynComputations(urdf, root_link=config["root_link"],
                                    gravity=np.array(config["gravity"]), compiled=False)
            self._description = (kd, urdf)
            self._checks.set_model(urdf, config["root_link"], kd.gravity, model=kd.model)
        elif config.get("model"):           # the model held, other settings
            kd = self._snapshot.kd
        contacts = {name: make_contact((name, np.array(points), normal, friction), link)
                    for name, link, points, normal, friction in config.get("contacts", [])}
        self._generation = config["generation"]
        self._configured = config.get("configured", self._configured)
        self._snapshot = self._snapshot._replace(
            kd=kd, representation=config.get("representation", "MIXED"),
            prefix=config.get("prefix", ""), contacts=contacts,
            horizon_max_states=config.get("horizon_max_states", 200))

    def read_configurations(self, stream, context):
        """Apply each line of ``stream``; at its end (the node closed it, or died) shut
        ``context`` down."""
        import rclpy
        for line in stream:
            config = {}
            try:
                config = json.loads(line)
                self.configure(config)
            except Exception as exc:  # reported; no model rather than the wrong one
                self._logger.error(f"services: configuration not applied: {exc!r}")
                self._snapshot = self._snapshot._replace(kd=None)
                self._generation = config.get("generation", self._generation)
                self._configured = config.get("configured", self._configured)
            with self._loaded:
                self._loaded.notify_all()
        rclpy.try_shutdown(context=context)

    def close(self):
        self._checks.close()


def main(argv=None):
    """``python -m kin_dyn_ros.service_process FD NODE_FQN NAME NAMESPACE``."""
    argv = sys.argv[1:] if argv is None else argv
    fd, fqn, name, namespace = int(argv[0]), argv[1], argv[2], argv[3]
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    from ..equilibrium_worker import _start_priority
    from .spinning import spin_until_shutdown
    from .state_share import StateReader
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    started = _start_priority("batch")    # the start-up: never against the node's first ticks
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(name, namespace=namespace, context=context)
    host = _Host(node, StateReader(fd), fqn)
    from rclpy.executors import SingleThreadedExecutor
    # made before the reading thread, which shuts the context down when the node has
    # already closed stdin: the spin then ends at once, with no error
    executor = SingleThreadedExecutor(context=context)
    threading.Thread(target=host.read_configurations, args=(sys.stdin, context),
                     daemon=True).start()
    started()                     # the working priority, model or not: it answers from now
    try:
        spin_until_shutdown(node, executor)
    finally:
        host.close()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    return 0


