"""Balance quantities: contact CoPs, ZMP, DCM, capture point, ground plane and margins.

References are independent of the functions under test:

- hand-built wrenches whose CoP is known by construction (a force applied at a point, a
  moment about the normal, a tangential moment with CoP offset ``n x tau / fn``);
- the CoP's defining property (no tangential moment about it) solved as a least-squares
  problem over the plane's coordinates with ``numpy.linalg.lstsq``;
- rigid motions of the whole scene (poses, wrenches moved with
  :func:`~kin_dyn_ros.dynamics.kinematics.transform_wrench`, CoM, velocity, gravity);
- iCub (iCubGazeboV2_5, sole geometry of config/icub.yaml) standing still: the contact
  wrenches are Pinocchio's inverse dynamics at rest (test oracle, its CoM too), split at
  random between the feet; the ZMP must then be the CoM projected along gravity on the
  ground plane;
- closed forms computed here: ``omega = sqrt(g / h)``, the plane of points built on a known
  plane, margins of a square.

Tolerances: 1e-12 (relative to max(1, |ref|), :func:`oracles.assert_close`) for closed-form
geometry and rigid-motion invariance, 1e-9 for the iCub identities (the wrenches come from a
second library's RNEA over 30+ bodies).
"""

import math
import pathlib

import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

import kin_dyn_ros.dynamics.balance as balance_module
from kin_dyn_ros.dynamics.balance import (COPLANAR_TOL, Balance, Plane, balance,
                                          centre_of_pressure, divergent_component,
                                          ground_plane, sole_plane, world_wrench)
from kin_dyn_ros.dynamics.contacts import Contact, SupportPolygon, ground_axes, ground_support
from kin_dyn_ros.dynamics.kinematics import transform_wrench
from oracles import GRAVITY, PinocchioOracle, assert_close, pose, rot_x, rot_y, rot_z

TIGHT = 1e-12
ICUB = 1e-9
UP = np.array([0.0, 0.0, 1.0])
G = float(np.linalg.norm(GRAVITY))
SOLE = np.array([[0.08, 0.035, 0.0], [-0.05, 0.035, 0.0], [-0.05, -0.03, 0.0],
                 [0.08, -0.03, 0.0]])          # a 0.13 m x 0.065 m sole, link frame
REPO = pathlib.Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------ helpers


def random_rotation(rng):
    return Rotation.random(random_state=rng).as_matrix()


def wrench_at(force, point, moment=(0.0, 0.0, 0.0)):
    """[f; tau] about the world origin of ``force`` applied at ``point`` plus a free
    ``moment``."""
    force = np.asarray(force, dtype=float)
    return np.concatenate([force, np.cross(point, force) + np.asarray(moment, dtype=float)])


def tangent_basis(n):
    """Two unit vectors t1, t2 with (t1, t2, n) orthonormal, built here (not the core's)."""
    a = np.array([1.0, 0, 0]) if abs(n[0]) < 0.8 else np.array([0, 1.0, 0])
    t1 = a - (a @ n) * n
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def random_plane(rng):
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    return Plane(rng.uniform(-1.0, 1.0, size=3), n)


def assert_same_plane(ours, ref, what, tol=TIGHT):
    """Same normal, and each plane's point on the other plane."""
    assert_close(ours.normal, ref.normal, f"{what} normal", tol)
    assert abs(ref.normal @ (ours.point - ref.point)) <= tol * max(1.0, np.abs(ref.point).max()), \
        f"{what}: points {ours.point} and {ref.point} not on one plane"


def projection_along(point, plane, up):
    """``point`` moved along ``up`` onto ``plane`` (closed form, here)."""
    t = plane.normal @ (point - plane.point) / (plane.normal @ up)
    return point - t * up


def sole_wrench(rng, contact, world_H_link, fn):
    """A random wrench on a contact: normal force ``fn`` [N] plus some tangential force at a
    random point of the sole, a moment about the normal and a small tangential moment."""
    n = world_H_link[:3, :3] @ contact.normal
    t1, t2 = tangent_basis(n)
    q = world_H_link[:3, :3] @ (contact.centre + [*rng.uniform(-0.03, 0.03, 2), 0.0]) \
        + world_H_link[:3, 3]
    f = fn * n + rng.uniform(-0.2, 0.2) * fn * t1 + rng.uniform(-0.2, 0.2) * fn * t2
    moment = rng.uniform(-2.0, 2.0) * n + rng.uniform(-1.0, 1.0) * t1
    return wrench_at(f, q, moment)


