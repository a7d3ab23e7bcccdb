"""visualization_msgs/MarkerArray of one tick: CoM, its ground projection, centroidal
momentum arrows and contact forces. Pure (no rclpy.init()); messages are built once and
updated in place every tick.

Stable namespaces and ids (rviz keeps one marker per (ns, id)):

- ``com`` 0: sphere at the CoM; ``com_projection`` 0: flat disc at (x, y, 0) of the world
  frame (z = 0 is taken as the ground).
- ``momentum`` 0: linear momentum m v_com [kg m/s], arrow from the CoM, LINEAR_SCALE m per
  unit; ``momentum`` 1: angular momentum about the CoM [kg m^2/s], ANGULAR_SCALE m per unit.
- ``contact_forces`` k: force of contact k (in ``contacts`` order) at its link's origin,
  FORCE_SCALE m per N; DELETE when that contact has no active wrench.

All positions are in the world frame. On a model reload the node publishes
:meth:`MarkerSet.delete_all` first. The contact mechanics add ns ``support_polygon`` (ids 0
and 1, see :mod:`.contact_mechanics`) to the same array, as a :class:`MarkerGroup`.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from .conversions import assign_fields, stamp_fields, xyz_fields

__all__ = ["MarkerSet", "MarkerGroup", "make_marker", "LINEAR_SCALE", "ANGULAR_SCALE",
           "FORCE_SCALE"]

LINEAR_SCALE = 0.05     # m of arrow per kg m/s
ANGULAR_SCALE = 0.5     # m of arrow per kg m^2/s
FORCE_SCALE = 0.002     # m of arrow per N
COM_DIAMETER = 0.05     # m


def make_marker(ns, mid, kind, frame, rgba, scale):
    """Marker ``(ns, mid)`` of type ``kind`` in frame ``frame``, ADD, identity orientation,
    colour ``rgba`` (4,) and ``scale`` (3,) [m]; an ARROW gets its two points (at 0)."""
    m = Marker()
    m.header.frame_id = frame
    m.ns, m.id, m.type, m.action = ns, mid, kind, Marker.ADD
    m.pose.orientation.w = 1.0
    m.scale.x, m.scale.y, m.scale.z = scale
    m.color.r, m.color.g, m.color.b, m.color.a = rgba
    if kind == Marker.ARROW:
        m.points = [Point(), Point()]
    return m


@dataclass(frozen=True)
class MarkerGroup:
    """Markers to append to a ~/markers array, given as the numbers of their per-tick fields
    so that the array can be published from a serialised template (``outputs``).

    ``key``: the group's message layout (hashable; the same key, the same markers but for
    the values of the fields). ``prototype()`` builds Marker objects of that layout and names
    their per-tick fields: ``(markers, double_fields, integer_fields)``, lists of
    ``(object, attribute)`` as :class:`MarkerSet`'s. ``doubles`` (float64 values) and
    ``integers`` (of the 32-bit integer fields: stamps, actions) fill those fields in order.
    """

    key: tuple
    doubles: np.ndarray
    integers: tuple
    prototype: Callable

    @staticmethod
    def join(groups):
        """One group of the groups that are not None, in order (None when there is none)."""
        groups = [g for g in groups if g is not None]
        if len(groups) <= 1:
            return groups[0] if groups else None

        def prototype():
            parts = [g.prototype() for g in groups]
            return tuple([x for part in parts for x in part[k]] for k in range(3))
        return MarkerGroup(tuple(g.key for g in groups),
                           np.concatenate([g.doubles for g in groups]),
                           tuple(v for g in groups for v in g.integers), prototype)

    def markers(self):
        """The Marker objects with this group's values (for publishing the message object)."""
        markers, doubles, integers = self.prototype()
        assign_fields(doubles, self.doubles.tolist())
        assign_fields(integers, [int(v) for v in self.integers])
        return markers


