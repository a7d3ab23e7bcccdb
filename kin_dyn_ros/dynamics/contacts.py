"""Contact model, linearised friction cones and support polygons (NumPy + SciPy, no ROS).

A :class:`Contact` is a set of points on one link that touch the environment, with one
contact normal and one friction coefficient, all given in the link frame (a foot sole: its
four corners, normal +z). With a link pose ``world_H_link`` (4, 4) it gives world points and
normals; :func:`contact_poses` gets those poses from a ``KinDynComputations`` and a state.

Friction cones are linearised as **inscribed pyramids with K facets** (default 8): the K edges
``n + mu (cos t1 + sin t2)`` at angles ``2 pi j / K`` lie on the true cone, the first along
``t1``, the projection of the link's x axis onto the contact plane (y when x is along the
normal), so the pyramid moves rigidly with the link. Being inscribed it is conservative: a
force inside it is inside the true cone; tangential forces reach ``mu f_n`` along the edges
and ``mu cos(pi/K) f_n`` between them. In half-space form a force f at a point with normal n
satisfies ``(d_k - mu cos(pi/K) n) . f <= 0`` (d_k: unit tangent at angle ``2 pi (k+1/2)/K``)
and ``n . f >= 0``.

:func:`support_polygon` returns the set of CoM positions, projected along gravity onto the
ground plane, at which static equilibrium is possible (Bretl and Lall 2008, "Testing static
equilibrium for legged robots", IEEE T-RO 24(4)): with ``f_i`` in the cones,
``sum f_i + m g = 0`` and ``sum p_i x f_i + c x m g = 0``. It does not depend on the mass.

- Flat contacts (every point on one plane normal to gravity, every normal against gravity):
  the convex hull of the points projected on the ground plane, whatever the friction
  (horizontal friction forces on one plane sum to zero and so have zero moment). Monotone
  chain, a few microseconds.
- Otherwise (steps, slopes, walls, friction-limited): the faces of the contact wrench cone
  (Caron, Pham and Nakamura 2015, "Leveraging cone double description for multi-contact
  stability of humanoids", RSS). The wrenches ``(f, (p - o) x f)`` of the pyramids' edges span
  a cone in R^6; scaled onto a hyperplane through its interior, their convex hull (Qhull,
  ``scipy.spatial.ConvexHull``, 5-D) gives the cone's faces ``h . w <= 0``. Gravity's wrench
  is affine in the CoM's ground position, so each face is one half-plane of CoMs and the
  polygon is their intersection (exact for the linearised cones, to rounding). ~5 ms for two
  feet of 4 points with 8-facet pyramids (32 LPs of the projection: 60-110 ms), ~11 ms for
  eight such contacts (the LPs: 250 ms).
- Where that cone is not 6-D (a point, a line, frictionless points), has no interior
  direction (contacts that can squeeze, e.g. between two walls), or has over
  ``_MAX_CONE_EDGES`` edges: Bretl and Lall's iterative projection, each support query
  ``max d . c`` being one linear program solved with HiGHS (``scipy.optimize.linprog``), until
  every edge of the inner polygon is confirmed as a face (exact to the LP tolerance, ~1e-9
  m). About 2 ms per LP: fine at planning rates, not per 1 kHz tick.

:func:`ground_support` (the node's per-tick support) is always the first: the hull of the
points projected along gravity, with the CoM's margin and projection (:class:`GroundSupport`);
:func:`normal_force` tells which contacts are active.

Ground coordinates: ``(c . e1, c . e2)`` with ``e1``, ``e2`` orthonormal and normal to gravity
(world x and y when gravity is along -z), ``(e1, e2, up)`` right-handed. World frame: the
frame of ``world_H_link`` (the ``w_H_b`` world of ``KinDynComputations``).
"""

import math
from dataclasses import dataclass, field

import numpy as np

from .checks import checked_array
from .compiled import contact_kernels
from .spatial import cross3, skew

__all__ = ["Contact", "SupportPolygon", "GroundSupport", "contact_poses", "convex_hull",
           "friction_cone_halfspaces", "ground_axes", "ground_support", "hull_support",
           "normal_force", "plane_points", "pyramid_edges", "support_polygon", "world_contacts",
           "DEFAULT_FACETS"]

