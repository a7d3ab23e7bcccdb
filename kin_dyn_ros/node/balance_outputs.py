"""The balance outputs of a tick, from its :class:`~..dynamics.balance.Balance`
(``TickResult.balance``), world frame, stamped with the JointState's stamp:

- ``~/zmp`` and ``~/capture_point`` (geometry_msgs/PointStamped): each tick while defined (a
  contact active; for the capture point also the CoM above the ground plane);
- ``~/cop`` (kin_dyn_ros_interfaces/CentresOfPressure): each tick while a contact is active,
  the CoP of every contact of the node (``defined`` false and (0, 0, 0) for the others);
- markers (a :class:`.markers.MarkerGroup` for ~/markers, :func:`balance_markers`): ns
  ``cop`` id k (contact k, in ``contacts`` order), ns ``zmp`` id 0 and ns ``capture_point``
  id 0, spheres coloured green inside the support polygon of their tick's active contacts,
  red outside (grey without a polygon); DELETE while undefined.

Messages come from serialised templates (:class:`.outputs.SerializedTemplate`; ~/cop one
per set of defined contacts), like the other per-tick outputs. Where the compiled kernel
computed the balance (``TickResult.balance_vector``), :meth:`BalanceMessages.render` writes
the three from its vector with one call (:class:`.template_pack.TemplatePack`), without
building the :class:`~..dynamics.balance.Balance` (~10 Python and NumPy calls less per
contact, and its objects); otherwise from the ``Balance``, one by one (the same bytes: a test
compares them).
"""

import functools

import numpy as np
from geometry_msgs.msg import Point, PointStamped
from visualization_msgs.msg import Marker

from kin_dyn_ros_interfaces.msg import CentresOfPressure

from .conversions import stamp_fields, stamp_words, xyz_fields
from .markers import MarkerGroup, make_marker
from .outputs import SerializedTemplate, TemplateCache
from .template_pack import TemplatePack

__all__ = ["BalanceMessages", "balance_markers", "defined_at", "defined_in", "MARKER_NAMESPACES"]

MARKER_NAMESPACES = ("cop", "zmp", "capture_point")
DIAMETERS = {"cop": 0.03, "zmp": 0.045, "capture_point": 0.045}     # [m]
INSIDE_RGBA = (0.1, 0.8, 0.1, 1.0)
OUTSIDE_RGBA = (0.9, 0.1, 0.1, 1.0)
UNKNOWN_RGBA = (0.6, 0.6, 0.6, 1.0)     # no support polygon
_ZERO = np.zeros(3)
_EYE4 = np.eye(4)
_NOUGHT = np.zeros(1)        # the packed sources' "extra": an undefined CoP's coordinates


def defined_at(name, lay):
    """The index of the defined flag of the balance output ``name`` ("zmp",
    "capture_point") in a balance vector laid out as ``lay``
    (:func:`..dynamics.kernels.balance_layout`); None for "cop" (defined whenever a contact
    is active)."""
    return None if name == "cop" else lay[5] if name == "zmp" else lay[10]


def defined_in(name, out, lay):
    """Whether the balance output ``name`` is defined in the balance vector ``out`` laid out
    as ``lay``, one contact active (:func:`defined_at`)."""
    at = defined_at(name, lay)
    return at is None or bool(out[at])


class PointMessage:
    """A geometry_msgs/PointStamped in ``frame``, serialised once."""

    def __init__(self, frame):
        self.msg = PointStamped()
        self.msg.header.frame_id = frame
        self.template = SerializedTemplate(self.msg, xyz_fields([self.msg.point]),
                                           stamp_fields(self.msg))

    def render(self, point, stamp):
        """The message of ``point`` (3,) [m] stamped ``stamp``: bytes, or the message."""
        return self.template.render(point, stamp_words(stamp))


