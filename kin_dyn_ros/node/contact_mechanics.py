"""Contact mechanics in the node: support polygon, stability margin and equilibrium torques,
over :mod:`.dynamics.contacts` and :mod:`.dynamics.equilibrium` (the ``~/check_equilibrium``
service: :class:`.services.EquilibriumService`).

Each contact of the ``contacts`` parameter is a :class:`~.dynamics.contacts.Contact` on its
link: ``contact.<name>.points`` (3k numbers, k points in the link frame), ``.normal`` (link
frame) and ``.friction``. A contact is *active* at a tick when the force of its wrench (the
one the tick used, within ``wrench_timeout``) along the contact normal exceeds
``contact_force_threshold`` [N] (the tick's ``TickResult.balance`` tells which); the wrench is
the force the environment applies to the link.

At ``equilibrium_rate`` [Hz, counted in JointState stamps; 0 = off], on the ticks that are
due, when the node has contacts and something reads one of these outputs (a subscriber to
one of the three topics; each topic is published only while subscribed; their subscribers
are counted at most every 20 ms, as the per-tick outputs', :class:`.outputs.ReadCounts`)
(:meth:`ContactMechanics.steps`, after all the tick's
outputs; on the node's sensor thread, one step in each moment with no input waiting, so that
they never delay a queued JointState by more than a step: a tick that a newer one overtakes
before its first step leaves its turn to that one, and the newest tick that came during a
tick's steps has its turn after them):

- ``~/support_polygon`` (geometry_msgs/PolygonStamped, world_frame): the convex hull of the
  active contact points projected along gravity, counter-clockwise seen from above, on the
  plane through their mean height (:func:`~.dynamics.contacts.ground_support`). For flat
  contacts (every point on one plane normal to gravity) this is exactly
  :func:`~.dynamics.contacts.support_polygon`; for others (a foot on a step, a tilted sole)
  it is the classic flat-ground polygon, not the friction-limited equilibrium region, which
  costs milliseconds (``~/check_equilibrium`` computes it). No active
  contact: a polygon without points.
- ``~/stability_margin`` (kin_dyn_ros_interfaces/StabilityMargin): the signed distance [m]
  from the CoM's ground projection to that polygon (> 0 inside; -inf without an active
  contact), ``inside``, the projection, the active contacts; and the tick's ZMP and capture
  point (:mod:`..dynamics.balance`) with their signed distances to the same polygon.
- ``~/equilibrium_torques`` (sensor_msgs/JointState, effort only), when a contact is active:
  :func:`~.dynamics.equilibrium.equilibrium_torques` at the tick's posture with zero
  velocities (the torques that hold the robot still on the active contacts, within the URDF
  effort limits). Nothing is published when no contact forces can hold the robot; torques
  beyond the limits are published, with a throttled warning. They are computed off the tick
  by :class:`~.equilibrium_worker.EquilibriumWorker` (a process of its own) and published,
  stamped with the tick they were computed for, on the first tick (or diagnostics period)
  after they arrive. A due tick that finds the worker busy waits its turn; a newer due tick
  replaces a waiting one (no torques for that one).
- markers, in each ~/markers array (:class:`.marker_array.MarkerArrays`, with the
  support of that array's own tick, :meth:`ContactMechanics.ground_support`, whatever is
  read): ns ``support_polygon`` id 0, the polygon (LINE_STRIP, closed; DELETE without an
  active contact), and id 1, a disc at the CoM's projection, green inside the polygon and
  red outside.

The support and the margins come from the tick's ``TickResult.contact_points`` (the
compiled kernel's one vector: :class:`DueSupport`); on the NumPy core, or where an active
contact is not a flat sole, they are made the plain way (``TickResult.balance``,
:meth:`ContactMechanics.ground_support`, ``Balance.margins``); test_contact_mechanics.py
compares the two. The worker's answer is taken only once it is there
(``EquilibriumWorker.answered``, one ``poll(0)`` per tick while a request is in flight).

Why not every tick: in the running node at 1 kHz on iCub (a 2-core machine, see
docs/performance.md, "Session 38") a due tick costs ~0.1 ms of support and margins, ~0.09
ms of messages and ~0.07 ms of the worker's request (the torques themselves, ~0.4 ms, run
in the worker process). A rate at or above the tick rate gives every tick (the torques then
at the rate the worker sustains).

Errors never leave this module: a ValueError of the core is logged (throttled) and the tick's
contact outputs are skipped; the service answers ``success = false`` with the reason.
"""