class MarkerSet:
    """The markers of one node, with their per-tick fields listed once.

    :meth:`values` computes every per-tick number; :meth:`update` writes them into the
    messages, and :attr:`double_fields` / :attr:`integer_fields` name the same fields in the
    same order for a serialised template (see ``outputs.SerializedTemplate``).
    """

    def __init__(self, world_frame, contacts):
        arrow = (0.01, 0.02, 0.03)    # shaft diameter, head diameter, head length [m]
        self.com = make_marker("com", 0, Marker.SPHERE, world_frame, (1.0, 0.5, 0.0, 1.0),
                               (COM_DIAMETER,) * 3)
        self.projection = make_marker("com_projection", 0, Marker.CYLINDER, world_frame,
                                      (1.0, 0.5, 0.0, 0.6), (COM_DIAMETER, COM_DIAMETER, 0.002))
        self.linear = make_marker("momentum", 0, Marker.ARROW, world_frame,
                                  (0.0, 0.4, 1.0, 1.0), arrow)
        self.angular = make_marker("momentum", 1, Marker.ARROW, world_frame,
                                   (0.8, 0.0, 0.8, 1.0), arrow)
        self.forces = [make_marker("contact_forces", k, Marker.ARROW, world_frame,
                                   (0.1, 0.8, 0.1, 1.0), arrow) for k in range(len(contacts))]
        self.array = MarkerArray(markers=[self.com, self.projection, self.linear,
                                          self.angular, *self.forces])
        self.double_fields = xyz_fields([self.com.pose.position, self.projection.pose.position]
                                        + [q for m in [self.linear, self.angular, *self.forces]
                                           for q in m.points])
        self.integer_fields = ([f for m in self.array.markers for f in stamp_fields(m)]
                               + [(m, "action") for m in self.forces])

    def values(self, stamp, com, momentum, forces):
        """Per-tick numbers: (doubles, integers) in the order of the field lists.

        ``com`` (3,) [m] and ``momentum`` (6,) [linear; angular about the CoM] in the world
        frame; ``forces``: one entry per contact, ``(origin (3,), force (3,))`` in the world
        frame [m, N], or None for a contact without an active wrench (its marker is DELETEd).
        """
        # (3-vectors as Python floats: NumPy costs ~1 us per call on them, several times that
        # in the running node; the same operations, so the same numbers)
        (x, y, z), m = np.asarray(com, float).tolist(), np.asarray(momentum, float).tolist()
        doubles = [x, y, z, x, y, 0.0, x, y, z, x + LINEAR_SCALE * m[0], y + LINEAR_SCALE * m[1],
                   z + LINEAR_SCALE * m[2], x, y, z, x + ANGULAR_SCALE * m[3],
                   y + ANGULAR_SCALE * m[4], z + ANGULAR_SCALE * m[5]]
        for entry in forces:
            if entry is None:
                doubles += [0.0] * 6
                continue
            o, f = (np.asarray(v, float).tolist() for v in entry)
            doubles += [*o, o[0] + FORCE_SCALE * f[0], o[1] + FORCE_SCALE * f[1],
                        o[2] + FORCE_SCALE * f[2]]
        integers = ([stamp.sec, stamp.nanosec] * len(self.array.markers)
                    + [Marker.DELETE if e is None else Marker.ADD for e in forces])
        return np.array(doubles), integers

    def update(self, stamp, com, momentum, forces):
        """Fill the markers of one tick (see :meth:`values`) and return the MarkerArray."""
        return self.fill(*self.values(stamp, com, momentum, forces))

    def fill(self, doubles, integers):
        """The MarkerArray with the numbers of :meth:`values` written into its fields."""
        assign_fields(self.double_fields, doubles.tolist())
        assign_fields(self.integer_fields, [int(v) for v in integers])
        return self.array

    @staticmethod
    def delete_all(stamp, frame):
        """MarkerArray with one DELETEALL marker (sent on a model reload)."""
        m = Marker()
        m.header.frame_id = frame
        m.header.stamp = stamp
        m.action = Marker.DELETEALL
        return MarkerArray(markers=[m])
