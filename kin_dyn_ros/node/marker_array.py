"""The ~/markers array of a tick (:class:`MarkerArrays`): the node's markers
(:class:`.markers.MarkerSet`: CoM, momentum, contact forces), the support of the tick's
active contacts (:func:`.support_outputs.support_markers`, while the contact mechanics are
on) and the balance points' (:func:`.balance_outputs.balance_markers`, coloured by their
place in that support polygon).

Two ways, the same message:

- from the points: the compiled core computes where the contacts push, the balance points,
  the support hull of the active contacts and the points' margins to it in one kernel call
  (``TickResult.contact_points``), and the array's numbers are gathered from that vector
  with a few NumPy calls into its serialised template (one per layout: the balance
  points' colours, the outline's length, whether the CoM is inside);
- the plain way, piece by piece (``TickMessages.contact_forces``, ``TickResult.balance``,
  the contact mechanics' ``ground_support``, ``SupportPolygon.margin``): on the NumPy core
  and where an active contact is not a flat sole.

A performance trick: in the running node at 1 kHz the plain way with the contact
mechanics' support cost ~13.5 us per JointState at 30 arrays a second, this one ~7
(docs/performance.md, "Session 37"); test/ros/test_marker_array.py compares the two.
"""

import functools
import math

import numpy as np
from visualization_msgs.msg import Marker

from .balance_outputs import INSIDE_RGBA, OUTSIDE_RGBA, UNKNOWN_RGBA, balance_markers
from .balance_outputs import _prototype as balance_prototype
from .markers import ANGULAR_SCALE, FORCE_SCALE, LINEAR_SCALE, MarkerGroup
from .outputs import TemplateCache
from .support_outputs import MARKER_NS, support_markers
from .support_outputs import _support_prototype as support_prototype

__all__ = ["MarkerArrays"]

_NO_DOUBLES = np.zeros(0)
_ADD, _DELETE = Marker.ADD, Marker.DELETE      # (the message class's: a Python call each read)


class MarkerArrays:
    """The ~/markers arrays of one model and settings: ``messages`` (its
    :class:`.outputs.TickMessages`), the settings' world frame, contacts and
    equilibrium_rate, ``geometry`` the names of the contacts the core computes (the
    settings' that are links of the model, in their order) and ``ground_support(result)``
    the :class:`~..dynamics.contacts.GroundSupport` of a tick's active contacts (the
    contact mechanics'). The support's markers are drawn while the node has contacts and
    its contact mechanics are on (``equilibrium_rate`` > 0)."""

    def __init__(self, messages, settings, geometry, ground_support):
        self._messages, self._frame = messages, settings.world_frame
        self._slots = [geometry.index(c) if c in geometry else -1 for c in settings.contacts]
        self._geometry, self._ground_support = tuple(geometry), ground_support
        self._draw_support = bool(geometry) and settings.equilibrium_rate > 0.0
        self._markers = len(messages.markers.array.markers)
        self._gathers = TemplateCache()     # per (contacts, outline points)

    def render(self, tick):
        """~/markers of ``tick`` (a :class:`.tick.Tick`): its markers, then its support's
        (the polygon of its active contacts and the CoM's projection), then its balance
        points', coloured by their place in that polygon."""
        result, stamp = tick.result, tick.stamp
        got = result.contact_points()
        if got is None:
            return self._plain(tick)
        out, lay = got
        k, at = lay[1] // 6, lay[5]
        margins = out[lay[4]:at].tolist()
        key = ("balance", self._frame, k, tuple(
            UNKNOWN_RGBA if math.isnan(m) else INSIDE_RGBA if m >= 0.0 else OUTSIDE_RGBA
            for m in margins))
        outline = int(out[at]) if self._draw_support else -1
        support = (MARKER_NS, self._frame, outline, bool(out[at + 1] >= 0.0)) \
            if self._draw_support else None
        template = self._messages.marker_template(
            key if support is None else (support, key), self._group, support, key)
        a, tips, scales, b = self._gathers.get((k, outline), self._gather, lay, outline)
        values = np.concatenate((out, result.com, result.centroidal_momentum, _ZERO))
        doubles = values[a]
        doubles[tips] += scales * values[b]
        measured, defined = out[lay[1]:lay[2]].tolist(), out[lay[3]:lay[4]].tolist()
        pair = [stamp.sec, stamp.nanosec]
        integers = pair * self._markers
        integers += [_ADD if i >= 0 and measured[i] else _DELETE for i in self._slots]
        integers += pair * (k + 4 if support is not None else k + 2)
        integers += [_ADD if d else _DELETE for d in defined]
        return template.render(doubles, integers)

    def _plain(self, tick):
        """The array the plain way (see the module docstring)."""
        result, stamp, msgs = tick.result, tick.stamp, self._messages
        forces = msgs.contact_forces(result, tick.inputs.wrenches)
        balance, support = result.balance, None
        if self._geometry:
            try:
                support = self._ground_support(result)
            except ValueError:          # (the contact mechanics log it for their outputs)
                pass
        drawn = support_markers(self._frame, stamp, support) \
            if support is not None and self._draw_support else None
        return msgs.marker_array(result, stamp, forces, MarkerGroup.join((
            drawn, balance and balance_markers(self._frame, stamp, balance,
                                               support and support.polygon))))

    def _group(self, support, key):
        """The MarkerGroup of a template's layout: the support's (``support``: its key, or
        None) then the balance points' of ``key`` (their values are not read)."""
        _, frame, k, colours = key
        points = MarkerGroup(key, _NO_DOUBLES, (),
                             functools.partial(balance_prototype, frame, k, colours))
        if support is None:
            return points
        _, _, outline, inside = support
        drawn = MarkerGroup(support, _NO_DOUBLES, (),
                            functools.partial(support_prototype, frame, outline, inside))
        return MarkerGroup.join((drawn, points))

    def _gather(self, lay, outline):
        """(a, tips, scales, b): the array's doubles are ``values[a]``, then ``scales *
        values[b]`` added at ``tips`` (the arrows' heads), where ``values`` is the kernel's
        ``out`` (laid out as ``lay``), the CoM (3), the centroidal momentum (6) and a zero;
        the support's ``outline`` points and its CoM projection between the node's markers
        and the balance points (none with ``outline`` -1)."""
        com = lay[-1]
        momentum, zero = com + 3, com + 9
        xyz = [com, com + 1, com + 2]
        a, tips, scales, b = xyz + [com, com + 1, zero] + xyz * 4, [], [], []
        for at, scale, first in ((9, LINEAR_SCALE, momentum),
                                 (15, ANGULAR_SCALE, momentum + 3)):
            tips += [at, at + 1, at + 2]
            scales += [scale] * 3
            b += [first, first + 1, first + 2]
        for i in self._slots:
            if i < 0:
                a += [zero] * 6
                continue
            row = [6 * i, 6 * i + 1, 6 * i + 2]
            tips += [len(a) + 3, len(a) + 4, len(a) + 5]
            a += row + row
            scales += [FORCE_SCALE] * 3
            b += [6 * i + 3, 6 * i + 4, 6 * i + 5]
        if outline >= 0:
            support = lay[5]
            a += list(range(support + 5, support + 5 + 3 * outline))
            a += [support + 2, support + 3, support + 4]
        a += list(range(lay[2], lay[3]))
        return (np.array(a, np.intp), np.array(tips, np.intp), np.array(scales),
                np.array(b, np.intp))


_ZERO = np.zeros(1)