def feet(points=SOLE):
    return [Contact("l_sole", points, [0, 0, 1], 0.6), Contact("r_sole", points, [0, 0, 1], 0.6)]


# Scenes of two flat soles: name -> (left pose, right pose), gravity along -z.
SCENES = {
    "coplanar": (pose(rot_z(0.1), (0.0, 0.1, 0.0)), pose(rot_z(-0.2), (0.05, -0.1, 0.0))),
    "slope": (pose(rot_x(0.3), rot_x(0.3) @ [0.0, 0.1, 0.0]),
              pose(rot_x(0.3) @ rot_z(0.4), rot_x(0.3) @ [0.05, -0.1, 0.0])),
    "step": (pose(rot_z(0.1), (0.0, 0.1, 0.12)), pose(np.eye(3), (0.05, -0.1, 0.0))),
    "tilted_foot": (pose(rot_y(0.25) @ rot_x(0.1), (0.0, 0.1, 0.04)),
                    pose(np.eye(3), (0.05, -0.1, 0.0))),
}


def scene(name, rng):
    contacts = feet()
    poses = list(SCENES[name])
    wrenches = [sole_wrench(rng, c, h, fn) for c, h, fn in zip(contacts, poses, (120.0, 210.0))]
    return contacts, poses, wrenches


# ------------------------------------------------------------------------ CoP of one wrench


def test_cop_of_a_force_at_a_point_of_the_plane(rng):
    for _ in range(20):
        plane = random_plane(rng)
        t1, t2 = tangent_basis(plane.normal)
        q = plane.point + rng.uniform(-0.5, 0.5) * t1 + rng.uniform(-0.5, 0.5) * t2
        f = rng.uniform(5.0, 500.0) * plane.normal + rng.normal(scale=50.0, size=3)
        if f @ plane.normal <= 1.0:
            continue
        cop = centre_of_pressure(wrench_at(f, q), plane)
        assert_close(cop.point, q, "CoP of a force at a point", TIGHT)
        assert cop.reason == ""
        assert cop.normal_force == pytest.approx(f @ plane.normal, rel=TIGHT)


def test_cop_of_a_moment_about_the_normal(rng):
    """A normal force through the plane point plus a moment along n (free torque about the
    normal, e.g. a foot's yaw friction): the CoP stays at the plane point."""
    for _ in range(10):
        plane = random_plane(rng)
        fn = rng.uniform(10.0, 300.0)
        tangential = np.cross(plane.normal, rng.normal(size=3)) * 20.0
        moment = rng.uniform(-30.0, 30.0) * plane.normal
        w = wrench_at(fn * plane.normal + tangential, plane.point, moment)
        cop = centre_of_pressure(w, plane)
        assert_close(cop.point, plane.point, "CoP under a moment about the normal", TIGHT)
        assert cop.normal_force == pytest.approx(fn, rel=TIGHT)


def test_cop_of_a_tangential_moment_and_a_normal_force(rng):
    """Moment tau (tangential) about the plane point with normal force fn: the CoP moves by
    n x tau / fn (the force at that offset has moment (n x tau / fn) x fn n = tau)."""
    for _ in range(10):
        plane = random_plane(rng)
        n = plane.normal
        fn = rng.uniform(10.0, 300.0)
        tau = rng.normal(scale=10.0, size=3)
        tau -= (tau @ n) * n
        cop = centre_of_pressure(wrench_at(fn * n, plane.point, tau), plane)
        assert_close(cop.point, plane.point + np.cross(n, tau) / fn, "CoP offset n x tau / fn",
                     TIGHT)
    # by hand: horizontal plane, 100 N up, 5 N m about +x: the force's line is 0.05 m
    # along +y (y x z = x), whatever the plane point
    flat = Plane(np.array([0.3, 0.2, 0.0]), UP)
    cop = centre_of_pressure(wrench_at([0, 0, 100.0], flat.point, [5.0, 0, 0]), flat)
    assert_close(cop.point, [0.3, 0.25, 0.0], "CoP of 5 N m about x over 100 N", TIGHT)