DEFAULT_FACETS = 8
_GRAVITY = np.array([0.0, 0.0, -9.80665])
_FLAT_TOL = 1e-9     # [m] height spread and [-] normal misalignment accepted as "flat"
_EDGE_TOL = 1e-9     # [m] an LP support value within this of an edge confirms the edge
_BOX = 1e3           # [m] half-size of the box that bounds an unbounded polygon
_MAX_LPS = 200
# pyramid edges beyond which the LPs are used: Qhull's faces grow up to quadratically with
# the edges (5-D); on random supports 256 edges took 11 ms (LPs 250 ms), 1024 edges 17-144 ms
# (LPs 2.3-2.7 s)
_MAX_CONE_EDGES = 1024
_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


@dataclass(frozen=True, eq=False)
class Contact:
    """Contact points of one link: ``points`` (k, 3) and ``normal`` (3,) in the link frame.

    Parameters
    ----------
    link : str
        The link (any frame of the URDF) the points are fixed to.
    points : array_like, shape (k, 3) or (3,)
        Contact points [m] in the link frame (a single point may be given as (3,)).
    normal : array_like, shape (3,)
        Contact normal in the link frame, pointing from the environment into the link (the
        direction of the push the link receives); normalised here.
    friction : float
        Coulomb friction coefficient mu >= 0 (0: frictionless, normal forces only).
    """

    link: str
    points: np.ndarray
    normal: np.ndarray
    friction: float
    _tangents: tuple = field(init=False, repr=False, default=None)
    _cones: dict = field(init=False, repr=False, default=None)
    _centre: np.ndarray = field(init=False, repr=False, default=None)
    _spread: float = field(init=False, repr=False, default=0.0)
    _breadth: float = field(init=False, repr=False, default=0.0)
    _lists: tuple = field(init=False, repr=False, default=None)

    def __post_init__(self):
        pts = np.asarray(self.points, dtype=float)
        if pts.ndim == 1:
            pts = pts[None, :]
        if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) == 0:
            raise ValueError(f"expected points with shape (k, 3), k >= 1, got "
                             f"{np.shape(self.points)}")
        if not np.isfinite(pts).all():
            raise ValueError(f"points of contact on '{self.link}' contain NaN or inf")
        n = checked_array("normal", self.normal, (3,))
        norm = np.linalg.norm(n)
        if norm < 1e-12:
            raise ValueError(f"normal of contact on '{self.link}' is zero")
        mu = float(self.friction)
        if not (np.isfinite(mu) and mu >= 0.0):
            raise ValueError(f"expected friction >= 0 for contact on '{self.link}', got {mu}")
        pts, n = pts.copy(), n / norm
        pts.flags.writeable = n.flags.writeable = False
        object.__setattr__(self, "points", pts)
        object.__setattr__(self, "normal", n)
        object.__setattr__(self, "friction", mu)
        axis = np.eye(3)[0] if abs(n[0]) < 0.9 else np.eye(3)[1]
        t1 = axis - (axis @ n) * n
        t1 /= np.linalg.norm(t1)
        object.__setattr__(self, "_tangents", (t1, cross3(n, t1)))
        object.__setattr__(self, "_cones", {})
        centre = pts.mean(axis=0)
        centre.flags.writeable = False
        object.__setattr__(self, "_centre", centre)
        object.__setattr__(self, "_spread", float(np.abs((pts - centre) @ n).max()))
        object.__setattr__(self, "_lists", (centre.tolist(), n.tolist(), pts.tolist()))
        widths = np.linalg.svd(pts - centre, compute_uv=False)
        object.__setattr__(self, "_breadth",
                           float(widths[1]) / np.sqrt(len(pts)) if len(widths) > 1 else 0.0)

    @property
    def centre(self):
        """Mean of the points (3,) [m], link frame (read only)."""
        return self._centre

    @property
    def centre_list(self):
        """``centre`` as a list of floats (for per-tick arithmetic on Python floats)."""
        return self._lists[0]

    @property
    def normal_list(self):
        """``normal`` as a list of floats."""
        return self._lists[1]

    @property
    def points_list(self):
        """``points`` as a list of k lists of floats."""
        return self._lists[2]

    @property
    def spread(self):
        """Largest distance [m] of a point from the plane through ``centre`` normal to
        ``normal``: 0 for a flat sole."""
        return self._spread

    @property
    def breadth(self):
        """RMS distance [m] of the points from their best-fitting line: 0 for a single point
        or points on a line (a sole edge), > 0 when they span a plane."""
        return self._breadth

    def world_points(self, world_H_link):
        """Contact points in the world (k, 3) [m]."""
        h = checked_array("world_H_link", world_H_link, (4, 4))
        return self.points @ h[:3, :3].T + h[:3, 3]

    def world_normal(self, world_H_link):
        """Contact normal in the world (3,)."""
        return checked_array("world_H_link", world_H_link, (4, 4))[:3, :3] @ self.normal

    def tangents(self):
        """Link-frame tangent basis (t1, t2), each (3,): t1 along the link x axis projected
        on the contact plane (y when x is along the normal), t2 = normal x t1."""
        return self._tangents[0].copy(), self._tangents[1].copy()

    def cone(self, n_facets=DEFAULT_FACETS):
        """Link-frame half-spaces (n_facets + 1, 3) of the friction pyramid
        (:func:`friction_cone_halfspaces`), cached per n_facets."""
        k = int(n_facets)
        if k not in self._cones:
            rows = friction_cone_halfspaces(self.normal, *self._tangents, self.friction, k)
            rows.flags.writeable = False
            self._cones[k] = rows
        return self._cones[k]


