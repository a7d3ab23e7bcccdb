"""Contact mechanics: support polygons, CoM equilibrium and equilibrium torques.

References are independent of the functions under test:

- hand-built scenes with known answers (a box on four points, a box on a slope);
- Klamp't (``klampt.robotsim.support_polygon`` / ``com_equilibrium``, its C++ polytope
  projection) with its own 8-edge friction pyramids, on scenes whose contact normals lie in
  the world x-z plane, where Klamp't's pyramid edges coincide with ours (one edge along the
  link x axis; checked by the equality of every half-plane). Klamp't's "fancy" API with
  user-given cone planes was not used: it returned forces with no moment balance;
- a brute-force grid of CoM positions, each tested by its own LP over the cone *edges*
  (generator form, ``scipy.optimize.linprog``), against the polygon (half-space form, from the
  wrench cone's faces or by iterative projection);
- ``scipy.spatial.ConvexHull`` for the monotone-chain hull;
- for ``equilibrium_torques``: the equations of motion from ``kd.rnea`` and from Pinocchio
  (test oracle) with the returned contact wrenches, and the same QP solved by SLSQP on
  point Jacobians assembled here.

Tolerances: 1e-12 for closed-form geometry, 1e-9 (m or relative) for LP-based polygons
(HiGHS run at 1e-10 feasibility tolerance), 1e-9 relative to max(1, |ref|) for the
equations of motion, 1e-7 N m for torques against SLSQP (ftol 1e-14). Grid and random points
within 1e-6 m of a boundary are not classified.
"""

import signal

import klampt.robotsim as klampt_robotsim
import numpy as np
import pytest
from scipy.optimize import linprog, minimize
from scipy.spatial import ConvexHull

from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.dynamics.contacts import (Contact, contact_poses, convex_hull, ground_axes,
                                           support_polygon, world_contacts)
from kin_dyn_ros.dynamics.equilibrium import com_equilibrium, equilibrium_torques
from oracles import (GRAVITY, PinocchioOracle, assert_close, core_representation, pose, rot_x,
                     rot_y, rot_z)

K = 8                      # facets of the linearised cones in every test
BOUNDARY = 1e-6            # [m] points this close to a boundary are not classified
BOX = np.array([[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.2, 0.1, 0.0], [0.0, 0.1, 0.0]])
SOLE = np.array([[0.05, 0.025, 0.0], [-0.05, 0.025, 0.0], [-0.05, -0.025, 0.0],
                 [0.05, -0.025, 0.0]])    # 0.1 m x 0.05 m, in the sole frame


# ------------------------------------------------------------------------ helpers


def cone_edges(contact, world_H_link):
    """The K edges (K, 3) of the contact's inscribed pyramid, world frame: n + mu (cos t1 +
    sin t2) at 2 pi j / K, t1 the link x axis projected on the contact plane."""
    r = world_H_link[:3, :3]
    n = contact.normal
    x = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    t1 = x - (x @ n) * n
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    th = 2 * np.pi * np.arange(K) / K
    edges = n + contact.friction * (np.cos(th)[:, None] * t1 + np.sin(th)[:, None] * t2)
    return edges @ r.T


def cone_planes(contact, world_H_link):
    """(K, 3) outward normals a of the planes through consecutive edges: a . f <= 0."""
    u = cone_edges(contact, world_H_link)
    n = world_H_link[:3, :3] @ contact.normal
    a = np.cross(u, np.roll(u, -1, axis=0))
    a *= -np.sign(a @ n)[:, None]
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def world_points(contacts, poses):
    return [c.points @ poses[c.link][:3, :3].T + poses[c.link][:3, 3] for c in contacts]


def brute_force_equilibrium(contacts, poses, com):
    """CoM equilibrium by an LP over the cone edges: lambda >= 0 with
    sum lambda u = -g_hat and sum p x (lambda u) = com x (-g_hat) (gravity along -z)."""
    cols = []
    for c, pts in zip(contacts, world_points(contacts, poses)):
        u = cone_edges(c, poses[c.link])
        for p in pts:
            for e in u:
                cols.append(np.concatenate([e, np.cross(p, e)]))
    a_eq = np.array(cols).T
    up = np.array([0.0, 0.0, 1.0])
    b_eq = np.concatenate([up, np.cross(com, up)])
    res = linprog(np.zeros(a_eq.shape[1]), A_eq=a_eq, b_eq=b_eq, bounds=(0, None),
                  method="highs")
    assert res.status in (0, 2), res.message
    return res.status == 0


