"""Balance quantities from measured contact wrenches (NumPy, no ROS): the centre of pressure
(CoP) of each contact, the zero-moment point (ZMP) of the robot, the divergent component of
motion (DCM) and the instantaneous capture point, and their margins to the support polygon.

Everything is in the world frame: points [m] (3,), wrenches (6,) ``[force [N]; moment [N m]]``
in world axes about the world origin (:func:`world_wrench` converts a sensor's wrench); a
contact wrench is the one the environment exerts on the robot.

- **CoP of a wrench on a plane** (:func:`centre_of_pressure`): the point ``p`` of the plane
  (point ``o``, unit normal ``n``) about which the wrench's moment is along ``n`` (no
  tangential part): ``p = o + n x (tau - o x f) / (n . f)``. Defined while the normal force
  ``n . f`` exceeds a threshold (else None, with the reason).
- **Contact CoP**: on the contact's sole plane (its points' mean, its normal; :func:`sole_plane`).
- **ZMP**: the CoP of the sum of the active contacts' wrenches (normal force above the
  threshold) on the ground plane (:func:`ground_plane`): the plane of the active contacts'
  points when they are coplanar (to 1 um) and it faces up (its normal within 60 degrees of
  up); otherwise the horizontal plane (normal to gravity) at the lowest active contact point.
- **DCM** ``xi = c + c_dot / omega``, ``omega = sqrt(|g| / h)``, ``h`` the CoM's height above
  the ground plane along gravity (linear inverted pendulum); the **capture point** is ``xi``
  projected along gravity onto the ground plane. Undefined (None) without an active contact
  or with the CoM not above the plane.
- **Margins** (:meth:`Balance.margins`): signed distances of the ZMP and the capture point,
  projected along gravity, to a :class:`.contacts.SupportPolygon`'s boundary (positive inside).
"""

import math
from typing import NamedTuple

import numpy as np

__all__ = ["Balance", "CentreOfPressure", "Divergence", "Plane", "balance",
           "centre_of_pressure", "divergent_component", "ground_plane", "packed_balance",
           "sole_plane", "world_wrench"]

COPLANAR_TOL = 1e-6      # [m] points this close to one plane are coplanar
MIN_UP_COSINE = 0.5      # a ground plane's normal is within 60 degrees of up

# Per tick the node calls balance() with two or so contacts: the 3-vector arithmetic below
# runs on Python floats (NumPy costs ~1 us per call on (3,) arrays, np.cross ~15 us).


def _cross(a, b):
    """a x b of two 3-sequences, as a tuple."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _rotate(rows, v):
    """R v of a rotation given by its rows (three 3-sequences)."""
    (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = rows
    x, y, z = v
    return (a0 * x + a1 * y + a2 * z, b0 * x + b1 * y + b2 * z, c0 * x + c1 * y + c2 * z)


def _frame(h):
    """(rotation rows, translation) of a pose (4, 4) as Python floats."""
    r0, r1, r2, _ = h.tolist()
    return (r0[:3], r1[:3], r2[:3]), (r0[3], r1[3], r2[3])


def _transform(frame, p):
    """R p + t of a :func:`_frame`."""
    x, y, z = _rotate(frame[0], p)
    t = frame[1]
    return (x + t[0], y + t[1], z + t[2])


def _up(gravity):
    """(unit vector against gravity, |gravity|) as Python floats (no -0.0 components)."""
    g = gravity.tolist()
    norm = math.sqrt(_dot(g, g))
    return (0.0 - g[0] / norm, 0.0 - g[1] / norm, 0.0 - g[2] / norm), norm


def _cop(w, o, n, threshold):
    """(point or None, normal force) of wrench ``w`` (6 floats, world) on the plane through
    ``o`` normal to ``n`` (3 floats each)."""
    fx, fy, fz, tx, ty, tz = w
    nx, ny, nz = n
    ox, oy, oz = o
    fn = nx * fx + ny * fy + nz * fz
    if not fn > threshold:
        return None, fn
    mx, my, mz = tx - (oy * fz - oz * fy), ty - (oz * fx - ox * fz), tz - (ox * fy - oy * fx)
    return (ox + (ny * mz - nz * my) / fn, oy + (nz * mx - nx * mz) / fn,   # o + n x m / fn
            oz + (nx * my - ny * mx) / fn), fn


class Plane(NamedTuple):
    """A plane: a ``point`` (3,) [m] on it and its unit ``normal`` (3,), world frame."""

    point: np.ndarray
    normal: np.ndarray


class CentreOfPressure(NamedTuple):
    """A CoP: ``point`` (3,) [m] (None when undefined), the ``normal_force`` [N] along the
    plane's normal, and ``reason`` it is undefined ("" when defined)."""

    point: np.ndarray
    normal_force: float
    reason: str = ""