def friction_cone_halfspaces(normal, t1, t2, friction, n_facets=DEFAULT_FACETS):
    """Rows ``a`` (n_facets + 1, 3) with ``a @ f <= 0`` <=> f in the inscribed K-facet pyramid.

    The first ``n_facets`` rows are the facets ``d_k - mu cos(pi/K) n``, d_k at angle
    ``2 pi (k + 1/2) / K`` from t1 in the (t1, t2) plane; the last is ``-n`` (unilateral).
    """
    k = int(n_facets)
    if k < 3:
        raise ValueError(f"expected n_facets >= 3, got {n_facets}")
    phi = 2.0 * np.pi * (np.arange(k) + 0.5) / k
    d = np.cos(phi)[:, None] * t1 + np.sin(phi)[:, None] * t2
    rows = d - friction * np.cos(np.pi / k) * np.asarray(normal)
    return np.vstack([rows, -np.asarray(normal)[None, :]])


def contact_poses(kd, w_H_b, s, contacts):
    """``{link: world_H_link (4, 4)}`` for the links of ``contacts`` (forward kinematics)."""
    return {link: kd.forward_kinematics(link, w_H_b, s)
            for link in dict.fromkeys(c.link for c in contacts)}


@dataclass(frozen=True)
class WorldContacts:
    """All contact points in the world, stacked: ``points`` (P, 3), ``normals`` (P, 3),
    ``halfspaces`` (P, K+1, 3) (see :func:`friction_cone_halfspaces`, world axes),
    ``friction`` (P,), ``slices``: the rows of each contact, in the given order."""

    points: np.ndarray
    normals: np.ndarray
    halfspaces: np.ndarray
    friction: np.ndarray
    slices: tuple

    def split(self, per_point):
        """(P, ...) -> tuple of per-contact (k, ...) arrays."""
        return tuple(per_point[sl] for sl in self.slices)


def world_contacts(contacts, world_H_links=None, n_facets=DEFAULT_FACETS):
    """Stack ``contacts`` in the world frame (:class:`WorldContacts`).

    ``world_H_links``: ``{link: world_H_link (4, 4)}`` naming every contact's link (from
    :func:`contact_poses`), or None when the contacts are already given in the world frame.
    """
    contacts = list(contacts)
    if not contacts:
        raise ValueError("expected at least one contact, got none")
    for c in contacts:
        if not isinstance(c, Contact):
            raise ValueError(f"expected Contact objects, got {type(c).__name__}")
    points, normals, cones, mus, slices, start = [], [], [], [], [], 0
    for c in contacts:
        if world_H_links is None:
            h = np.eye(4)
        elif c.link in world_H_links:
            h = checked_array(f"world_H_links['{c.link}']", world_H_links[c.link], (4, 4))
        else:
            raise ValueError(f"world_H_links has no pose for contact link '{c.link}'")
        r = h[:3, :3]
        k = len(c.points)
        points.append(c.points @ r.T + h[:3, 3])
        normals.append(np.repeat((r @ c.normal)[None, :], k, axis=0))
        cones.append(np.repeat((c.cone(n_facets) @ r.T)[None], k, axis=0))
        mus.append(np.full(k, c.friction))
        slices.append(slice(start, start + k))
        start += k
    return WorldContacts(np.concatenate(points), np.concatenate(normals),
                         np.concatenate(cones), np.concatenate(mus), tuple(slices))