import functools
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PolygonStamped
from sensor_msgs.msg import JointState

from kin_dyn_ros_interfaces.msg import StabilityMargin

from .conversions import stamp_to_ns
from ..dynamics.contacts import ground_axes, hull_support
from ..equilibrium_worker import EquilibriumWorker
from .outputs import EffortMessage, ReadCounts
from .rates import OnPhase
from .settings import make_contact
from .support_outputs import SupportMessages, margin_values
from .throttle import ThrottledLogger

try:
    from rclpy.event_handler import PublisherEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import PublisherEventCallbacks

__all__ = ["ContactMechanics", "DueSupport"]

THROTTLE_S = 5.0


class DueSupport(NamedTuple):
    """What the contact mechanics publish of a due tick: the active contacts' ``names``
    and Contact objects (``contacts``), the support polygon's vertices ``points`` (m, 3)
    [m, world frame] and the StabilityMargin's numbers ``values`` (12,), as
    :func:`.support_outputs.margin_values` lays them out."""

    names: tuple
    contacts: tuple
    points: np.ndarray
    values: np.ndarray


# ContactMechanics.quiet: the stamps [first, end) [ns] of ticks with no contact mechanics
_NOT_QUIET, _ALWAYS_QUIET = (0, 0), (-2**63, 2**63 - 1)


