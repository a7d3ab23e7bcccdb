"""The ~/markers array of a tick (:class:`MarkerArrays`): the node's markers
(:class:`.markers.MarkerSet`: CoM, momentum, contact forces), the contact mechanics' newest
support markers and the balance points' (:func:`.balance_outputs.balance_markers`).

Two ways, the same message:

- from the points: the compiled core computes where the contacts push, the balance points
  and their margins to the support polygon in one kernel call
  (``TickResult.contact_points``), and the array's numbers are gathered from that vector
  with a few NumPy calls into its serialised template;
- the plain way, piece by piece (``TickMessages.contact_forces``, ``TickResult.balance``,
  ``SupportPolygon.margin``): on the NumPy core, before the contact mechanics' first
  support, when a contact was made or lost since it (its polygon is then computed now),
  where an active contact is not a flat sole.

A performance trick: in the running node the plain way cost ~360 us per array at 30 Hz
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

__all__ = ["MarkerArrays"]

_NO_DOUBLES = np.zeros(0)


class MarkerArrays:
    """The ~/markers arrays of one model and settings: ``messages`` (its
    :class:`.outputs.TickMessages`), the settings' world frame and contacts, ``geometry``
    the names of the contacts the core computes (the settings' that are links of the
    model, in their order)."""

    def __init__(self, messages, settings, geometry):
        self._messages, self._frame = messages, settings.world_frame
        slots = [geometry.index(c) if c in geometry else -1 for c in settings.contacts]
        self._slots = slots
        self._markers = len(messages.markers.array.markers)
        self._gathers = TemplateCache()     # per (contacts, support doubles)

    def render(self, tick, support, latest, polygon_of):
        """~/markers of ``tick`` (a :class:`.tick.Tick`): its markers, then the support's
        (``support``: a :class:`.markers.MarkerGroup` or None), then its balance points',
        coloured by the support polygon of its active contacts: ``latest`` ((polygon,
        contact names) of the contact mechanics' newest support, or None before the first)
        when it is of those contacts, else ``polygon_of(result)``."""
        result, stamp = tick.result, tick.stamp
        got = None if latest is None else result.contact_points(*latest)
        if got is None:
            return self._plain(tick, support, polygon_of)
        out, lay = got
        k = lay[1] // 6
        margins = out[lay[4]:lay[5]].tolist()
        colours = tuple(UNKNOWN_RGBA if math.isnan(m) else INSIDE_RGBA if m >= 0.0
                        else OUTSIDE_RGBA for m in margins)
        key = ("balance", self._frame, k, colours)
        extra = support.doubles if support is not None else _NO_DOUBLES
        template = self._messages.marker_template(
            key if support is None else (support.key, key), self._group, support, key)
        a, tips, scales, b = self._gathers.get((k, len(extra)), self._gather, lay, len(extra))
        values = np.concatenate((out, result.com, result.centroidal_momentum, extra, _ZERO))
        doubles = values[a]
        doubles[tips] += scales * values[b]
        measured, defined = out[lay[1]:lay[2]].tolist(), out[lay[3]:lay[4]].tolist()
        slots, pair = self._slots, [stamp.sec, stamp.nanosec]
        integers = pair * self._markers
        integers += [Marker.ADD if i >= 0 and measured[i] else Marker.DELETE for i in slots]
        if support is not None:
            integers += support.integers
        integers += pair * (k + 2)
        integers += [Marker.ADD if d else Marker.DELETE for d in defined]
        return template.render(doubles, integers)

    def _plain(self, tick, support, polygon_of):
        """The array the plain way (see the module docstring)."""
        result, stamp, msgs = tick.result, tick.stamp, self._messages
        forces = msgs.contact_forces(result, tick.inputs.wrenches)
        balance = result.balance
        return msgs.marker_array(result, stamp, forces, MarkerGroup.join((
            support, balance and balance_markers(self._frame, stamp, balance,
                                                 polygon_of(result)))))

    def _group(self, support, key):
        """The MarkerGroup of a template's layout: ``support``'s then the balance points'
        of ``key`` (their values are not read)."""
        _, frame, k, colours = key
        points = MarkerGroup(key, _NO_DOUBLES, (),
                             functools.partial(balance_prototype, frame, k, colours))
        return MarkerGroup.join((support, points))

    def _gather(self, lay, n_extra):
        """(a, tips, scales, b): the array's doubles are ``values[a]``, then ``scales *
        values[b]`` added at ``tips`` (the arrows' heads), where ``values`` is the kernel's
        ``out`` (laid out as ``lay``), the CoM (3), the centroidal momentum (6), the
        support's ``n_extra`` doubles and a zero."""
        com = lay[5]
        momentum, extra = com + 3, com + 9
        zero = extra + n_extra
        xyz = [com, com + 1, com + 2]
        a, tips, scales, b = xyz + [com, com + 1, zero] + xyz * 4, [], [], []
        for at, scale, first in ((9, LINEAR_SCALE, momentum), (15, ANGULAR_SCALE,
                                                              momentum + 3)):
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
        a += list(range(extra, extra + n_extra)) + list(range(lay[2], lay[3]))
        return (np.array(a, np.intp), np.array(tips, np.intp), np.array(scales),
                np.array(b, np.intp))


_ZERO = np.zeros(1)