def ground_axes(gravity):
    """(2, 3) orthonormal axes e1, e2 of the ground plane (normal to gravity), with
    (e1, e2, up) right-handed, up = -gravity/|gravity|: world x, y for gravity along -z."""
    g = checked_array("gravity", gravity, (3,))
    norm = np.linalg.norm(g)
    if norm < 1e-12:
        raise ValueError("gravity is zero: no support polygon or static equilibrium")
    up = -g / norm
    if up[0] == 0.0 and up[1] == 0.0 and up[2] > 0.0:
        return np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    axis = np.eye(3)[0] if abs(up[0]) < 0.9 else np.eye(3)[1]
    e1 = axis - (axis @ up) * up
    e1 /= np.linalg.norm(e1)
    return np.array([e1, cross3(up, e1)])


HULL_TOL = 1e-12       # convex_hull's default tolerance (relative, squared scale)


def convex_hull(points, tol=HULL_TOL):
    """Convex hull (m, 2) of 2-D points (N, 2), counter-clockwise, collinear points dropped
    (Andrew's monotone chain). Degenerate inputs give 1 (a point) or 2 (a segment) vertices."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    if len(pts) == 0:
        return np.zeros((0, 2))
    order = np.lexsort((pts[:, 1], pts[:, 0]))
    pts = pts[order]
    scale = max(1.0, float(np.abs(pts).max()))
    eps = tol * scale * scale
    seq = pts.tolist()      # plain floats: the loop below is ~5x faster than on arrays

    def chain(seq):
        out = []
        for p in seq:
            while len(out) >= 2:
                a, b = out[-2], out[-1]
                if (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) > eps:
                    break
                out.pop()
            out.append(p)
        return out

    lower, upper = chain(seq), chain(seq[::-1])
    hull = np.array(lower[:-1] + upper[:-1]) if len(pts) > 1 else pts
    if len(hull) == 0 or (len(hull) == 2 and np.allclose(hull[0], hull[1], atol=tol * scale)):
        return pts[:1]
    return hull


@dataclass(frozen=True, eq=False)
class SupportPolygon:
    """Convex set of admissible CoM ground positions.

    - ``vertices`` (m, 2): counter-clockwise, ground coordinates (see :func:`ground_axes`);
      m = 0 when no CoM position admits equilibrium, 1 or 2 for a point or a segment.
    - ``axes`` (2, 3): world directions e1, e2 of the ground coordinates.
    - ``bounded``: False when the polygon reached the +-1 km box that bounds the LPs (contacts
      that can squeeze, e.g. between two walls, admit CoMs arbitrarily far away).
    - ``method``: ``'hull'`` (flat contacts), ``'cone'`` (faces of the contact wrench cone)
      or ``'projection'`` (iterative projection).
    - ``n_lps``: number of linear programs solved.
    """

    vertices: np.ndarray
    axes: np.ndarray
    bounded: bool = True
    method: str = "hull"
    n_lps: int = 0
    _lines: tuple = field(default=None, repr=False)

    def __post_init__(self):
        v = np.asarray(self.vertices, dtype=float).reshape(-1, 2)
        object.__setattr__(self, "vertices", v)
        if len(v) >= 3 and self._lines is None:     # (given: the compiled hull's)
            edge = np.roll(v, -1, axis=0) - v
            normal = np.stack([edge[:, 1], -edge[:, 0]], axis=1)
            normal /= np.linalg.norm(normal, axis=1, keepdims=True)
            object.__setattr__(self, "_lines", (normal, np.einsum("ij,ij->i", normal, v)))

    @property
    def halfplanes(self):
        """(normals (m, 2), offsets (m,)): the polygon is ``normals @ x <= offsets``, unit
        outward normals, one per edge (vertex i to i+1). Only for m >= 3 (else ValueError)."""
        if self._lines is None:
            raise ValueError(f"the support polygon has {len(self.vertices)} vertices: no "
                             "half-plane form")
        return self._lines[0].copy(), self._lines[1].copy()

    @property
    def area(self):
        v = self.vertices
        if len(v) < 3:
            return 0.0
        return 0.5 * float(np.sum(v[:, 0] * np.roll(v[:, 1], -1) - np.roll(v[:, 0], -1) * v[:, 1]))

    def project(self, point):
        """Ground coordinates (2,) of a world point (3,) (its projection along gravity)."""
        return self.axes @ checked_array("point", point, (3,))

    def margin_arrays(self):
        """(vertices (m, 2), half-plane normals (m, 2), offsets (m,), axes (2, 3)): the
        polygon as :func:`.kernels.polygon_margin` takes it (no half-planes when m < 3)."""
        lines = self._lines or _NO_LINES
        return self.vertices, lines[0], lines[1], self.axes

    def margin(self, point):
        """Signed distance [m] from ``point`` to the polygon boundary: positive inside.

        ``point``: a world point (3,) (a CoM; projected along gravity) or ground coordinates
        (2,). Outside (and for degenerate polygons) it is minus the Euclidean distance to the
        polygon; for an empty polygon, -inf.
        """
        kernels = contact_kernels()
        if kernels is not None:
            try:
                got = kernels.polygon_margin(*self.margin_arrays(), point)
            except TypeError:           # (not the compiled types: a list, read-only arrays)
                got = math.nan
            if not math.isnan(got):     # (NaN: a wrong point, named below)
                return got
        x = np.asarray(point, dtype=float)
        x = self.project(x) if x.shape == (3,) else checked_array("point", x, (2,))
        v = self.vertices
        if len(v) == 0:
            return -np.inf
        if self._lines is not None:
            normal, offset = self._lines
            slack = offset - normal @ x
            if (slack >= 0.0).all():
                return float(slack.min())
        a, b = v, np.roll(v, -1, axis=0)
        ab = b - a
        den = np.maximum(np.einsum("ij,ij->i", ab, ab), 1e-300)
        t = np.clip(np.einsum("ij,ij->i", x - a, ab) / den, 0.0, 1.0)
        return -float(np.min(np.linalg.norm(a + t[:, None] * ab - x, axis=1)))

    def contains(self, point, tol=0.0):
        """``margin(point) >= -tol``."""
        return self.margin(point) >= -tol


def _is_flat(wc, up):
    heights = wc.points @ up
    return bool((wc.normals @ up >= 1.0 - _FLAT_TOL).all()
                and heights.max() - heights.min() <= _FLAT_TOL)


def support_polygon(contacts, world_H_links=None, gravity=_GRAVITY, n_facets=DEFAULT_FACETS,
                    method="auto"):
    """Support polygon of ``contacts`` under ``gravity`` (:class:`SupportPolygon`).

    Parameters
    ----------
    contacts : sequence of Contact
    world_H_links : dict, optional
        ``{link: world_H_link (4, 4)}`` (e.g. :func:`contact_poses`); None: contacts are given
        in the world frame.
    gravity : array_like, shape (3,)
        Only its direction matters [m/s^2].
    n_facets : int
        Facets of the linearised friction cones (>= 3).
    method : {'auto', 'hull', 'cone', 'projection'}
        'auto': the convex hull for flat contacts (see the module docstring), else the wrench
        cone's faces where they apply, else the iterative projection; 'hull' forces the hull
        (ValueError unless flat); 'cone' the wrench cone (ValueError where it does not apply);
        'projection' forces the LPs.
    """
    if method not in ("auto", "hull", "cone", "projection"):
        raise ValueError(f"expected method 'auto', 'hull', 'cone' or 'projection', got {method!r}")
    axes = ground_axes(gravity)
    up = -np.asarray(gravity, dtype=float) / np.linalg.norm(gravity)
    wc = world_contacts(contacts, world_H_links, n_facets)
    flat = _is_flat(wc, up)
    if method == "hull" and not flat:
        raise ValueError("method='hull' needs flat contacts: coplanar points on a plane normal "
                         "to gravity, normals against gravity")
    if method == "hull" or (method == "auto" and flat):
        return _hull_polygon(wc.points, axes)
    if method in ("auto", "cone"):
        polygon = _cone_polygon(wc, axes, up)
        if polygon is not None:
            return polygon
        if method == "cone":
            raise ValueError("method='cone' needs a 6-D, pointed contact wrench cone of at most "
                             f"{_MAX_CONE_EDGES} edges")
    return _project(wc, axes, up)


def _hull_polygon(points, axes):
    """SupportPolygon ('hull') of world points (P, 3) projected along gravity on ``axes``."""
    return SupportPolygon(convex_hull(points @ axes.T), axes, True, "hull", 0)


def pyramid_edges(wc):
    """Unit edges (P, K, 3) of each point's friction pyramid (world axes), each the
    intersection of two adjacent facets of ``wc.halfspaces``, oriented along the normal."""
    facets = wc.halfspaces[:, :-1]
    edges = np.cross(np.roll(facets, 1, axis=1), facets)
    edges *= np.sign(np.einsum("pkj,pj->pk", edges, wc.normals))[..., None]
    return edges / np.linalg.norm(edges, axis=2, keepdims=True)


def _wrench_cone_faces(wc):
    """Faces (F, 6) ``h . (f, (p - o) x f / L) <= 0`` of the cone of contact wrenches about
    the points' centroid ``o`` (moments over L, the largest arm [m], for conditioning), with
    ``o`` and ``L``; None when the cone is not 6-D, has no interior direction or is too big."""
    edges = pyramid_edges(wc)
    if edges.shape[0] * edges.shape[1] > _MAX_CONE_EDGES or not np.isfinite(edges).all():
        return None
    o = wc.points.mean(axis=0)
    arms = wc.points - o
    length = max(float(np.abs(arms).max()), 1e-3)
    forces = edges.reshape(-1, 3)
    gens = np.hstack([forces, cross3(np.repeat(arms, edges.shape[1], axis=0), forces) / length])
    if np.linalg.matrix_rank(gens, tol=1e-9) < 6:
        return None
    inward = gens.mean(axis=0)
    inward /= np.linalg.norm(inward)
    along = gens @ inward
    if along.min() < 1e-6:           # not pointed, or the mean edge is not interior enough
        return None
    basis = np.linalg.svd(inward[None, :])[2][1:].T        # (6, 5) orthonormal, normal to it
    from scipy.spatial import ConvexHull, QhullError    # here: see _project's linprog
    try:    # the edges scaled onto inward . w = 1: a 5-D polytope whose facets are the faces
        hull = ConvexHull((gens / along[:, None]) @ basis)
    except QhullError:
        return None
    eq = hull.equations               # n . y + b <= 0, y = basis^T w: (basis n + b inward) . w
    return eq[:, :5] @ basis.T + eq[:, 5:] * inward, o, length


def _cone_polygon(wc, axes, up):
    """SupportPolygon ('cone') from the contact wrench cone's faces, or None (see
    :func:`_wrench_cone_faces`). Gravity's wrench, in units of the weight, is ``(up, (c - o) x
    up)``; with ``c - o = x1 e1 + x2 e2`` (+ any height) its moment is ``x2 e1 - x1 e2``."""
    faces = _wrench_cone_faces(wc)
    if faces is None:
        return None
    h, o, length = faces
    hf, hm = h[:, :3], h[:, 3:] / length
    normals = np.stack([-hm @ axes[1], hm @ axes[0]], axis=1)        # normals @ x <= offsets
    offsets = -hf @ up
    norm = np.linalg.norm(normals, axis=1)
    level = norm <= 1e-12 * np.abs(h).max(axis=1)      # faces no CoM position changes
    empty = SupportPolygon(np.zeros((0, 2)), axes, True, "cone", 0)
    if (offsets[level] < -1e-12).any():
        return empty
    keep = ~level
    box = _BOX * np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    x = _clip(box, normals[keep] / norm[keep, None], offsets[keep] / norm[keep])
    if len(x) == 0:
        return empty
    bounded = bool((np.abs(x) < _BOX * (1.0 - 1e-9)).all())
    return SupportPolygon(convex_hull(x + axes @ o), axes, bounded, "cone", 0)


def _clip(polygon, normals, offsets, tol=1e-11):
    """The convex ``polygon`` (m, 2) cut by the half-planes ``normals @ x <= offsets`` (unit
    normals), the most violated first, until none cuts it by more than ``tol`` [m] (redundant
    ones never do; the faces' rounding, ~1e-13 m, would cut corners into pairs)."""
    while len(polygon):
        excess = (polygon @ normals.T - offsets).max(axis=0)
        i = int(np.argmax(excess))
        if excess[i] <= tol:
            break
        s = polygon @ normals[i] - offsets[i]
        out = []
        for p, q, sp, sq in zip(polygon, np.roll(polygon, -1, axis=0), s, np.roll(s, -1)):
            if sp <= 0.0:
                out.append(p)
            if (sp < 0.0 < sq) or (sq < 0.0 < sp):
                out.append(p + (q - p) * (sp / (sp - sq)))
        polygon = np.array(out).reshape(-1, 2)
    return polygon


def _project(wc, axes, up):
    """Bretl and Lall's iterative projection of the equilibrium polyhedron onto the CoM plane."""
    p_count = len(wc.points)
    # variables x = [c1, c2, f_1 .. f_P], forces in units of the weight m |g|
    a_eq = np.zeros((6, 2 + 3 * p_count))
    a_eq[:3, 2:] = np.tile(np.eye(3), p_count)
    centroid = wc.points.mean(axis=0)
    # moments about the contact centroid (conditioning): sum (p_i - o) x f_i + (c - o) x (-up) = 0
    a_eq[3:, 0] = np.cross(axes[0], -up)
    a_eq[3:, 1] = np.cross(axes[1], -up)
    a_eq[3:, 2:] = np.hstack(skew(wc.points - centroid))
    # (c - o) x (-up) = c1 e1 x (-up) + c2 e2 x (-up) - o x (-up): the constant goes right
    b_eq = np.concatenate([up, np.cross(centroid, -up)])
    c0 = axes @ centroid
    rows = wc.halfspaces.shape[1]
    a_ub = np.zeros((p_count * rows, 2 + 3 * p_count))
    for i in range(p_count):
        a_ub[i * rows:(i + 1) * rows, 2 + 3 * i:5 + 3 * i] = wc.halfspaces[i]
    b_ub = np.zeros(len(a_ub))
    bounds = [(c0[0] - _BOX, c0[0] + _BOX), (c0[1] - _BOX, c0[1] + _BOX)] + \
        [(None, None)] * (3 * p_count)
    cost = np.zeros(2 + 3 * p_count)
    queries = []   # (direction (2,), support value, point (2,))
    # imported here, not with the module: scipy.optimize and scipy.spatial cost ~25 MB in
    # every process that imports the core (the node's and the services' never call them)
    from scipy.optimize import linprog

    def support(d):
        cost[:2] = -d
        res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds,
                      method="highs", options=_LP_OPTIONS)
        if res.status == 2:
            return None
        if res.status != 0:
            raise RuntimeError(f"support polygon LP failed: {res.message}")
        queries.append((d, float(d @ res.x[:2]), res.x[:2].copy()))
        return res.x[:2].copy()

    def cached(d):
        for dq, value, _ in queries:
            if np.abs(dq - d).max() < 1e-12:
                return value
        return None

    angles = 2.0 * np.pi * np.arange(3) / 3.0
    points = []
    for a in angles:
        x = support(np.array([np.cos(a), np.sin(a)]))
        if x is None:
            return SupportPolygon(np.zeros((0, 2)), axes, True, "projection", len(queries) + 1)
        points.append(x)
    while len(queries) < _MAX_LPS:
        hull = convex_hull(np.array(points), tol=1e-14)
        if len(hull) == 1:
            break
        if len(hull) == 2:
            edges = [(hull[0], hull[1]), (hull[1], hull[0])]
        else:
            edges = list(zip(hull, np.roll(hull, -1, axis=0)))
        new = []
        for a, b in edges:
            e = b - a
            d = np.array([e[1], -e[0]]) / np.linalg.norm(e)
            value = cached(d)
            if value is None:
                x = support(d)
                value = d @ x
                if value - d @ a > _EDGE_TOL:
                    new.append(x)
        if not new:
            break
        points.extend(new)
    hull = convex_hull(np.array(points), tol=1e-14)
    bounded = bool((np.abs(hull - c0) < _BOX * (1.0 - 1e-9)).all())
    return SupportPolygon(hull, axes, bounded, "projection", len(queries))