class BalanceMessages:
    """~/zmp, ~/capture_point and ~/cop of one node's ``contacts`` (names) in world ``frame``."""

    def __init__(self, frame, contacts, scatter=None):
        self._frame, self._contacts = frame, tuple(contacts)
        self._zmp, self._capture_point = PointMessage(frame), PointMessage(frame)
        self._cops = TemplateCache()
        self._packs = TemplateCache()       # per set of defined CoPs
        self._scatter = scatter             # kernels.scatter_words (compiled), or None

    def render(self, result, stamp, names):
        """{name: message} of those of ``names`` ("zmp", "capture_point", "cop") that are
        defined in the tick ``result`` (a ``TickResult`` of this node's contacts), stamped
        ``stamp``: none while no contact is active."""
        out = self.render_vector(result.balance_vector, stamp_words(stamp), names)
        if out is not None:
            return out
        balance = result.balance
        if balance is None or not balance.active:
            return {}
        render = {"zmp": self.zmp, "capture_point": self.capture_point, "cop": self.cops}
        out = {name: render[name](balance, stamp) for name in names}
        return {name: msg for name, msg in out.items() if msg is not None}

    def render_vector(self, vector, words, names):
        """:meth:`render` from a ``TickResult.balance_vector`` (stamp ``words``:
        :func:`.conversions.stamp_words`), bytes only; None where it cannot (no vector, of
        other contacts, a template not usable): :meth:`render` then makes them from the
        Balance."""
        if vector is None or vector[0] != self._contacts:
            return None
        _, out, lay, _ = vector
        if not out[lay[0]]:                             # no active contact
            return {}
        pack = self.pack_for(vector)
        if not pack:
            return None
        wanted = []             # (a loop, not a comprehension: no frame of its own)
        for name in names:
            if defined_in(name, out, lay):
                wanted.append(name)
        return pack[0].render(out, _NOUGHT, _EYE4, False, words, wanted)

    def pack_for(self, vector):
        """(the :class:`.template_pack.TemplatePack`, the CoPs' defined flags (k,)) that
        :meth:`render_vector` renders the balance ``vector`` (of this node's contacts, one
        active) with, its sources indexing the vector, then a pose, then one 0.0; False
        where a template is not usable."""
        _, out, lay, _ = vector
        defined = []            # (loops, not comprehensions: no frame of their own)
        for i in range(len(self._contacts)):
            defined.append(bool(out[5 * i + 4] > 0.0))
        defined = tuple(defined)
        pack = self._packs.get(defined, lambda: self._pack(defined, lay, len(out)))
        return pack and (pack, defined)

    def _pack(self, defined, lay, m):
        """The :class:`.template_pack.TemplatePack` of ~/zmp, ~/capture_point and ~/cop with
        the CoPs ``defined``, from a balance vector of length ``m`` laid out as ``lay``
        (``kernels.balance_layout``), or False when a template is not usable."""
        templates = [self._zmp.template, self._capture_point.template,
                     self._cops.get(defined, lambda: self._cop_template(defined))]
        if not all(t.ok for t in templates):
            return False
        nought = m + 7                                  # the extra's 0.0
        points = [[5 * i, 5 * i + 1, 5 * i + 2] if d else [nought] * 3
                  for i, d in enumerate(defined)]
        sources = [np.arange(lay[3], lay[3] + 3), np.arange(lay[7], lay[7] + 3),
                   np.array([*np.ravel(points), *(5 * i + 3 for i in range(len(defined)))],
                            dtype=np.intp)]
        return TemplatePack(list(zip(("zmp", "capture_point", "cop"), templates, sources)),
                            self._scatter)

    def zmp(self, balance, stamp):
        """~/zmp, or None while undefined."""
        zmp = balance.zmp_point
        return None if zmp is None else self._zmp.render(zmp, stamp)

    def capture_point(self, balance, stamp):
        """~/capture_point, or None while undefined."""
        cp = balance.capture_point
        return None if cp is None else self._capture_point.render(cp, stamp)

    def cops(self, balance, stamp):
        """~/cop (all of the node's contacts), or None while no contact is active."""
        if not balance.active:
            return None
        defined = tuple(cop.point is not None for cop in balance.cops)
        template = self._cops.get(defined, lambda: self._cop_template(defined))
        values = [cop.point if cop.point is not None else _ZERO for cop in balance.cops]
        values.append([cop.normal_force for cop in balance.cops])
        return template.render(np.concatenate(values), stamp_words(stamp))

    def _cop_template(self, defined):
        msg = CentresOfPressure(contacts=list(self._contacts), defined=list(defined),
                                points=[Point() for _ in defined],
                                normal_forces=[0.0] * len(defined))
        msg.header.frame_id = self._frame
        doubles = xyz_fields(msg.points) + [(msg, "normal_forces", len(defined))]
        return SerializedTemplate(msg, doubles, stamp_fields(msg))


def _colour(margin):
    if margin is None:
        return UNKNOWN_RGBA
    return INSIDE_RGBA if margin >= 0.0 else OUTSIDE_RGBA


def balance_markers(frame, stamp, balance, polygon):
    """:class:`.markers.MarkerGroup` of the CoPs, the ZMP and the capture point of ``balance``
    (see the module docstring), coloured by their place in ``polygon`` (a
    :class:`~..dynamics.contacts.SupportPolygon`, or None: grey), world ``frame``."""
    points = [cop.point for cop in balance.cops] + [balance.zmp_point, balance.capture_point]
    margins = [None if p is None or polygon is None else polygon.margin(p) for p in points]
    colours = tuple(_colour(m) for m in margins)
    key = ("balance", frame, len(balance.cops), colours)
    doubles = np.concatenate([_ZERO if p is None else p for p in points])
    integers = (stamp.sec, stamp.nanosec) * len(points) + tuple(
        Marker.DELETE if p is None else Marker.ADD for p in points)
    return MarkerGroup(key, doubles, integers,
                       functools.partial(_prototype, frame, len(balance.cops), colours))


def _prototype(frame, n_contacts, colours):
    """Markers of :func:`balance_markers` and their per-tick fields (positions; stamps and
    actions)."""
    kinds = [("cop", k) for k in range(n_contacts)] + [("zmp", 0), ("capture_point", 0)]
    markers = [make_marker(ns, k, Marker.SPHERE, frame, rgba, (DIAMETERS[ns],) * 3)
               for (ns, k), rgba in zip(kinds, colours)]
    doubles = xyz_fields([m.pose.position for m in markers])
    integers = [f for m in markers for f in stamp_fields(m)] + [(m, "action") for m in markers]
    return markers, doubles, integers
