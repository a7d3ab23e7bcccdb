"""Spatial algebra: identities of rotations, transforms and 6D cross products."""

import numpy as np
import pytest

from kin_dyn_ros.dynamics import spatial

ATOL = 1e-12


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _random_pose(rng):
    return spatial.homogeneous(spatial.so3_exp(rng.normal(size=3)), rng.normal(size=3))


def test_skew_vee_cross(rng):
    a, b = rng.normal(size=(2, 5, 3))
    np.testing.assert_allclose(spatial.skew(a) @ b[..., None], np.cross(a, b)[..., None], atol=ATOL)
    np.testing.assert_allclose(spatial.vee(spatial.skew(a)), a, atol=ATOL)
    np.testing.assert_allclose(spatial.cross3(a, b), np.cross(a, b), atol=ATOL)
    x, y, z = a[0]
    np.testing.assert_array_equal(spatial.skew(a[0]), [[0, -z, y], [z, 0, -x], [-y, x, 0]])


def test_rpy_matches_composition_of_elementary_rotations():
    r, p, y = 0.3, -1.1, 2.0
    rx = spatial.so3_exp([r, 0, 0])
    ry = spatial.so3_exp([0, p, 0])
    rz = spatial.so3_exp([0, 0, y])
    np.testing.assert_allclose(spatial.rpy_to_matrix([r, p, y]), rz @ ry @ rx, atol=ATOL)


def test_so3_exp_is_a_rotation_and_small_angle_branch_is_continuous(rng):
    for w in [rng.normal(size=3), 1e-9 * rng.normal(size=3), np.zeros(3)]:
        r = spatial.so3_exp(w)
        np.testing.assert_allclose(r @ r.T, np.eye(3), atol=ATOL)
        assert np.linalg.det(r) == pytest.approx(1.0, abs=ATOL)
    w = np.array([1e-8, 0, 0])
    np.testing.assert_allclose(spatial.so3_exp(w) @ [0, 1, 0], [0, np.cos(1e-8), np.sin(1e-8)],
                               atol=1e-15)


def test_inverse_homogeneous(rng):
    h = np.array([_random_pose(rng) for _ in range(4)])
    np.testing.assert_allclose(spatial.inverse_homogeneous(h) @ h, np.broadcast_to(np.eye(4), h.shape),
                               atol=ATOL)


def test_velocity_and_wrench_transforms_preserve_power(rng):
    h = _random_pose(rng)
    v, w = rng.normal(size=(2, 6))
    x, xf = spatial.velocity_transform(h), spatial.wrench_transform(h)
    assert (x @ v) @ (xf @ w) == pytest.approx(v @ w, abs=ATOL)
    np.testing.assert_allclose(xf, np.linalg.inv(x).T, atol=ATOL)


def test_velocity_transform_is_the_adjoint_of_the_pose(rng):
    """A_X_B v^ must equal A_H_B v^ B_H_A (4x4 adjoint action), linear-first ordering."""
    h = _random_pose(rng)
    v = rng.normal(size=6)

    def hat(t):
        m = np.zeros((4, 4))
        m[:3, :3] = spatial.skew(t[3:])
        m[:3, 3] = t[:3]
        return m

    np.testing.assert_allclose(hat(spatial.velocity_transform(h) @ v),
                               h @ hat(v) @ spatial.inverse_homogeneous(h), atol=ATOL)


def test_cross_matrices(rng):
    v, u, f = rng.normal(size=(3, 6))
    crm = spatial.motion_cross_matrix(v)
    expected = np.concatenate([np.cross(v[3:], u[:3]) + np.cross(v[:3], u[3:]), np.cross(v[3:], u[3:])])
    np.testing.assert_allclose(crm @ u, expected, atol=ATOL)
    np.testing.assert_allclose(spatial.motion_cross_matrix(np.array([u, v]))[1], crm, atol=0)
    np.testing.assert_allclose(spatial.motion_cross(np.array([v, u]), np.array([u, f])),
                               [crm @ u, spatial.motion_cross_matrix(u) @ f], atol=ATOL)
    # v x* is the negative transpose, so <v x u, f> + <u, v x* f> = 0
    assert (crm @ u) @ f + u @ (spatial.force_cross_matrix(v) @ f) == pytest.approx(0.0, abs=ATOL)