# -- the per-tick support: hull of the active contacts' points ------------------------------
def normal_force(contact, world_H_link, world_R_expressed, force):
    """Force [N] along the contact's world normal of a force (3,) expressed in the axes
    ``world_R_expressed`` (3, 3); ``world_H_link`` (4, 4) is the contact link's pose."""
    return float((world_H_link[:3, :3] @ contact.normal) @ (world_R_expressed @ force))


@dataclass(frozen=True)
class GroundSupport:
    """The flat-ground support of some contacts (:func:`ground_support`), world frame.

    - ``contacts``: the Contact objects; ``names`` their names (e.g. the node's contact names).
    - ``polygon``: SupportPolygon of their points (None without a contact); ``points`` (m, 3)
      its vertices in the world [m], on the plane at ``height`` [m] along ``up``.
    - ``margin`` [m] (-inf without a contact), ``inside`` (margin >= 0), ``com_projection``
      (3,) [m]: the CoM projected along gravity onto that plane.
    """

    names: tuple
    contacts: tuple
    polygon: SupportPolygon
    points: np.ndarray
    height: float
    margin: float
    inside: bool
    com_projection: np.ndarray


def plane_points(vertices, axes, up, height):
    """World points (m, 3) of ground coordinates ``vertices`` (m, 2) on the plane at
    ``height`` [m] along the unit vector ``up`` (3,); ``axes`` (2, 3) as :func:`ground_axes`."""
    return vertices @ axes + height * up