@pytest.mark.parametrize("fn, threshold", [(5.0, 10.0), (10.0, 10.0), (0.0, 0.0),
                                           (-20.0, 0.0), (-20.0, -30.0)])
def test_cop_undefined_below_the_threshold(fn, threshold):
    plane = Plane(np.array([0.1, 0.0, 0.0]), UP)
    w = wrench_at([3.0, -2.0, fn], [0.12, 0.01, 0.0], [0.5, 0.2, 0.1])
    cop = centre_of_pressure(w, plane, threshold)
    assert cop.normal_force == pytest.approx(fn, abs=TIGHT)
    if fn > threshold:          # a negative threshold admits a pulling contact
        assert cop.point is not None and cop.reason == ""
        return
    assert cop.point is None
    assert "normal force" in cop.reason and f"{threshold:g}" in cop.reason


def test_cop_is_the_least_squares_point_without_tangential_moment(rng):
    """p = o + a t1 + b t2 minimising |P_t (tau - p x f)| (P_t = I - n n^T), by lstsq."""
    for _ in range(50):
        plane = random_plane(rng)
        n, o = plane.normal, plane.point
        t1, t2 = tangent_basis(n)
        f = rng.uniform(20.0, 400.0) * n + rng.normal(scale=80.0, size=3)
        tau = rng.normal(scale=40.0, size=3)
        if f @ n < 5.0:
            continue
        proj = np.eye(3) - np.outer(n, n)
        # tau - p x f = (tau - o x f) - a (t1 x f) - b (t2 x f)
        a_mat = proj @ np.column_stack([np.cross(t1, f), np.cross(t2, f)])
        rhs = proj @ (tau - np.cross(o, f))
        (a, b), *_ = np.linalg.lstsq(a_mat, rhs, rcond=None)
        p = o + a * t1 + b * t2
        residual = proj @ (tau - np.cross(p, f))
        assert np.abs(residual).max() <= TIGHT * max(1.0, np.abs(tau).max() + np.abs(f).max())
        cop = centre_of_pressure(np.concatenate([f, tau]), plane)
        assert_close(cop.point, p, "CoP against lstsq", TIGHT)
        assert abs(n @ (cop.point - o)) <= TIGHT


def test_world_wrench_of_a_sensor_reading(rng):
    """A sensor at pose (R, p) reading [f_s; tau_s] (its axes, about its origin): in the
    world f = R f_s, tau = R tau_s + p x R f_s."""
    r, p = random_rotation(rng), rng.normal(size=3)
    reading = rng.normal(size=6)
    ref = np.concatenate([r @ reading[:3], r @ reading[3:] + np.cross(p, r @ reading[:3])])
    assert_close(world_wrench(pose(r, p), reading), ref, "world_wrench", TIGHT)


def test_sole_plane():
    contact = Contact("l_sole", SOLE + [0.0, 0.0, 0.01], [0, 0, 1], 0.6)
    h = pose(rot_x(0.3), (1.0, 2.0, 3.0))
    plane = sole_plane(contact, h)
    assert_close(plane.point, h[:3, :3] @ SOLE.mean(axis=0) + h[:3, 3] + h[:3, 2] * 0.01,
                 "sole plane point", TIGHT)
    assert_close(plane.normal, h[:3, 2], "sole plane normal", TIGHT)


# ------------------------------------------------------------------------ ground plane


def test_ground_plane_of_coplanar_tilted_points(rng):
    for tilt in (0.0, 0.4, np.radians(59.0)):
        for sign in (1.0, -1.0):          # the fitted normal is turned towards up
            up = random_rotation(rng) @ UP
            t1, t2 = tangent_basis(up)
            n = np.cos(tilt) * up + np.sin(tilt) * t1
            u1, u2 = tangent_basis(sign * n)
            o = rng.normal(size=3)
            ab = rng.uniform(-0.3, 0.3, size=(7, 2))
            pts = o + ab[:, :1] * u1 + ab[:, 1:] * u2
            plane = ground_plane(pts, up)
            assert_close(plane.normal, n, f"coplanar normal (tilt {tilt:.2f}, sign {sign})", TIGHT)
            assert np.abs((pts - plane.point) @ plane.normal).max() <= TIGHT
    # points off the plane by less than the tolerance are still coplanar
    pts = np.array([[0, 0, 0], [0.2, 0, 0], [0.2, 0.1, 0], [0, 0.1, 0.0]])
    pts[2, 2] = 0.5 * COPLANAR_TOL
    plane = ground_plane(pts, UP)
    assert plane.normal @ UP > 1.0 - 1e-9 and plane.normal @ UP < 1.0


