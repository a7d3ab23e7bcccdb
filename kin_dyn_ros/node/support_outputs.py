"""The support's outputs: ~/support_polygon and ~/stability_margin as serialised
templates (:class:`SupportMessages`) and the support's markers in ~/markers
(:func:`support_markers`), for the contact mechanics (:mod:`.contact_mechanics`), as
:mod:`.balance_outputs` has the balance points' and :mod:`.outputs` the per-tick outputs'."""

import functools

import numpy as np
from geometry_msgs.msg import Point, Point32, PolygonStamped
from visualization_msgs.msg import Marker

from kin_dyn_ros_interfaces.msg import StabilityMargin

from .conversions import stamp_fields, stamp_words, xyz_fields
from .markers import MarkerGroup, make_marker
from .outputs import SerializedTemplate, TemplateCache

__all__ = ["support_markers", "SupportMessages", "margin_values", "MARKER_NS", "INSIDE_RGBA",
           "OUTSIDE_RGBA"]

MARKER_NS = "support_polygon"
LINE_WIDTH = 0.005                    # [m] polygon outline
DISC = (0.07, 0.07, 0.003)            # [m] CoM projection disc (wider than ns com_projection)
POLYGON_RGBA = (1.0, 0.85, 0.0, 1.0)
INSIDE_RGBA = (0.1, 0.8, 0.1, 0.9)
OUTSIDE_RGBA = (0.9, 0.1, 0.1, 0.9)
_ZERO = np.zeros(3)


# -- per-tick messages ----------------------------------------------------------------------
def _support_prototype(frame, n_points, inside):
    """Markers of a support with an outline of ``n_points`` points (0: DELETE), its disc
    green (``inside``) or red, and their per-tick fields (see :class:`.markers.MarkerGroup`)."""
    outline = make_marker(MARKER_NS, 0, Marker.LINE_STRIP, frame, POLYGON_RGBA,
                          (LINE_WIDTH, 0.0, 0.0))
    outline.points = [Point() for _ in range(n_points)]
    if not n_points:
        outline.action = Marker.DELETE
    disc = make_marker(MARKER_NS, 1, Marker.CYLINDER, frame,
                       INSIDE_RGBA if inside else OUTSIDE_RGBA, DISC)
    doubles = xyz_fields([*outline.points, disc.pose.position])
    integers = stamp_fields(outline) + stamp_fields(disc)
    return [outline, disc], doubles, integers


def support_markers(frame, stamp, support):
    """:class:`.markers.MarkerGroup` of ns ``support_polygon``: id 0 the closed polygon
    outline (DELETE when it has no vertex), id 1 the CoM projection disc, green inside and
    red outside; world frame ``frame``, stamped ``stamp``."""
    pts = support.points
    outline = np.concatenate([pts, pts[:1]]) if len(pts) > 1 else np.repeat(pts, 2, axis=0)
    key = (MARKER_NS, frame, len(outline), support.inside)
    return MarkerGroup(key, np.concatenate([outline.ravel(), support.com_projection]),
                       (stamp.sec, stamp.nanosec) * 2,
                       functools.partial(_support_prototype, frame, len(outline), support.inside))


class SupportMessages:
    """~/support_polygon and ~/stability_margin of a tick's support, world frame ``frame``:
    serialised bytes from a template per layout (the polygon's number of points; the
    margin's active contacts and inside flags), else the message objects."""

    def __init__(self, frame):
        self._frame = frame
        self._polygons, self._margins = TemplateCache(), TemplateCache()

    def polygon(self, points, stamp):
        """PolygonStamped: the support polygon's vertices ``points`` (m, 3) [m] (float32)."""
        template = self._polygons.get(len(points), self._polygon, len(points))
        return template.render((), stamp_words(stamp), points)

    def _polygon(self, n_points):
        msg = PolygonStamped()
        msg.header.frame_id = self._frame
        msg.polygon.points = [Point32() for _ in range(n_points)]
        return SerializedTemplate(msg, [], stamp_fields(msg),
                                  floats=xyz_fields(msg.polygon.points))

    def margin(self, names, values, stamp):
        """StabilityMargin of the active contacts ``names`` and ``values`` (12,) laid out
        as :func:`margin_values` makes them; each ``inside`` flag is its margin >= 0."""
        margin, zmp, cp = values[MARGINS].tolist()
        key = (names, margin >= 0.0, zmp >= 0.0, cp >= 0.0)
        template = self._margins.get(key, self._margin, *key)
        return template.render(values, stamp_words(stamp))

    def _margin(self, names, inside, zmp_inside, capture_point_inside):
        msg = StabilityMargin(inside=inside, active_contacts=list(names), zmp_inside=zmp_inside,
                              capture_point_inside=capture_point_inside)
        msg.header.frame_id = self._frame
        doubles = [(msg, "margin"), *xyz_fields([msg.com_projection]),
                   *xyz_fields([msg.zmp]), (msg, "zmp_margin"),
                   *xyz_fields([msg.capture_point]), (msg, "capture_point_margin")]
        return SerializedTemplate(msg, doubles, stamp_fields(msg))


MARGINS = [0, 7, 11]        # where margin_values has the CoM's, the ZMP's and the CP's margin


def margin_values(support, balance, margins):
    """The numbers of a StabilityMargin (12,): the CoM's margin [m] and ground projection
    (3) of ``support`` (a :class:`~..dynamics.contacts.GroundSupport`), the ZMP of
    ``balance`` (a :class:`~..dynamics.balance.Balance`, or None; zeros where undefined)
    and its margin, the capture point and its margin (``margins``: the two, -inf where
    undefined)."""
    zmp = balance.zmp_point if balance is not None else None
    cp = balance.capture_point if balance is not None else None
    return np.concatenate([[support.margin], support.com_projection,
                           _ZERO if zmp is None else zmp, margins[:1],
                           _ZERO if cp is None else cp, margins[1:]])