_NO_WRENCH = CentreOfPressure(None, 0.0, "no wrench")


class Divergence(NamedTuple):
    """The DCM ``dcm`` (3,) [m], the ``capture_point`` (3,) [m] on the ground plane, the
    pendulum's ``omega`` [1/s] and the CoM ``height`` [m] above the plane along gravity; the
    points are None (omega nan) when undefined, ``reason`` then says why."""

    dcm: np.ndarray
    capture_point: np.ndarray
    omega: float
    height: float
    reason: str = ""


def world_wrench(world_H_expressed, wrench):
    """The wrench (6,) ``[f; tau]`` given in a frame's axes about its origin (what a
    force/torque sensor reports), in world axes about the world origin; ``world_H_expressed``
    (4, 4) is that frame's pose."""
    return np.array(_world_wrench(_frame(world_H_expressed), wrench.tolist()))


def _world_wrench(frame, w):
    """:func:`world_wrench` on a :func:`_frame` and 6 floats: ``[R f; R tau + t x R f]``."""
    rows, t = frame
    f = _rotate(rows, w[:3])
    tau = _rotate(rows, w[3:])
    t_f = _cross(t, f)
    return [*f, tau[0] + t_f[0], tau[1] + t_f[1], tau[2] + t_f[2]]


def sole_plane(contact, world_H_link):
    """The plane of a :class:`.contacts.Contact` at ``world_H_link`` (4, 4): through the mean of
    its world points, normal to its world normal."""
    o, n = _sole(contact, _frame(world_H_link))
    return Plane(np.array(o), np.array(n))


def _sole(contact, frame):
    """(point, normal) of :func:`sole_plane` on a :func:`_frame`, as tuples."""
    return _transform(frame, contact.centre_list), _rotate(frame[0], contact.normal_list)


def centre_of_pressure(wrench, plane, threshold=0.0):
    """:class:`CentreOfPressure` of ``wrench`` (6,) (world axes, about the world origin) on
    ``plane``; undefined while the normal force ``n . f`` [N] is not above ``threshold``."""
    point, fn = _cop(wrench.tolist(), plane.point.tolist(), plane.normal.tolist(), threshold)
    return _centre_of_pressure(point, fn, threshold)


def _centre_of_pressure(point, fn, threshold):
    if point is None:
        return CentreOfPressure(None, fn, f"normal force {fn:.6g} N not above {threshold:g} N")
    return CentreOfPressure(np.array(point), fn)


def ground_plane(points, up, tol=COPLANAR_TOL):
    """The ground :class:`Plane` of contact points (m, 3), m >= 1, with ``up`` (3,) the unit
    vector against gravity: the points' plane when they are coplanar within ``tol`` [m] (not
    all on one line) and it faces up (normal within 60 degrees of ``up``), with its normal
    towards ``up``; else the plane normal to ``up`` through the lowest point."""
    points, up = np.asarray(points, dtype=float), np.asarray(up, dtype=float)
    centre = points.mean(axis=0)
    if len(points) >= 3:
        _, sv, vt = np.linalg.svd(points - centre)
        normal = vt[2]
        if sv[1] > tol and np.abs((points - centre) @ normal).max() <= tol:
            cosine = float(normal @ up)
            if abs(cosine) >= MIN_UP_COSINE:
                return Plane(centre, normal if cosine > 0.0 else -normal)
    return Plane(points[np.argmin(points @ up)], up)