def test_ground_plane_falls_back_to_horizontal_at_the_lowest_point(rng):
    up = random_rotation(rng) @ UP
    t1, t2 = tangent_basis(up)

    def check(pts, what):
        plane = ground_plane(pts, up)
        assert_close(plane.normal, up, f"{what}: normal", TIGHT)
        lowest = pts[np.argmin(pts @ up)]
        assert_close(plane.point @ up, lowest @ up, f"{what}: height", TIGHT)
        assert np.isclose(np.abs(pts - plane.point).sum(axis=1), 0.0, atol=TIGHT).any(), \
            f"{what}: the plane point is not a contact point"

    base = rng.normal(size=3) + np.outer(rng.uniform(-0.2, 0.2, 6), t1) + \
        np.outer(rng.uniform(-0.2, 0.2, 6), t2)
    heights = np.array([0.0, 0.0, 0.0, 0.0, 0.05, 0.1])
    check(base + np.outer(heights, up), "non-coplanar (a step)")
    off = np.zeros(6)
    off[3] = 10.0 * COPLANAR_TOL
    check(base + np.outer(off, up), "non-coplanar by 10 um")
    line = rng.normal(size=3) + np.outer(np.linspace(0.0, 0.3, 5), 0.8 * t1 + 0.6 * up)
    check(line, "collinear points (line contact)")
    check(line[:2], "two points")
    check(line[:1], "one point")
    for tilt in (np.radians(61.0), np.radians(90.0), np.radians(100.0)):   # 100: 80 flipped
        n = np.cos(tilt) * up + np.sin(tilt) * t1
        u1, u2 = tangent_basis(n)
        ab = rng.uniform(-0.3, 0.3, size=(6, 2))
        check(ab[:, :1] * u1 + ab[:, 1:] * u2, f"plane {np.degrees(tilt):.0f} deg from up")


@pytest.mark.parametrize("name", ["coplanar", "slope", "step", "tilted_foot"])
def test_balance_fast_ground_plane_equals_ground_plane(name, rng, monkeypatch):
    """balance() on flat soles skips the SVD (``_sole_ground``); its plane must be
    ground_plane() of all the points. The generic path is disabled here to prove the fast
    path ran."""
    contacts, poses, wrenches = scene(name, rng)
    for gravity in (GRAVITY, random_rotation(rng) @ GRAVITY, rot_y(0.5) @ GRAVITY):
        up = -gravity / np.linalg.norm(gravity)
        points = np.concatenate([c.world_points(h) for c, h in zip(contacts, poses)])
        ref = ground_plane(points, up)
        with monkeypatch.context() as m:
            m.setattr(balance_module, "ground_plane",
                      lambda *a, **k: pytest.fail("balance() did not take its sole fast path"))
            res = balance(contacts, poses, wrenches, np.array([0.02, 0.0, 0.7]), np.zeros(3),
                          gravity)
        assert res.active == (0, 1)
        assert_same_plane(res.ground, ref, f"{name} ground plane")
    # the expected planes, by hand, under gravity along -z
    res = balance(contacts, poses, wrenches, np.array([0.02, 0.0, 0.7]), np.zeros(3), GRAVITY)
    if name == "coplanar":
        assert_same_plane(res.ground, Plane(np.zeros(3), UP), name)
    elif name == "slope":
        assert_same_plane(res.ground, Plane(np.zeros(3), rot_x(0.3)[:, 2]), name)
    else:
        assert_close(res.ground.normal, UP, f"{name} normal", TIGHT)
        assert_close(res.ground.point[2], points[:, 2].min(), f"{name} height", TIGHT)


