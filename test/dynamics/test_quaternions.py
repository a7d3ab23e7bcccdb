"""Quaternions <-> rotation matrices of the core, against SciPy's Rotation and known rotations.

Quaternions are (x, y, z, w); ``rotations_to_quaternions`` returns w >= 0.
"""

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kin_dyn_ros.dynamics.quaternions import (quaternion_to_matrix, rotation_to_quaternion,
                                              rotations_to_quaternions)
from kin_dyn_ros.dynamics.spatial import so3_exp

S = math.sqrt(0.5)
# (quaternion (x, y, z, w), its rotation matrix), written out by hand
KNOWN = [
    ((0.0, 0.0, 0.0, 1.0), np.eye(3)),
    ((0.0, 0.0, S, S), [[0, -1, 0], [1, 0, 0], [0, 0, 1]]),        # +90 deg about z
    ((S, 0.0, 0.0, S), [[1, 0, 0], [0, 0, -1], [0, 1, 0]]),        # +90 deg about x
    ((0.0, S, 0.0, S), [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]),        # +90 deg about y
    ((1.0, 0.0, 0.0, 0.0), np.diag([1.0, -1.0, -1.0])),           # 180 deg about x
    ((0.0, 1.0, 0.0, 0.0), np.diag([-1.0, 1.0, -1.0])),           # 180 deg about y
    ((0.0, 0.0, 1.0, 0.0), np.diag([-1.0, -1.0, 1.0])),           # 180 deg about z
    ((0.5, 0.5, 0.5, 0.5), [[0, 0, 1], [1, 0, 0], [0, 1, 0]]),     # 120 deg about (1, 1, 1)
]


def random_rotations(n, seed):
    rng = np.random.default_rng(seed)
    rotations = [so3_exp(rng.normal(size=3) * 2.0) for _ in range(n)]
    # near 180 degrees about each axis: the x, y and z branches of Shepperd's method
    rotations += [so3_exp(np.pi * 0.999 * e) for e in np.eye(3)] + [np.eye(3)]
    return np.array(rotations)


def scipy_quaternions(rotations):
    q = Rotation.from_matrix(rotations).as_quat()      # (x, y, z, w), scalar last
    return q * np.where(q[:, 3:] < 0.0, -1.0, 1.0)


def test_quaternion_round_trip_and_shepperd_branches():
    rotations = random_rotations(50, 0)
    q = rotations_to_quaternions(rotations)
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-15)
    assert (q[:, 3] >= 0).all()
    for r, qi in zip(rotations, q):
        np.testing.assert_allclose(quaternion_to_matrix(*qi), r, atol=1e-14)


@pytest.mark.parametrize("n", [1, 33])
def test_rotations_to_quaternions_match_scipy(n):
    """The per-tick sizes (one pose; iCub's 33 transforms), and the near-180-degree ones."""
    for rotations in (random_rotations(n, n)[:n], random_rotations(0, n)):
        np.testing.assert_allclose(rotations_to_quaternions(rotations),
                                   scipy_quaternions(rotations), rtol=0, atol=1e-15)


def test_one_rotation_to_quaternion_matches_scipy():
    """The one-matrix path (the /tf base pose): every Shepperd branch, near 180 degrees."""
    rotations = random_rotations(40, 2)
    for r, q in zip(rotations, scipy_quaternions(rotations)):
        np.testing.assert_allclose(rotation_to_quaternion(r), q, rtol=0, atol=1e-15)


def test_quaternion_to_matrix_matches_scipy():
    for q in scipy_quaternions(random_rotations(30, 1)):
        np.testing.assert_allclose(quaternion_to_matrix(*q), Rotation.from_quat(q).as_matrix(),
                                   rtol=0, atol=1e-15)


@pytest.mark.parametrize("q, r", KNOWN)
def test_known_rotations(q, r):
    np.testing.assert_allclose(quaternion_to_matrix(*q), r, rtol=0, atol=1e-15)
    np.testing.assert_allclose(rotations_to_quaternions(np.array(r, dtype=float))[0], q,
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(rotation_to_quaternion(np.array(r, dtype=float)), q,
                               rtol=0, atol=1e-15)


def test_quaternion_validation():
    with pytest.raises(ValueError, match='norm 0'):
        quaternion_to_matrix(0.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match='NaN or inf'):
        quaternion_to_matrix(0.0, 0.0, math.nan, 1.0)
    with pytest.raises(ValueError, match='unit quaternion'):
        quaternion_to_matrix(0.0, 0.0, 0.0, 2.0)
    # near-unit: normalised
    r = quaternion_to_matrix(0.0, 0.0, 0.0, 1.001)
    np.testing.assert_allclose(r, np.eye(3), atol=1e-15)