def ground_support(contacts, world_H_links, com, gravity, names=None):
    """:class:`GroundSupport` of ``contacts`` (Contact objects) at ``world_H_links``
    ({link: world_H_link (4, 4)}) with the CoM ``com`` (3,) [m], world frame.

    The polygon is the convex hull of the points projected along gravity, on the plane
    through their mean height: for flat contacts exactly :func:`support_polygon`; for
    others (a foot on a step, a tilted sole) the flat-ground approximation, not the
    friction-limited equilibrium region. ``names`` default to the contacts' links.
    """
    contacts = tuple(contacts)
    axes = ground_axes(gravity)
    up = -np.asarray(gravity, dtype=float) / np.linalg.norm(gravity)
    names = tuple(c.link for c in contacts) if names is None else tuple(names)
    return hull_support(contacts, [world_H_links[c.link] for c in contacts],
                        np.asarray(com, dtype=float), axes, up, names)


def hull_support(contacts, poses, com, axes, up, names):
    """:func:`ground_support` with the contacts' poses as a list (4, 4) in ``contacts``
    order, the ground ``axes`` (2, 3) and ``up`` (3,) given (the per-tick path: no checks)."""
    if not contacts:
        return GroundSupport(names, (), None, np.zeros((0, 3)), 0.0, -np.inf, False,
                             com - (com @ up) * up)
    kernels = contact_kernels()
    if kernels is not None:
        support = _compiled_support(kernels, contacts, poses, com, axes, up, names)
        if support is not None:
            return support
    # as world_contacts: points @ R^T + o per contact, then the projection on the axes
    points = np.concatenate([c.points @ h[:3, :3].T + h[:3, 3] for c, h in zip(contacts, poses)])
    polygon = _hull_polygon(points, axes)
    height = float(np.mean(points @ up))
    margin = polygon.margin(com)
    return GroundSupport(names, contacts, polygon,
                         plane_points(polygon.vertices, axes, up, height), height, margin,
                         bool(margin >= 0.0), com + (height - com @ up) * up)