def test_ground_on_a_step_is_at_the_lower_foot():
    """Two level soles, the first 0.1 m higher: not coplanar, so the ground is horizontal at
    the lowest point, the second sole's height (z = 0), and the ZMP lies on it."""
    contacts = feet()
    poses = [pose(np.eye(3), (0.0, 0.1, 0.1)), pose(np.eye(3), (0.0, -0.1, 0.0))]
    wrenches = [wrench_at([0, 0, 100.0], poses[0][:3, 3]),
                wrench_at([0, 0, 100.0], poses[1][:3, 3])]
    res = balance(contacts, poses, wrenches, np.array([0.0, 0.0, 0.7]), np.zeros(3), GRAVITY)
    assert_same_plane(res.ground, Plane(np.zeros(3), UP), "ground on a step")
    assert_close(res.zmp.point, [0.0, 0.0, 0.0], "ZMP on a step", TIGHT)
    assert res.divergence.height == pytest.approx(0.7, rel=TIGHT)


def test_balance_generic_ground_path_for_a_line_contact(rng):
    """A line contact (a sole edge) is not a flat sole: balance() uses ground_plane()."""
    contacts = [Contact("l_sole", SOLE, [0, 0, 1], 0.6),
                Contact("edge", SOLE[:2], [0, 0, 1], 0.6)]
    for poses in ([pose(np.eye(3), (0, 0.1, 0)), pose(np.eye(3), (0, -0.1, 0))],
                  [pose(np.eye(3), (0, 0.1, 0.05)), pose(rot_x(0.2), (0, -0.1, 0))]):
        wrenches = [wrench_at([0, 0, 100.0], h[:3, :3] @ c.centre + h[:3, 3])
                    for c, h in zip(contacts, poses)]
        res = balance(contacts, poses, wrenches, np.array([0.0, 0.0, 0.6]), np.zeros(3),
                      GRAVITY)
        points = np.concatenate([c.world_points(h) for c, h in zip(contacts, poses)])
        assert_same_plane(res.ground, ground_plane(points, UP), "line contact ground")


# ------------------------------------------------------------------------ balance()


@pytest.mark.parametrize("name", ["coplanar", "slope", "step", "tilted_foot"])
def test_balance_moves_with_the_scene(name, rng):
    contacts, poses, wrenches = scene(name, rng)
    com, vel = np.array([0.03, -0.01, 0.62]), np.array([0.2, -0.15, 0.05])
    gravity = rot_y(0.1) @ GRAVITY if name == "coplanar" else GRAVITY
    ref = balance(contacts, poses, wrenches, com, vel, gravity, threshold=1.0)
    assert ref.active == (0, 1) and ref.zmp.point is not None and ref.divergence.dcm is not None
    for _ in range(5):
        t = pose(random_rotation(rng), rng.uniform(-1.0, 1.0, size=3))
        r, p = t[:3, :3], t[:3, 3]
        moved = balance(contacts, [t @ h for h in poses],
                        [transform_wrench(t, w) for w in wrenches],
                        r @ com + p, r @ vel, r @ gravity, threshold=1.0)
        assert moved.active == ref.active and moved.names == ("l_sole", "r_sole")
        for k, (a, b) in enumerate(zip(moved.cops, ref.cops)):
            assert_close(a.point, r @ b.point + p, f"{name} CoP {k}", TIGHT)
            assert a.normal_force == pytest.approx(b.normal_force, rel=TIGHT)
        assert_close(moved.zmp.point, r @ ref.zmp.point + p, f"{name} ZMP", TIGHT)
        assert moved.zmp.normal_force == pytest.approx(ref.zmp.normal_force, rel=TIGHT)
        assert_same_plane(moved.ground, Plane(r @ ref.ground.point + p, r @ ref.ground.normal),
                          f"{name} ground")
        d, d0 = moved.divergence, ref.divergence
        assert_close(d.dcm, r @ d0.dcm + p, f"{name} DCM", TIGHT)
        assert_close(d.capture_point, r @ d0.capture_point + p, f"{name} capture point", TIGHT)
        assert d.omega == pytest.approx(d0.omega, rel=TIGHT)
        assert d.height == pytest.approx(d0.height, rel=TIGHT)