def _sole_ground(contacts, frames, soles, up, tol=COPLANAR_TOL):
    """:func:`ground_plane` of the contacts' points without an SVD, when every contact is a
    flat sole spanning a plane (``spread`` <= ``tol`` < ``breadth``; else None): the soles
    are coplanar when each lies on the first within ``tol`` [m] (its centre within ``tol``,
    its normal parallel to ~1e-6 rad); else the horizontal plane through the lowest point."""
    if any(c.spread > tol or c.breadth <= tol for c in contacts):
        return None
    point, n = soles[0]
    cosine = _dot(n, up)
    if abs(cosine) >= MIN_UP_COSINE and all(
            abs(_dot(n, m)) >= 1.0 - 0.5 * tol * tol
            and abs(_dot(n, (o[0] - point[0], o[1] - point[1], o[2] - point[2]))) <= tol
            for o, m in soles):
        return Plane(np.array(point), np.array(n) if cosine > 0.0 else -np.array(n))
    lowest = min((_transform(f, p) for c, f in zip(contacts, frames) for p in c.points_list),
                 key=lambda p: _dot(p, up))
    return Plane(np.array(lowest), np.array(up))


def divergent_component(com, com_velocity, plane, gravity):
    """:class:`Divergence` of the CoM ``com`` (3,) [m] moving at ``com_velocity`` (3,) [m/s]
    over the ground ``plane`` (facing up: :func:`ground_plane`), under ``gravity`` (3,)
    [m/s^2]."""
    up, g = _up(gravity)
    n, o = plane.normal.tolist(), plane.point.tolist()
    along = _dot(n, up)
    c = com.tolist()
    height = _dot(n, (c[0] - o[0], c[1] - o[1], c[2] - o[2])) / along
    if not height > 0.0:
        return _no_pendulum(height)
    omega = math.sqrt(g / height)
    v = com_velocity.tolist()
    xi = [c[0] + v[0] / omega, c[1] + v[1] / omega, c[2] + v[2] / omega]
    drop = _dot(n, (xi[0] - o[0], xi[1] - o[1], xi[2] - o[2])) / along
    return Divergence(np.array(xi), np.array([xi[k] - drop * up[k] for k in range(3)]),
                      omega, height)


def _no_pendulum(height):
    return Divergence(None, None, math.nan, height,
                      f"CoM {height:.6g} m above the ground plane: no pendulum")


class Balance(NamedTuple):
    """The balance quantities of one state (:func:`balance`), world frame.

    - ``names``: the contacts, in the order given; ``cops``: a :class:`CentreOfPressure`
      each, on its sole plane; ``active``: the indices of those whose CoP is defined.
    - ``ground``: the ground :class:`Plane` of the active contacts (None without one).
    - ``zmp``: :class:`CentreOfPressure` of their summed wrench on ``ground`` (None without an
      active contact); ``divergence``: :class:`Divergence` (None without an active contact).
    """

    names: tuple
    cops: tuple
    active: tuple
    ground: Plane
    zmp: CentreOfPressure
    divergence: Divergence

    @property
    def zmp_point(self):
        """The ZMP (3,) [m], or None where undefined."""
        return self.zmp.point if self.zmp is not None else None

    @property
    def capture_point(self):
        """The capture point (3,) [m], or None where undefined."""
        return self.divergence.capture_point if self.divergence is not None else None

    def margins(self, polygon):
        """Signed distances [m] of the ZMP and of the capture point to the boundary of
        ``polygon`` (a :class:`.contacts.SupportPolygon`; both projected along gravity),
        positive inside; -inf where the point is undefined (as for an empty polygon)."""
        return tuple(-math.inf if p is None else polygon.margin(p)
                     for p in (self.zmp_point, self.capture_point))


