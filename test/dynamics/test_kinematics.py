"""kinematics: the congruence maps of forward_pass (pseudo-inertia, Plücker matrix, wrench
line) against the 6D transforms of spatial algebra and explicit cross products. (The passes
themselves are checked against iDynTree, Pinocchio and finite differences elsewhere.)"""

import numpy as np
import pytest

from kin_dyn_ros.dynamics import kinematics as kin
from kin_dyn_ros.dynamics import spatial

ATOL = 1e-12


def _pose(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    x, y, z, w = q
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    return spatial.homogeneous(r, rng.normal(size=3))


def _inertia(rng):
    a = rng.normal(size=(3, 3))
    ic = a @ a.T + 0.1 * np.eye(3)             # rotational inertia about the CoM
    m, c = rng.uniform(0.5, 3.0), rng.normal(size=3) * 0.2
    cx = spatial.skew(c)
    return kin.spatial_inertia(m, m * c, ic - m * cx @ cx)


@pytest.mark.parametrize("seed", range(5))
def test_pseudo_inertia_maps_by_congruence(seed):
    """J_A = T J_B T^T is the pseudo-inertia of I_A = A_X^B I_B B_X_A."""
    rng = np.random.default_rng(seed)
    t, i_b = _pose(rng), _inertia(rng)
    i_a = spatial.wrench_transform(t) @ i_b @ spatial.velocity_transform(
        spatial.inverse_homogeneous(t))
    np.testing.assert_allclose(t @ kin.pseudo_inertia(i_b) @ t.T, kin.pseudo_inertia(i_a),
                               atol=ATOL)
    mapped = (t @ kin.pseudo_inertia(i_b) @ t.T).reshape(16)
    np.testing.assert_allclose(mapped.dot(kin._PSEUDO_TO_SPATIAL).reshape(6, 6), i_a,
                               atol=ATOL)


@pytest.mark.parametrize("seed", range(5))
def test_plucker_matrix_maps_by_congruence(seed):
    """L_A = T L_B T^T is the Plücker matrix of S_A = A_X_B S_B, for any twist."""
    rng = np.random.default_rng(seed)
    t, s_b = _pose(rng), rng.normal(size=6)
    s_a = spatial.velocity_transform(t) @ s_b
    mapped = t @ kin.plucker_matrix(s_b) @ t.T
    np.testing.assert_allclose(mapped, kin.plucker_matrix(s_a), atol=ATOL)
    np.testing.assert_allclose(mapped.reshape(16).dot(kin._PLUCKER_TO_SCREW), s_a, atol=ATOL)


@pytest.mark.parametrize("seed", range(5))
def test_transform_wrench(seed):
    """[f; tau] about B in B's axes -> about A in A's axes: R f and R tau + p x (R f)."""
    rng = np.random.default_rng(seed)
    t, w = _pose(rng), rng.normal(size=6)
    f = t[:3, :3] @ w[:3]
    expected = np.concatenate([f, t[:3, :3] @ w[3:] + np.cross(t[:3, 3], f)])
    np.testing.assert_allclose(kin.transform_wrench(t, w), expected, atol=ATOL)


def test_body_terms_keep_both_parts():
    """The symmetric part of each body term is its pseudo-inertia, the antisymmetric part its
    joint's Plücker matrix scaled by a power of two; a massless body keeps scale 1."""
    rng = np.random.default_rng(0)
    inertia = np.array([_inertia(rng) for _ in range(3)] + [np.zeros((6, 6))])
    screw = rng.normal(size=(3, 6))
    x, unscale = kin.body_terms(inertia, screw)
    sym, skw = 0.5 * (x + x.transpose(0, 2, 1)), 0.5 * (x - x.transpose(0, 2, 1))
    np.testing.assert_allclose(sym, kin.pseudo_inertia(inertia), atol=ATOL)
    np.testing.assert_allclose(skw[0], 0.0, atol=0)
    scale = 1.0 / unscale[:, 0]
    np.testing.assert_allclose(skw[1:], scale[:, None, None] * kin.plucker_matrix(screw),
                               atol=ATOL)
    assert np.all(np.log2(scale) == np.round(np.log2(scale))) and scale[-1] == 1.0