def test_balance_cops_and_zmp_by_hand(rng):
    """Each contact's CoP is centre_of_pressure on its sole plane; the ZMP that of the sum
    on the ground plane; with the forces at known points the ZMP is their force-weighted
    mean (flat ground)."""
    contacts = feet()
    poses = list(SCENES["coplanar"])
    q = [h[:3, :3] @ [0.02, 0.01, 0.0] + h[:3, 3] for h in poses]
    wrenches = [wrench_at([1.0, 2.0, 100.0], q[0]), wrench_at([-1.0, -2.0, 300.0], q[1])]
    res = balance(contacts, poses, wrenches, np.array([0, 0, 0.6]), np.zeros(3), GRAVITY,
                  names=("left", "right"))
    assert res.names == ("left", "right")
    for k in range(2):
        assert_close(res.cops[k].point, q[k], f"CoP {k}", TIGHT)
    assert_close(res.zmp.point, (100.0 * q[0] + 300.0 * q[1]) / 400.0, "ZMP", TIGHT)
    assert res.zmp.normal_force == pytest.approx(400.0, rel=TIGHT)


# ------------------------------------------------------------------------ DCM


def test_dcm_by_hand():
    plane = Plane(np.array([0.3, -0.2, 0.1]), UP)
    com = np.array([0.03, -0.02, 0.65])
    h = 0.55
    rest = divergent_component(com, np.zeros(3), plane, GRAVITY)
    assert_close(rest.dcm, com, "DCM at rest", TIGHT)
    assert_close(rest.capture_point, [0.03, -0.02, 0.1], "capture point at rest", TIGHT)
    assert rest.height == pytest.approx(h, rel=TIGHT) and rest.reason == ""
    vel = np.array([0.3, -0.1, 0.05])
    omega = math.sqrt(9.80665 / h)
    moving = divergent_component(com, vel, plane, GRAVITY)
    assert moving.omega == pytest.approx(omega, rel=TIGHT)
    assert_close(moving.dcm, com + vel / omega, "DCM = c + v / omega", TIGHT)
    assert_close(moving.capture_point, [*(com + vel / omega)[:2], 0.1], "capture point", TIGHT)


def test_dcm_on_a_tilted_plane_under_tilted_gravity(rng):
    """h is measured along gravity; the capture point is on the plane, on the DCM's line
    along gravity."""
    for _ in range(10):
        gravity = random_rotation(rng) @ GRAVITY * rng.uniform(0.5, 2.0)
        up = -gravity / np.linalg.norm(gravity)
        t1, _ = tangent_basis(up)
        tilt = rng.uniform(0.0, 1.0)
        plane = Plane(rng.normal(size=3), np.cos(tilt) * up + np.sin(tilt) * t1)
        com = plane.point + rng.uniform(0.3, 1.0) * up + rng.normal(scale=0.1, size=3)
        vel = rng.normal(size=3)
        d = divergent_component(com, vel, plane, gravity)
        h = plane.normal @ (com - plane.point) / (plane.normal @ up)   # along gravity
        omega = math.sqrt(np.linalg.norm(gravity) / h)
        assert d.height == pytest.approx(h, rel=TIGHT)
        assert d.omega == pytest.approx(omega, rel=TIGHT)
        assert_close(d.dcm, com + vel / omega, "DCM", TIGHT)
        cp = d.capture_point
        assert abs(plane.normal @ (cp - plane.point)) <= TIGHT, "capture point off the plane"
        assert_close(np.cross(d.dcm - cp, up), np.zeros(3), "DCM - capture point along gravity",
                     TIGHT)
        assert_close(cp, projection_along(d.dcm, plane, up), "capture point", TIGHT)


def test_dcm_undefined_with_the_com_not_above_the_plane():
    plane = Plane(np.zeros(3), UP)
    for z in (0.0, -0.3):
        d = divergent_component(np.array([0.0, 0.0, z]), np.ones(3), plane, GRAVITY)
        assert d.dcm is None and d.capture_point is None and math.isnan(d.omega)
        assert d.height == pytest.approx(z, abs=TIGHT) and "above the ground plane" in d.reason


# ------------------------------------------------------------------------ no contact