# -- the node's part -------------------------------------------------------------------------
class ContactMechanics:
    """Publishers and per-tick support of one node."""

    def __init__(self, node):
        self._node, self._logger = node, node.get_logger()
        self._log = ThrottledLogger(self._logger, THROTTLE_S)
        events = PublisherEventCallbacks(use_default_callbacks=False)

        def pub(msg_type, topic):
            return node.create_publisher(msg_type, topic, 10, event_callbacks=events)
        self._polygon_pub = pub(PolygonStamped, "~/support_polygon")
        self._margin_pub = pub(StabilityMargin, "~/stability_margin")
        self._torques_pub = pub(JointState, "~/equilibrium_torques")
        self._read = ReadCounts((self._polygon_pub, self._margin_pub, self._torques_pub))
        self._contacts, self._settings, self._kd = {}, None, None
        self._names = self._objects = ()   # the contacts' names and Contact objects
        self._period_ns = 0           # of equilibrium_rate [ns] (0: off)
        self._clear()
        self._worker, self._worker_model = EquilibriumWorker(), None
        # due equilibrium ticks (support computed, ~/equilibrium_torques read) and what came
        # of them since start: published, or why not (equilibrium_report)
        self._equilibrium = dict.fromkeys(("due", "published", "no active contact",
                                           "infeasible", "failed"), 0)

    def configure(self, kd, names, settings, urdf=None):
        """Contacts ``names`` (links of ``kd``'s model, built from ``urdf``) with ``settings``'
        geometry; ``kd`` None: no model."""
        if kd is not None and urdf is not None:
            model = (urdf, kd.model.root_link, tuple(kd.gravity))
            if model != self._worker_model:
                self._worker.set_model(urdf, model[1], kd.gravity)
                self._worker_model = model
            if names and settings.equilibrium_rate > 0:
                self._worker.start()    # its start-up now, not during the first ticks
        geometry = {g[0]: g for g in settings.contact_geometry}
        self._kd, self._settings = kd, settings
        rate = settings.equilibrium_rate          # its period [ns] (0: off), by stamps
        self._period_ns = int(1e9 / rate) if rate > 0.0 else 0
        self._contacts = {} if kd is None else {c: make_contact(geometry[c]) for c in names}
        self._names, self._objects = tuple(self._contacts), tuple(self._contacts.values())
        self._clear()             # (and quiet: the worker's state may have changed too)
        self._messages = SupportMessages(settings.world_frame)
        self._torques = EffortMessage([] if kd is None else kd.joints_name_list)
        if kd is not None:
            self._axes = ground_axes(kd.gravity)
            self._up = -kd.gravity / np.linalg.norm(kd.gravity)
            self._index = kd.model.frame_index

    def _clear(self):
        """No support yet (a new model or settings)."""
        self._support = self._state = self._stamp = None
        self._phase = OnPhase()      # equilibrium_rate, by stamps
        self._fresh = False
        self.quiet = _NOT_QUIET

    @property
    def contacts(self):
        """{name: Contact} of the configured contacts that are links of the model."""
        return dict(self._contacts)

    # -- per tick ------------------------------------------------------------------------
    def update(self, kd, result, s, stamp):
        """The support of a tick, when due (equilibrium_rate) and read: ``result``
        (TickResult of the node's contacts: its ``balance`` tells the active ones), joint
        positions ``s`` (n,) and its stamp. Computes nothing on the other ticks."""
        self._fresh = False
        t = stamp_to_ns(stamp)
        if not self._contacts or not (self._turn(t) and self._due(t)):
            return          # (the phase first: a due tick takes its turn)
        try:
            self._support = self._from_points(result) or self._plain_support(result)
        except ValueError as exc:
            self._log.warning("support", f"support polygon skipped: {exc}")
            return
        self._state, self._stamp, self._fresh = (kd, result.base_pose, s), stamp, True

    def _from_points(self, result):
        """The DueSupport of a tick from its ``contact_points`` (the compiled kernel's one
        vector: the hull, the margins), or None where the kernel does not give it."""
        got = result.contact_points()
        names = self._names
        if got is None or got[1][1] != 6 * len(names):
            return None
        out, lay = got
        values = out[_margin_gather(lay)]
        values[np.isnan(values)] = -np.inf     # (the kernel's undefined margins)
        closed = int(out[lay[5]])             # (the outline closed: its first point again)
        m = closed - 1 if closed > 2 else closed // 2
        points = out[lay[5] + 5:lay[5] + 5 + 3 * m].reshape(m, 3)
        active = [i for i, d in enumerate(out[lay[3]:lay[3] + len(names)].tolist()) if d]
        return DueSupport(tuple(names[i] for i in active),
                          tuple(self._objects[i] for i in active), points, values)

    def _plain_support(self, result):
        """The DueSupport of a tick the plain way: its Balance, :meth:`ground_support` and
        the balance points' margins to it."""
        balance = result.balance
        support = self.ground_support(result)
        margins = (-np.inf, -np.inf) if not balance or not balance.active \
            else balance.margins(support.polygon)
        return DueSupport(support.names, support.contacts, support.points,
                          margin_values(support, balance, margins))

    def ground_support(self, result):
        """The GroundSupport of a tick's active contacts (those of ``result.balance``);
        ValueError from the core."""
        balance = result.balance
        active = () if balance is None else balance.active
        names = tuple(balance.names[i] for i in active)
        contacts = tuple(self._contacts[n] for n in names)
        links = [result.world_H_frame(self._index[c.link]) for c in contacts]
        return hull_support(contacts, links, result.com, self._axes, self._up, names)

    def steps(self, kd, result, s, stamp):
        """The contact mechanics of a tick (arguments as :meth:`update`) as a generator of
        steps, each at most ~0.3 ms on iCub, so that the caller can take its inputs between
        them: publish the equilibrium torques the worker has answered; :meth:`update`; when
        due, publish the support (:meth:`publish_support`); ask the worker for its
        equilibrium torques. Most ticks are one step: no answer came and the support is not
        due (each step costs the sensor thread a round of empty takes)."""
        if self.collect():
            yield
        self.update(kd, result, s, stamp)
        if not self._fresh:
            return
        yield
        self.publish_support()
        if self._read(self._torques_pub):
            self._equilibrium["due"] += 1
            if not self._support.contacts:
                self._equilibrium["no active contact"] += 1
                return
            yield
            self._request_torques(self._stamp, self._support)

    def publish_support(self):
        """~/support_polygon and ~/stability_margin of the tick given to :meth:`update`, if it
        was due, each while subscribed."""
        if not self._fresh:
            return
        support = self._support
        if self._read(self._polygon_pub):
            self._polygon_pub.publish(self._messages.polygon(support.points, self._stamp))
        if self._read(self._margin_pub):
            self._margin_pub.publish(self._messages.margin(support.names, support.values,
                                                           self._stamp))

    def has_work(self, stamp_ns):
        """Whether the tick of stamp ``stamp_ns`` [ns] has contact mechanics to do
        (:meth:`steps`): the support due and read, or an answer of the worker to take. Most
        ticks have none: the node then schedules no steps for them.

        When it has none and no request is in flight, :attr:`quiet` becomes (first, end)
        [ns]: no tick of a stamp in [first, end) has any either, until the phase or the
        worker's state changes (every method that changes them makes it empty again), so
        that the caller need not ask for those (most ticks: no call)."""
        if not self._contacts:
            self.quiet = _ALWAYS_QUIET
            return False
        worker = self._worker
        if worker.answered:
            return True
        period = self._period_ns
        if period > 0 and self._phase.is_due(stamp_ns, period) and self._turn(stamp_ns):
            return True
        if not worker.busy:
            self.quiet = self._phase.not_due(period) if period > 0 else _ALWAYS_QUIET
        return False

    def _turn(self, t):
        """Whether a tick of stamp ``t`` [ns] computes the support: due (:meth:`_is_due`) and
        read (a topic subscribed). The turn of a due tick that nobody reads passes (the phase
        is kept) without work: work nobody reads is not done."""
        if not self._is_due(t):
            return False
        if self._read.any():
            return True           # (:meth:`update` takes the turn)
        self._due(t)
        return False

    def _is_due(self, t):
        """Whether a tick of stamp ``t`` [ns] is due (:meth:`_due`), without taking its turn."""
        return self._period_ns > 0 and self._phase.is_due(t, self._period_ns)

    def _due(self, t):
        """At most equilibrium_rate ticks per second of stamps ``t`` [ns] (the phase is kept;
        a stamp going back restarts: :class:`.rates.OnPhase`)."""
        self.quiet = _NOT_QUIET
        return self._period_ns > 0 and self._phase.take(t, self._period_ns)

    def _request_torques(self, stamp, support):
        self.quiet = _NOT_QUIET
        kd, w_H_b, s = self._state    # the key: plain numbers pickle faster than a Time
        self._worker.submit(((stamp.sec, stamp.nanosec), support.names), w_H_b, s,
                            support.contacts)

    def collect(self):
        """Publish the equilibrium torques the worker has answered since the last call (never
        blocks). False when nothing came (a cheap check), True when an answer or an error
        was handled."""
        try:
            answer = self._worker.poll()
        except RuntimeError as exc:
            self._log.warning("equilibrium worker", str(exc))
            return True
        if answer is None:
            return False
        self._publish_answer(answer)
        return True

    def _publish_answer(self, answer):
        """~/equilibrium_torques of a worker's ``(key, answer)`` (logged when infeasible or
        failed)."""
        ((sec, nanosec), names), res = answer
        if isinstance(res, ValueError):
            self._equilibrium["failed"] += 1
            self._log.warning("equilibrium", f"equilibrium torques skipped: {res}")
            return
        if not res.feasible:
            self._log.warning("equilibrium", f"equilibrium torques on {list(names)}: "
                                             f"{res.message}")
        if res.tau is None:
            self._equilibrium["infeasible"] += 1
            return
        self._equilibrium["published"] += 1
        self._torques_pub.publish(self._torques.render(res.tau, Time(sec=sec, nanosec=nanosec)))

    def equilibrium_report(self):
        """What came of the due equilibrium ticks since start, for /diagnostics: how many
        were due and published, and why the others were not."""
        s, counts = self._settings, self._equilibrium
        if s is None or not self._contacts:
            return "off: no contact of the model configured"
        if s.equilibrium_rate <= 0.0:
            return "off: equilibrium_rate 0"
        if not counts["due"]:
            return "not computed: nothing subscribes to ~/equilibrium_torques"
        skipped = [(counts["no active contact"], "no active contact (no force along the "
                    "normal above contact_force_threshold)"),
                   (self._worker.replaced, "replaced by a newer tick while the worker was "
                    "busy (a saturated machine: it runs at a lower priority than the node)"),
                   (self._worker.refused, "the worker was restarting"),
                   (counts["infeasible"], "no contact forces can hold the robot"),
                   (counts["failed"], "failed (logged)")]
        return f"{counts['due']} due, {counts['published']} published" + "".join(
            f"; {n} {why}" for n, why in skipped if n)

    def close(self):
        """Stop the equilibrium worker's process."""
        self._worker.close()


@functools.lru_cache(maxsize=16)
def _margin_gather(lay):
    """Where a StabilityMargin's numbers (:func:`.support_outputs.margin_values`) are in
    ``TickResult.contact_points``' vector laid out as ``lay``: the CoM's margin and
    projection, the ZMP and its margin, the capture point and its margin."""
    k = lay[1] // 6
    support, points, margins = lay[5], lay[2] + 3 * k, lay[4] + k
    return np.array([support + 1, support + 2, support + 3, support + 4,
                     points, points + 1, points + 2, margins,
                     points + 3, points + 4, points + 5, margins + 1], np.intp)