def klampt_contacts(contacts, poses):
    """Klamp't's contact list: [x, y, z, nx, ny, nz, mu] per point, world frame."""
    out = []
    for c, pts in zip(contacts, world_points(contacts, poses)):
        n = poses[c.link][:3, :3] @ c.normal
        out += [[*p, *n, c.friction] for p in pts]
    return out


@pytest.fixture
def klampt_k_edges():
    """Klamp't's friction pyramids with K edges for the test (its global default is 4), with
    Python's SIGINT handler in place.

    Each GLPK solve of Klamp't installs a SIGINT handler through KrisLibrary's SignalHandler
    and removes it after. When SIGINT is ignored (SIG_IGN, as in a job started in the
    background by a non-interactive shell, e.g. a CI runner or nohup), installing it is
    skipped but removing it still pops an empty std::list: heap corruption, then SIGABRT
    ("munmap_chunk(): invalid pointer"), seen in CI."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    klampt_robotsim.set_friction_cone_approximation_edges(K)
    try:
        yield
    finally:
        klampt_robotsim.set_friction_cone_approximation_edges(4)
        signal.signal(signal.SIGINT, previous)


def klampt_margin(halfplanes, x):
    """min over Klamp't's half-planes (ax, ay, b) of (b - a.x) / |a|: the distance to the
    boundary for x inside, negative outside (a lower bound of the distance there)."""
    hp = np.asarray(halfplanes, dtype=float)
    norm = np.linalg.norm(hp[:, :2], axis=1)
    return float(np.min((hp[:, 2] - hp[:, :2] @ x) / norm))


def transform_scene(poses, yaw, shift):
    """Rotate the scene by ``yaw`` about the world z axis, then translate by ``shift``."""
    t = pose(rot_z(yaw), shift)
    return {link: t @ h for link, h in poses.items()}, t


def klampt_scene():
    """Steps 0.3 m apart, the upper box pitched by 0.2 rad about y, friction limited."""
    contacts = [Contact("left", BOX, [0, 0, 1], 0.5), Contact("right", BOX, [0, 0, 1], 0.6)]
    poses = {"left": pose(), "right": pose(rot_y(0.2), (0.5, 0.05, 0.3))}
    return contacts, poses


def stairs_scene():
    """Two boxes on steps 0.3 m apart in height, the upper one on a 0.2 rad slope, friction
    limited: a polygon that is neither the hull of the points nor friction-independent."""
    contacts = [Contact("left", BOX, [0, 0, 1], 0.5), Contact("right", BOX, [0, 0, 1], 0.6)]
    poses = {"left": pose(rot_z(0.1)), "right": pose(rot_x(0.2), (0.5, 0.05, 0.3))}
    return contacts, poses


# ------------------------------------------------------------------------ contact model


def test_contact_validation_and_world_points():
    c = Contact("foot", [0.1, 0.0, 0.0], [0, 0, 2.0], 0.4)
    assert c.points.shape == (1, 3)
    np.testing.assert_allclose(c.normal, [0, 0, 1.0], atol=1e-15)
    with pytest.raises(ValueError, match=r"expected points with shape \(k, 3\)"):
        Contact("foot", np.zeros((4, 2)), [0, 0, 1], 0.5)
    with pytest.raises(ValueError, match="normal of contact on 'foot' is zero"):
        Contact("foot", SOLE, [0, 0, 0], 0.5)
    with pytest.raises(ValueError, match="expected friction >= 0"):
        Contact("foot", SOLE, [0, 0, 1], -0.1)
    with pytest.raises(ValueError, match=r"expected normal with shape \(3,\), got \(2,\)"):
        Contact("foot", SOLE, [0, 1], 0.5)
    with pytest.raises(ValueError, match="no pose for contact link 'foot'"):
        support_polygon([Contact("foot", SOLE, [0, 0, 1], 0.5)], {"hand": np.eye(4)})
    with pytest.raises(ValueError, match="read-only"):
        c.points[0, 0] = 1.0
    h = pose(rot_y(0.3) @ rot_z(1.0), (1.0, 2.0, 3.0))
    cs = Contact("foot", SOLE, [0, 0, 1], 0.5)
    np.testing.assert_allclose(cs.world_points(h), SOLE @ h[:3, :3].T + h[:3, 3], atol=1e-15)
    np.testing.assert_allclose(cs.world_normal(h), h[:3, 2], atol=1e-15)
    # the stacked half-spaces: every cone edge on the boundary (a . u <= 0, = 0 on 2 facets)
    wc = world_contacts([cs], {"foot": h}, K)
    slack = wc.halfspaces[0, :K] @ cone_edges(cs, h).T
    assert (slack <= 1e-12).all()
    assert ((np.abs(slack) <= 1e-12).sum(axis=0) == 2).all()


def test_convex_hull_against_scipy(rng):
    for _ in range(5):
        pts = rng.normal(size=(40, 2))
        ours = convex_hull(pts)
        ref = pts[ConvexHull(pts).vertices]      # counter-clockwise too
        start = int(np.argmin(np.abs(ref - ours[0]).sum(axis=1)))
        np.testing.assert_allclose(ours, np.roll(ref, -start, axis=0), atol=1e-15)
    np.testing.assert_allclose(convex_hull([[1.0, 2.0]] * 3), [[1.0, 2.0]])
    seg = convex_hull([[0, 0], [1, 1], [2, 2], [0.5, 0.5]])
    np.testing.assert_allclose(seg, [[0, 0], [2, 2]])


# ------------------------------------------------------------------------ support polygon


@pytest.mark.parametrize("method", ["hull", "cone", "projection"])
def test_box_polygon_is_the_rectangle(method):
    shift = np.array([0.3, -0.2, 0.05])
    contacts = [Contact("box", BOX, [0, 0, 1], 0.5)]
    poly = support_polygon(contacts, {"box": pose(np.eye(3), shift)}, GRAVITY, K, method)
    rect = BOX[:, :2] + shift[:2]
    tol = 1e-12 if method == "hull" else 1e-9
    start = int(np.argmin(np.abs(poly.vertices - rect[0]).sum(axis=1)))
    np.testing.assert_allclose(np.roll(poly.vertices, -start, axis=0), rect, atol=tol)
    assert abs(poly.area - 0.02) <= tol
    centre = np.array([0.1, 0.05, 0.7]) + shift
    assert abs(poly.margin(centre) - 0.05) <= tol          # half the shorter side
    assert abs(poly.margin(centre + [0.25, 0, 0]) + 0.15) <= tol
    assert abs(poly.margin(centre + [0.2, 0.1, 0]) + np.hypot(0.1, 0.05)) <= tol  # corner
    assert poly.bounded and poly.method == method


def test_com_outside_the_box_is_not_in_equilibrium():
    contacts = [Contact("box", BOX, [0, 0, 1], 0.5)]
    mass = 3.0
    inside = com_equilibrium(contacts, [0.1, 0.05, 0.4], mass, GRAVITY, n_facets=K)
    assert inside.feasible and inside.message == ""
    assert abs(inside.margin - 0.05) <= 1e-12
    f = np.concatenate(inside.forces)
    weight = mass * 9.80665
    np.testing.assert_allclose(f.sum(axis=0), [0, 0, weight], atol=1e-9 * weight)
    moment = np.cross(BOX - [0.1, 0.05, 0.4], f).sum(axis=0)
    np.testing.assert_allclose(moment, 0.0, atol=1e-9 * weight)
    outside = com_equilibrium(contacts, [0.25, 0.05, 0.4], mass, GRAVITY, n_facets=K)
    assert not outside.feasible and outside.forces is None
    assert abs(outside.margin + 0.05) <= 1e-12
    assert "not in equilibrium" in outside.message


@pytest.mark.parametrize("slope", [0.2, 0.5])
def test_friction_too_low_for_a_slope(slope):
    """A box on a slope (link frame pitched by ``slope``, x along the slope, so a cone edge
    points up the slope): infeasible for mu < tan(slope), feasible for mu > tan(slope)."""
    h = {"box": pose(rot_y(slope))}
    com = h["box"][:3, :3] @ [0.1, 0.05, 0.0] + [0, 0, 0.3]   # above the box centre
    for mu, ok in [(0.99 * np.tan(slope), False), (1.01 * np.tan(slope), True)]:
        contacts = [Contact("box", BOX, [0, 0, 1], mu)]
        res = com_equilibrium(contacts, com, 2.0, GRAVITY, h, K)
        assert res.feasible is ok
        assert brute_force_equilibrium(contacts, h, com) is ok
        poly = res.polygon
        if ok:    # the projected rectangle: 0.2 cos(slope) x 0.1
            assert abs(poly.area - 0.02 * np.cos(slope)) <= 1e-9
            assert res.margin > 0
        else:
            assert len(poly.vertices) == 0 and poly.margin(com) == -np.inf


def test_stairs_polygon_against_brute_force_grid():
    contacts, poses = stairs_scene()
    poly = support_polygon(contacts, poses, GRAVITY, K)
    assert poly.method == "cone" and poly.bounded
    hull = convex_hull(np.concatenate(world_points(contacts, poses))[:, :2])
    assert poly.area > ConvexHull(hull).volume + 1e-3   # friction widens it beyond the hull
    xs, ys = np.meshgrid(np.linspace(-0.15, 0.85, 21), np.linspace(-0.15, 0.3, 11))
    checked = 0
    for x, y in zip(xs.ravel(), ys.ravel()):
        com = np.array([x, y, 0.8])
        margin = poly.margin(com)
        if abs(margin) < BOUNDARY:
            continue
        ref = brute_force_equilibrium(contacts, poses, com)
        assert (margin > 0) is ref, (com, margin)
        assert com_equilibrium(contacts, com, 1.0, GRAVITY, poses, K, poly).feasible is ref
        checked += 1
    assert checked > 200


def random_support(rng):
    """Two or three boxes or soles at random heights, tilts up to 0.4 rad and frictions
    0.3-1.0, within 1 m: a non-flat support."""
    contacts, poses = [], {}
    for i in range(rng.integers(2, 4)):
        tilt = rot_x(rng.uniform(-0.4, 0.4)) @ rot_y(rng.uniform(-0.4, 0.4))
        poses[f"c{i}"] = pose(rot_z(rng.uniform(-np.pi, np.pi)) @ tilt,
                              rng.uniform([-0.5, -0.5, 0.0], [0.5, 0.5, 0.4]))
        contacts.append(Contact(f"c{i}", BOX if i % 2 else SOLE, [0, 0, 1],
                                rng.uniform(0.3, 1.0)))
    return contacts, poses


def test_cone_faces_equal_the_projection_and_brute_force(rng):
    """On random non-flat supports the wrench cone's polygon and the iterative projection's
    are the same set (every vertex of each on the other's boundary, to the LP tolerance), and
    CoMs classified by the brute-force LP over the cone edges agree with it."""
    checked = 0
    for _ in range(12):
        contacts, poses = random_support(rng)
        cone = support_polygon(contacts, poses, GRAVITY, K)
        lps = support_polygon(contacts, poses, GRAVITY, K, method="projection")
        assert cone.method == "cone" and cone.n_lps == 0 and cone.bounded is lps.bounded
        assert len(cone.vertices) == 0 if len(lps.vertices) == 0 else len(cone.vertices) >= 3
        for a, b in ((cone, lps), (lps, cone)):
            for v in a.vertices:
                assert abs(b.margin(v)) <= 1e-9, (v, b.margin(v))
        assert abs(cone.area - lps.area) <= 1e-9
        for xy in rng.uniform(-0.8, 0.8, size=(10, 2)):
            com = np.array([*xy, 1.0])
            if abs(cone.margin(com)) > BOUNDARY:
                assert (cone.margin(com) > 0) is brute_force_equilibrium(contacts, poses, com)
                checked += 1
    assert checked >= 100


def test_cone_needs_a_six_dimensional_pointed_cone():
    """A single point (3-D wrench cone) and two hands squeezing between walls (no interior
    direction: opposite forces cancel) take the iterative projection; method='cone' says
    why it cannot."""
    point = ([Contact("p", [[0.0, 0.0, 0.0]], [0, 0, 1], 0.5)], {"p": pose(rot_y(0.1))})
    walls = ([Contact("l", BOX, [0, 0, 1], 0.8), Contact("r", BOX, [0, 0, 1], 0.8)],
             {"l": pose(rot_y(np.pi / 2), (-0.5, 0, 1)), "r": pose(rot_y(-np.pi / 2), (0.5, 0, 1))})
    for contacts, poses in (point, walls):
        assert support_polygon(contacts, poses, GRAVITY, K).method == "projection"
        with pytest.raises(ValueError, match="6-D, pointed contact wrench cone"):
            support_polygon(contacts, poses, GRAVITY, K, method="cone")


def test_polygons_against_klampt(rng, klampt_k_edges):
    """Flat turned box and steps: inside distances equal Klamp't's half-plane slack;
    inside/outside agree; every edge of ours is one of Klamp't's half-planes."""
    flat = ([Contact("box", BOX, [0, 0, 1], 0.5)], {"box": pose(rot_z(0.4), (0.1, 0.2, 0.0))})
    for contacts, poses in [flat, klampt_scene()]:
        ref = klampt_robotsim.support_polygon(klampt_contacts(contacts, poses))
        poly = support_polygon(contacts, poses, GRAVITY, K)
        hp = np.asarray(ref)
        norm = np.linalg.norm(hp[:, :2], axis=1)
        for a, b in zip(*poly.halfplanes):
            gap = np.abs(hp[:, :2] / norm[:, None] - a).sum(axis=1) + np.abs(hp[:, 2] / norm - b)
            assert gap.min() <= 1e-9, (a, b)
        lo, hi = poly.vertices.min(axis=0) - 0.1, poly.vertices.max(axis=0) + 0.1
        for x in rng.uniform(lo, hi, size=(300, 2)):
            ours, theirs = poly.margin(x), klampt_margin(ref, x)
            if abs(ours) < BOUNDARY:
                continue
            assert (ours > 0) is (theirs > 0), x
            if ours > 0:
                assert abs(ours - theirs) <= 1e-9, (x, ours, theirs)


def test_com_equilibrium_against_klampt(rng, klampt_k_edges):
    contacts, poses = klampt_scene()
    kl = klampt_contacts(contacts, poses)
    poly = support_polygon(contacts, poses, GRAVITY, K)
    mass = 5.0
    n_in = n_out = 0
    for xy in rng.uniform([-0.1, -0.1], [0.8, 0.25], size=(60, 2)):
        com = np.array([*xy, 0.7])
        res = com_equilibrium(contacts, com, mass, GRAVITY, poses, K, poly)
        if abs(res.margin) < BOUNDARY:
            continue
        ref = klampt_robotsim.com_equilibrium(kl, [0, 0, -9.80665 * mass], list(com))
        assert res.feasible is (ref is not None), com
        if res.feasible:
            n_in += 1
            f = np.concatenate(res.forces)
            assert_close(f.sum(axis=0), [0, 0, 9.80665 * mass], "total force", 1e-9)
        else:
            n_out += 1
    assert n_in > 10 and n_out > 10


@pytest.mark.parametrize("scene", ["flat", "stairs"])
def test_polygon_invariant_to_yaw_and_translation(scene, rng):
    if scene == "flat":
        contacts = [Contact("l", SOLE, [0, 0, 1], 0.5), Contact("r", SOLE, [0, 0, 1], 0.5)]
        poses = {"l": pose(rot_z(0.2), (0.0, 0.1, 0.0)), "r": pose(rot_z(-0.1), (0.05, -0.1, 0))}
        tol = 1e-12
    else:
        contacts, poses = stairs_scene()
        tol = 1e-9
    poly = support_polygon(contacts, poses, GRAVITY, K)
    for _ in range(2):
        yaw, shift = rng.uniform(-np.pi, np.pi), rng.uniform(-2, 2, size=3)
        moved, t = transform_scene(poses, yaw, shift)
        poly2 = support_polygon(contacts, moved, GRAVITY, K)
        expected = poly.vertices @ rot_z(yaw)[:2, :2].T + shift[:2]
        assert len(poly2.vertices) == len(expected)
        start = int(np.argmin(np.abs(poly2.vertices - expected[0]).sum(axis=1)))
        np.testing.assert_allclose(np.roll(poly2.vertices, -start, axis=0), expected, atol=tol)
        for p in rng.uniform(-0.3, 0.6, size=(20, 3)):
            assert abs(poly2.margin(t[:3, :3] @ p + shift) - poly.margin(p)) <= tol


def test_general_gravity_direction():
    """Gravity along -x, contacts on a wall x = 0 with normals +x: the ground plane is
    y-z; the polygon is the box turned into that plane."""
    g = np.array([-9.81, 0.0, 0.0])
    axes = ground_axes(g)
    np.testing.assert_allclose(np.cross(axes[0], axes[1]), [1.0, 0, 0], atol=1e-15)
    h = {"box": pose(rot_y(np.pi / 2))}            # box z axis -> world +x
    poly = support_polygon([Contact("box", BOX, [0, 0, 1], 0.3)], h, g, K)
    assert poly.method == "hull" and abs(poly.area - 0.02) <= 1e-12
    centre = h["box"][:3, :3] @ [0.1, 0.05, 0.0] + [0.4, 0, 0]
    assert abs(poly.margin(centre) - 0.05) <= 1e-12


def test_degenerate_supports():
    line = [Contact("a", [[0, 0, 0], [1, 0, 0]], [0, 0, 1], 0.0)]
    poly = support_polygon(line, gravity=GRAVITY)
    assert len(poly.vertices) == 2
    assert abs(poly.margin([0.5, 0.0, 1.0])) <= 1e-15
    assert abs(poly.margin([0.5, 0.2, 1.0]) + 0.2) <= 1e-15
    res = com_equilibrium(line, [0.5, 0.0, 1.0], 1.0, GRAVITY)
    assert res.feasible
    assert not com_equilibrium(line, [0.5, 0.2, 1.0], 1.0, GRAVITY).feasible
    # frictionless points on a slope cannot hold anything
    slope = support_polygon([Contact("b", BOX, [0, 0, 1], 0.0)], {"b": pose(rot_y(0.1))},
                            GRAVITY, K)
    assert len(slope.vertices) == 0 and slope.n_lps >= 1


# ------------------------------------------------------------------------ iCub


def icub_posture(kd, crouch):
    """Joints (zeros, or knees bent with flat feet) and the base pose that puts l_sole on
    z = 0 with l_sole's orientation unchanged from the zero posture (soles level)."""
    s = np.zeros(kd.NDoF)
    if crouch:
        names = kd.joints_name_list
        for side in "lr":
            s[names.index(f"{side}_hip_pitch")] = 0.4
            s[names.index(f"{side}_knee")] = -0.8
            s[names.index(f"{side}_ankle_pitch")] = -0.4
    b_H_sole = kd.forward_kinematics("l_sole", np.eye(4), s)
    target = pose(rot_z(np.pi), (0.0, 0.0, 0.0))
    return target @ np.linalg.inv(b_H_sole), s


@pytest.fixture(scope="module")
def icub_kd(icub_urdf):
    return KinDynComputations(icub_urdf)


@pytest.fixture(scope="module")
def icub_pinocchio(icub_urdf, icub_joints):
    return PinocchioOracle(icub_urdf, icub_joints, None, GRAVITY)


def feet(mu=0.5):
    return [Contact("l_sole", SOLE, [0, 0, 1], mu), Contact("r_sole", SOLE, [0, 0, 1], mu)]


def test_icub_soles_flat_and_support_polygon(icub_kd):
    kd = icub_kd
    w_H_b, s = icub_posture(kd, crouch=False)
    poses = contact_poses(kd, w_H_b, s, feet())
    for h in poses.values():
        assert abs(h[2, 3]) <= 1e-12 and h[2, 2] >= 1 - 1e-12
    poly = support_polygon(feet(), poses, kd.gravity, K)
    assert poly.method == "hull"
    ref = support_polygon(feet(), poses, kd.gravity, K, method="projection")
    assert len(ref.vertices) == len(poly.vertices)
    com = kd.CoM_position(w_H_b, s)
    assert abs(poly.margin(com) - ref.margin(com)) <= 1e-9
    res = com_equilibrium(feet(), com, kd.get_total_mass(), kd.gravity, poses, K, poly)
    assert res.feasible and res.margin > 0.03


@pytest.mark.parametrize("crouch", [False, True])
def test_icub_equilibrium_torques_satisfy_equations_of_motion(icub_kd, icub_pinocchio, rep,
                                                              crouch):
    """``rep`` runs over the three representations (conftest)."""
    kd = icub_kd
    kd.set_frame_velocity_representation(core_representation(rep))
    try:
        w_H_b, s = icub_posture(kd, crouch)
        res = equilibrium_torques(kd, w_H_b, s, feet(), n_facets=K)
    finally:
        kd.set_frame_velocity_representation("MIXED")
    assert res.feasible, res.message
    n = kd.NDoF
    zero = np.zeros(n)
    gen = np.concatenate([np.zeros(6), res.tau])
    kd.set_frame_velocity_representation(core_representation(rep))
    try:
        eom = kd.rnea(w_H_b, s, np.zeros(6), zero, np.zeros(6), zero,
                      external_wrenches=res.wrenches)
    finally:
        kd.set_frame_velocity_representation("MIXED")
    assert_close(eom, gen, "kd.rnea with the contact wrenches", 1e-9)
    ref = icub_pinocchio.rnea(rep, w_H_b, s, np.zeros(6), zero, np.zeros(6), zero,
                              external_wrenches=res.wrenches)
    assert_close(ref, gen, "Pinocchio rnea with the contact wrenches", 1e-9)
    # physics: the feet carry the weight, forces inside the cones and limits respected
    f = np.concatenate(res.forces)
    weight = kd.get_total_mass() * 9.80665
    assert_close(f.sum(axis=0), [0, 0, weight], "total contact force", 1e-9)
    assert res.margin >= 0 and res.torque_margin >= 0 and res.residual <= 1e-9 * weight
    # contact-consistent gravity compensation differs from the fixed-base gravity torques on
    # the legs, and equals them where no contact force flows (torso, arms, head)
    gravity = kd.gravity_term(w_H_b, s)[6:]
    legs = np.array([j.split("_")[1] in ("hip", "knee", "ankle") for j in kd.joints_name_list])
    assert np.abs(res.tau - gravity)[legs].max() > (5.0 if crouch else 0.5)
    assert_close(res.tau[~legs], gravity[~legs], "torques above the pelvis", 1e-9)


def slsqp_reference(kd, w_H_b, s, contacts, r, limits=None):
    """The same QP (min ||tau||^2 + 1e-6 ||f||^2, base rows, pyramids, limits) by SLSQP, on
    point Jacobians assembled here (MIXED: v_p = v_L + w x (p - o_L))."""
    rows, planes = [], []
    for c in contacts:
        h = kd.forward_kinematics(c.link, w_H_b, s)
        jac = kd.jacobian(c.link, w_H_b, s)
        for p in c.points:
            d = h[:3, :3] @ p
            rows.append(jac[:3] - np.cross(d, jac[3:].T).T)
            planes.append(cone_planes(c, h))
    jac = np.vstack(rows)
    cone = np.zeros((K * len(planes), jac.shape[0]))
    for i, a in enumerate(planes):
        cone[K * i:K * i + K, 3 * i:3 * i + 3] = a

    def tau(f):
        return r[6:] - jac[:, 6:].T @ f

    cons = [{"type": "eq", "fun": lambda f: jac[:, :6].T @ f - r[:6],
             "jac": lambda f: jac[:, :6].T},
            {"type": "ineq", "fun": lambda f: -cone @ f, "jac": lambda f: -cone}]
    if limits is not None:
        cons.append({"type": "ineq", "fun": lambda f: limits - np.abs(tau(f))})
    f0 = np.tile([0, 0, kd.get_total_mass() * 9.80665 / len(planes)], len(planes))
    out = minimize(lambda f: tau(f) @ tau(f) + 1e-6 * f @ f, f0,
                   jac=lambda f: -2 * jac[:, 6:] @ tau(f) + 2e-6 * f,
                   constraints=cons, method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    assert out.success, out.message
    return tau(out.x), out.x


def test_icub_equilibrium_torques_against_slsqp(icub_kd):
    kd = icub_kd
    w_H_b, s = icub_posture(kd, crouch=True)
    r = kd.gravity_term(w_H_b, s)
    res = equilibrium_torques(kd, w_H_b, s, feet(), n_facets=K)
    tau, f = slsqp_reference(kd, w_H_b, s, feet(), r)
    np.testing.assert_allclose(res.tau, tau, atol=1e-7)
    np.testing.assert_allclose(np.concatenate(res.forces).ravel(), f, atol=1e-5)
    # an active torque limit on the left knee: feasible, the limit reached, same optimum
    names = kd.joints_name_list
    limits = np.full(kd.NDoF, np.inf)
    k = names.index("l_knee")
    limits[k] = 0.95 * abs(res.tau[k])
    lim = equilibrium_torques(kd, w_H_b, s, feet(), n_facets=K, torque_limits=limits)
    assert lim.feasible, lim.message
    assert abs(abs(lim.tau[k]) - limits[k]) <= 1e-9 and abs(lim.torque_margin) <= 1e-9
    ref = np.where(np.isfinite(limits), limits, 1e9)
    tau, _ = slsqp_reference(kd, w_H_b, s, feet(), r, ref)
    np.testing.assert_allclose(lim.tau, tau, atol=1e-6)


def test_icub_equilibrium_torques_in_motion(icub_kd, rng, rep):
    """Velocities and accelerations in the active representation ``rep`` (conftest)."""
    kd = icub_kd
    w_H_b, s = icub_posture(kd, crouch=True)
    n = kd.NDoF
    v, sd, acc = 0.1 * rng.normal(size=6), 0.1 * rng.normal(size=n), 0.1 * rng.normal(size=6 + n)
    kd.set_frame_velocity_representation(core_representation(rep))
    try:
        res = equilibrium_torques(kd, w_H_b, s, feet(), v, sd, acc, n_facets=K)
        eom = kd.rnea(w_H_b, s, v, sd, acc[:6], acc[6:], external_wrenches=res.wrenches)
    finally:
        kd.set_frame_velocity_representation("MIXED")
    assert res.feasible, res.message
    assert_close(eom, np.concatenate([np.zeros(6), res.tau]), "rnea in motion", 1e-9)


def test_icub_equilibrium_torques_invariant_to_yaw_and_translation(icub_kd, rng):
    kd = icub_kd
    w_H_b, s = icub_posture(kd, crouch=True)
    # static: turning and shifting the whole scene about the vertical changes nothing
    static = equilibrium_torques(kd, w_H_b, s, feet(), n_facets=K)
    _, t = transform_scene({"b": w_H_b}, rng.uniform(-np.pi, np.pi), rng.uniform(-1, 1, 3))
    moved = equilibrium_torques(kd, t @ w_H_b, s, feet(), n_facets=K)
    assert_close(moved.tau, static.tau, "torques of the moved scene", 1e-9)
    for a, b in zip(moved.forces, static.forces):
        assert_close(a, b @ t[:3, :3].T, "forces of the moved scene", 1e-9)


def test_icub_infeasible_problems_report_instead_of_raising(icub_kd):
    kd = icub_kd
    w_H_b, s = icub_posture(kd, crouch=True)
    # one point cannot hold the robot's moment about it
    point = [Contact("l_sole", [0.0, 0.0, 0.0], [0, 0, 1], 0.5)]
    res = equilibrium_torques(kd, w_H_b, s, point, n_facets=K)
    assert not res.feasible and res.tau is None and "single point" in res.message
    # the feet on ice with their normals horizontal (a wall): nothing holds the weight
    wall = [Contact(c.link, c.points, [1, 0, 0], 0.1) for c in feet()]
    res = equilibrium_torques(kd, w_H_b, s, wall, n_facets=K)
    assert not res.feasible and res.forces is None and "friction cones" in res.message
    # torque limits too low: the unconstrained solution is returned, flagged
    limits = np.full(kd.NDoF, 1.0)
    res = equilibrium_torques(kd, w_H_b, s, feet(), n_facets=K, torque_limits=limits)
    assert not res.feasible and res.torque_margin < 0 and "limits" in res.message
    assert res.tau is not None and "knee" in res.message
    # the URDF limits (37-55 N m on the legs) are enough
    assert equilibrium_torques(kd, w_H_b, s, feet(), n_facets=K).torque_margin > 0