def test_no_wrench_or_no_active_contact(rng):
    contacts, poses = feet(), list(SCENES["coplanar"])
    com, vel = np.array([0.0, 0.0, 0.6]), np.zeros(3)
    none = balance(contacts, poses, [None, None], com, vel, GRAVITY)
    assert none == Balance(("l_sole", "r_sole"), none.cops, (), None, None, None)
    assert all(c.point is None and c.reason == "no wrench" for c in none.cops)
    light = [wrench_at([0, 0, 4.0], h[:3, 3]) for h in poses]
    weak = balance(contacts, poses, light, com, vel, GRAVITY, threshold=5.0)
    assert weak.active == () and weak.zmp is None and weak.divergence is None
    assert weak.ground is None and all("normal force" in c.reason for c in weak.cops)
    polygon = ground_support(contacts, dict(zip(("l_sole", "r_sole"), poses)), com,
                             GRAVITY).polygon
    assert none.margins(polygon) == (-math.inf, -math.inf)
    # one foot loaded: the ground and the ZMP come from it alone (the other, lifted, ignored)
    lifted = [poses[0], pose(np.eye(3), (0.05, -0.1, 0.08))]
    w = wrench_at([0, 0, 300.0], lifted[0][:3, 3])
    one = balance(contacts, lifted, [w, None], com, vel, GRAVITY)
    assert one.active == (0,) and one.cops[1].point is None
    assert_close(one.zmp.point, lifted[0][:3, 3], "ZMP on one foot", TIGHT)
    assert_same_plane(one.ground, Plane(np.zeros(3), UP), "one-foot ground")


# ------------------------------------------------------------------------ margins


def test_margins_of_a_square():
    """A 0.2 m square sole centred at (0.1, 0, 0): ZMP and capture point placed at known
    distances inside and outside."""
    contact = Contact("foot", [[-0.1, -0.1, 0], [0.1, -0.1, 0], [0.1, 0.1, 0], [-0.1, 0.1, 0]],
                      [0, 0, 1], 0.6)
    h = pose(np.eye(3), (0.1, 0.0, 0.0))
    polygon = ground_support([contact], {"foot": h}, np.zeros(3), GRAVITY).polygon
    square = SupportPolygon(np.array([[0, -0.1], [0.2, -0.1], [0.2, 0.1], [0, 0.1]]),
                            ground_axes(GRAVITY))
    com_h = 0.5
    omega = math.sqrt(9.80665 / com_h)
    cases = [   # (ZMP xy, capture point xy, expected margins)
        ((0.15, 0.02), (0.1, 0.0), (0.05, 0.1)),
        ((0.23, 0.14), (0.32, 0.0), (-0.05, -0.12)),      # ZMP 0.03, 0.04 off the corner
        ((0.2, 0.0), (0.1, -0.13), (0.0, -0.03)),
    ]
    for zmp, cp, expected in cases:
        com = np.array([0.1, 0.0, com_h])
        vel = np.array([cp[0] - 0.1, cp[1], 0.0]) * omega
        w = wrench_at([2.0, -1.0, 250.0], [*zmp, 0.0], [0, 0, 0.7])
        res = balance([contact], [h], [w], com, vel, GRAVITY)
        assert_close(res.zmp.point, [*zmp, 0.0], "ZMP", TIGHT)
        assert_close(res.divergence.capture_point, [*cp, 0.0], "capture point", TIGHT)
        for poly in (polygon, square):
            assert_close(res.margins(poly), expected, f"margins at {zmp}, {cp}", TIGHT)


@pytest.mark.parametrize("name", ["coplanar", "slope", "step", "tilted_foot"])
def test_margins_equal_the_polygon_margins(name, rng):
    contacts, poses, wrenches = scene(name, rng)
    links = dict(zip(("l_sole", "r_sole"), poses))
    for _ in range(5):
        com = np.array([*rng.uniform(-0.2, 0.2, 2), 0.6])
        res = balance(contacts, poses, wrenches, com, rng.normal(size=3), GRAVITY)
        polygon = ground_support(contacts, links, com, GRAVITY).polygon
        ref = (polygon.margin(res.zmp.point), polygon.margin(res.divergence.capture_point))
        assert res.margins(polygon) == ref
    # the ZMP defined, the capture point not (CoM under the ground plane)
    res = balance(contacts, poses, wrenches, np.array([0.0, 0.0, -1.0]), np.zeros(3), GRAVITY)
    zmp_margin, cp_margin = res.margins(polygon)
    assert zmp_margin == polygon.margin(res.zmp.point) and cp_margin == -math.inf


# ------------------------------------------------------------------------ iCub at rest


def icub_contacts():
    """The soles of config/icub.yaml (points, normal, friction)."""
    params = yaml.safe_load((REPO / "config" / "icub.yaml").read_text())
    params = params["kin_dyn_node"]["ros__parameters"]
    out = []
    for name in params["contacts"]:
        geometry = params["contact"][name]
        out.append(Contact(name, np.reshape(geometry["points"], (-1, 3)), geometry["normal"],
                           geometry["friction"]))
    return out