def balance(contacts, poses, wrenches, com, com_velocity, gravity, threshold=0.0, names=None,
            expressed=None):
    """The :class:`Balance` of ``contacts`` (:class:`.contacts.Contact`) at their links'
    ``poses`` (world_H_link (4, 4) each) under the contact ``wrenches`` (6,) each (world
    axes, about the world origin; None: no measured wrench), with the CoM ``com`` (3,) [m]
    moving at ``com_velocity`` (3,) [m/s] under ``gravity`` (3,) [m/s^2]. A contact is
    active when its normal force exceeds ``threshold`` [N]; ``names`` default to the
    contacts' links. ``expressed``: instead of world wrenches, each wrench's frame pose
    (world_H_expressed (4, 4), or None for the contact's link): the wrenches are then as
    :func:`world_wrench` takes them (what a force/torque sensor reports)."""
    names = tuple(c.link for c in contacts) if names is None else tuple(names)
    frames = [_frame(h) for h in poses]
    soles = [_sole(c, f) for c, f in zip(contacts, frames)]
    world = [None if w is None else w.tolist() for w in wrenches]
    if expressed is not None:
        world = [w if w is None else _world_wrench(f if e is None else _frame(e), w)
                 for w, f, e in zip(world, frames, expressed)]
    found = [(None, 0.0) if w is None else _cop(w, o, n, threshold)
             for w, (o, n) in zip(world, soles)]
    cops = tuple(_NO_WRENCH if w is None else _centre_of_pressure(p, fn, threshold)
                 for w, (p, fn) in zip(world, found))
    active = tuple(i for i, (p, _) in enumerate(found) if p is not None)
    if not active:
        return Balance(names, cops, active, None, None, None)
    up = _up(gravity)[0]
    on = [contacts[i] for i in active]
    ground = _sole_ground(on, [frames[i] for i in active], [soles[i] for i in active], up)
    if ground is None:
        ground = ground_plane(np.concatenate([c.points @ poses[i][:3, :3].T + poses[i][:3, 3]
                                              for c, i in zip(on, active)]), up)
    total = list(world[active[0]])
    for i in active[1:]:
        total = [a + b for a, b in zip(total, world[i])]
    zmp = _cop(total, ground.point.tolist(), ground.normal.tolist(), threshold)
    return Balance(names, cops, active, ground, _centre_of_pressure(*zmp, threshold),
                   divergent_component(com, com_velocity, ground, gravity))


def packed_balance(names, out, lay, threshold):
    """The :class:`Balance` that :func:`balance` gives, from the vector ``out`` the compiled
    kernel wrote (:func:`.kernels.balance`; its offsets ``lay``: ``kernels.balance_layout``)
    for the contacts ``names`` under ``threshold`` [N]."""
    values = out.tolist()
    cops = []
    for i in range(len(names)):
        x, y, z, fn, defined = values[5 * i:5 * i + 5]
        cops.append(_NO_WRENCH if defined < 0.0 else _centre_of_pressure(
            (x, y, z) if defined else None, fn, threshold))
    active = tuple(i for i in range(len(names)) if values[5 * i + 4] > 0.0)
    if not active:
        return Balance(tuple(names), tuple(cops), active, None, None, None)
    ground = Plane(out[lay[1]:lay[2]].copy(), out[lay[2]:lay[3]].copy())
    zmp = _centre_of_pressure(values[lay[3]:lay[4]] if values[lay[5]] else None,
                              values[lay[4]], threshold)
    height = values[lay[9]]
    divergence = Divergence(out[lay[6]:lay[7]].copy(), out[lay[7]:lay[8]].copy(),
                            values[lay[8]], height) if values[lay[10]] else _no_pendulum(height)
    return Balance(tuple(names), tuple(cops), active, ground, zmp, divergence)