_NO_LINES = (np.zeros((0, 2)), np.zeros(0))     # SupportPolygon._lines of m < 3 vertices
_PACKED = {}        # ids of a tuple of contacts -> _PackedPoints (the objects kept alive)
_PACKED_MAX = 64


class _PackedPoints:
    """The points of ``contacts`` as :func:`.kernels.support_hull` takes them: ``points``
    (P, 3) in link axes, ``first`` (k + 1,) contact i's first row, ``layout`` of ``out``."""

    def __init__(self, kernels, contacts):
        self.contacts = contacts
        self.points = np.ascontiguousarray(np.concatenate([c.points for c in contacts]),
                                           dtype=np.float64)
        self.first = np.cumsum([0] + [len(c.points) for c in contacts]).astype(np.int64)
        self.layout = kernels.support_layout(len(self.points))


def _compiled_support(kernels, contacts, poses, com, axes, up, names):
    """:func:`hull_support` by :func:`.kernels.support_hull` (the same numbers to ~1e-15),
    or None for arguments of other types than the compiled ones (the NumPy path then)."""
    key = tuple(map(id, contacts))
    packed = _PACKED.get(key)
    if packed is None:
        if len(_PACKED) >= _PACKED_MAX:
            _PACKED.clear()
        packed = _PACKED[key] = _PackedPoints(kernels, tuple(contacts))
    lay = packed.layout
    out = np.empty(lay[-1])
    try:
        m = kernels.support_hull(packed.points, packed.first, np.array(poses, dtype=np.float64),
                                 com, axes, up, HULL_TOL, out)
    except TypeError:
        return None
    lines = None if m < 3 else (out[lay[1]:lay[1] + 2 * m].reshape(m, 2),
                                out[lay[2]:lay[2] + m])
    polygon = SupportPolygon(out[lay[0]:lay[0] + 2 * m].reshape(m, 2), axes, True, "hull", 0,
                             lines)
    margin = float(out[1])
    return GroundSupport(names, contacts, polygon, out[lay[3]:lay[3] + 3 * m].reshape(m, 3),
                         float(out[0]), margin, margin >= 0.0, out[2:5])