@pytest.fixture(scope="module")
def icub_pinocchio(icub_urdf, icub_joints):
    return PinocchioOracle(icub_urdf, icub_joints, None, GRAVITY)


def icub_posture(oracle, bend):
    """Joints ``bend`` ({name: angle}, others 0) and the base pose putting l_sole on z = 0,
    its orientation that of the zero posture turned by pi about z (level)."""
    s = np.zeros(oracle.n)
    for joint, angle in bend.items():
        s[oracle.joints.index(joint)] = angle
    b_H_sole = oracle.forward_kinematics("l_sole", np.eye(4), s)
    return pose(rot_z(np.pi)) @ np.linalg.inv(b_H_sole), s


LEFT_CROUCH = {"l_hip_pitch": 0.4, "l_knee": -0.8, "l_ankle_pitch": -0.4}   # left foot level, up
ICUB_CASES = {   # name: (joints, gravity, coplanar soles)
    "level": ({}, GRAVITY, True),
    "tilted_gravity": ({}, rot_x(0.25) @ rot_y(-0.2) @ GRAVITY, True),
    "left_foot_up": (LEFT_CROUCH, GRAVITY, False),
    "right_ankle_rolled": ({"r_ankle_roll": 0.12, "r_ankle_pitch": -0.1}, GRAVITY, False),
    "left_foot_up_tilted_gravity": (LEFT_CROUCH, rot_y(0.3) @ GRAVITY, False),
}


@pytest.mark.parametrize("name", list(ICUB_CASES))
def test_icub_zmp_is_the_com_projection_at_rest(name, icub_pinocchio, rng):
    """Standing still under gravity alone, the contact wrenches sum to minus the gravity
    wrench (Pinocchio's RNEA at rest, INERTIAL_FIXED: the base wrench about the world
    origin); however split between the feet, the ZMP is the CoM projected along gravity on
    the ground plane and the DCM is the CoM."""
    oracle = icub_pinocchio
    bend, gravity, coplanar = ICUB_CASES[name]
    w_H_b, s = icub_posture(oracle, bend)
    contacts = icub_contacts()
    poses = [oracle.forward_kinematics(c.link, w_H_b, s) for c in contacts]
    zero = np.zeros(oracle.n)
    total = oracle.rnea("INERTIAL_FIXED", w_H_b, s, np.zeros(6), zero, np.zeros(6), zero,
                        gravity=gravity)[:6]
    com = oracle.com_position(w_H_b, s)
    weight = -oracle.total_mass() * gravity
    assert_close(total, np.concatenate([weight, np.cross(com, weight)]),
                 "RNEA at rest = minus the gravity wrench", ICUB)
    up = -gravity / np.linalg.norm(gravity)
    points = np.concatenate([c.world_points(h) for c, h in zip(contacts, poses)])
    if coplanar:
        expected_ground = Plane(np.zeros(3), UP)        # both soles on z = 0
        assert np.abs(points[:, 2]).max() <= 1e-12
    else:
        expected_ground = Plane(points[np.argmin(points @ up)], up)
        assert np.ptp(points[:, 2]) > 1e-3
    for trial in range(4):
        if trial == 0:                                   # least-norm: half each
            split = [0.5 * total, 0.5 * total]
        else:                                            # random share + internal wrench
            share = rng.uniform(0.2, 0.8)
            internal = np.concatenate([rng.uniform(-30, 30, 2), rng.uniform(-15, 15, 1),
                                       rng.uniform(-5, 5, 3)])
            split = [share * total + internal, (1.0 - share) * total - internal]
        assert_close(split[0] + split[1], total, "split", TIGHT)
        res = balance(contacts, poses, split, com, np.zeros(3), gravity)
        assert res.active == (0, 1), [c.reason for c in res.cops]
        assert_same_plane(res.ground, expected_ground, f"{name} ground", TIGHT)
        assert_close(res.zmp.point, projection_along(com, expected_ground, up),
                     f"{name} ZMP vs CoM projection (split {trial})", ICUB)
        assert_close(res.divergence.dcm, com, f"{name} DCM at rest", TIGHT)
        assert_close(res.divergence.capture_point, res.zmp.point,
                     f"{name} capture point at rest = ZMP", ICUB)
