"""Floating-base acceleration kinematics (seed 001): derivative and Lie-group integration."""

import numpy as np
import pytest

from kin_dyn_ros.dynamics.floating_base import FloatingBaseState, dynamics, integrate
from kin_dyn_ros.dynamics.spatial import so3_exp


@pytest.fixture
def state():
    rng = np.random.default_rng(0)
    return FloatingBaseState(p=rng.normal(size=3), R=so3_exp(rng.normal(size=3)),
                             s=rng.normal(size=4), dp=rng.normal(size=3),
                             omega=rng.normal(size=3), ds=rng.normal(size=4))


def test_dynamics_returns_velocities_and_inputs(state):
    dtwist, dds = np.arange(6.0), np.arange(4.0)
    d = dynamics(state, dtwist, dds)
    np.testing.assert_array_equal(d.dp, state.dp)
    np.testing.assert_array_equal(d.omega, state.omega)
    np.testing.assert_array_equal(d.ds, state.ds)
    np.testing.assert_array_equal(np.concatenate([d.ddp, d.domega]), dtwist)
    np.testing.assert_array_equal(d.dds, dds)


def test_constant_angular_velocity_is_integrated_exactly(state):
    """R(t) = exp(omega t) R0 for constant omega, whatever the step."""
    x, dt, steps = state, 0.01, 250
    for _ in range(steps):
        x = integrate(x, np.zeros(6), np.zeros(4), dt)
    np.testing.assert_allclose(x.R, so3_exp(state.omega * dt * steps) @ state.R, atol=1e-12)
    np.testing.assert_allclose(x.R @ x.R.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(x.p, state.p + state.dp * dt * steps, atol=1e-12)
    np.testing.assert_allclose(x.s, state.s + state.ds * dt * steps, atol=1e-12)


def test_euler_converges_at_first_order_for_constant_acceleration(state):
    """p(T) = p0 + v0 T + a T^2 / 2; explicit Euler's error is a T dt / 2."""
    acc = np.array([0.3, -0.2, 0.1, 0, 0, 0])
    t_end = 1.0
    errors = []
    for steps in (100, 200):
        x, dt = state, t_end / steps
        for _ in range(steps):
            x = integrate(x, acc, np.zeros(4), dt)
        exact = state.p + state.dp * t_end + 0.5 * acc[:3] * t_end ** 2
        np.testing.assert_allclose(x.p - exact, -0.5 * acc[:3] * t_end * dt, atol=1e-12)
        errors.append(np.abs(x.p - exact).max())
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=1e-9)


def test_pose_and_twist_accessors(state):
    h = state.w_H_b
    np.testing.assert_array_equal(h[:3, :3], state.R)
    np.testing.assert_array_equal(h[:3, 3], state.p)
    np.testing.assert_array_equal(state.base_velocity, np.concatenate([state.dp, state.omega]))


def test_bad_input_shapes_name_the_argument(state):
    with pytest.raises(ValueError, match="dtwist"):
        dynamics(state, np.zeros(5), np.zeros(4))
    with pytest.raises(ValueError, match="dds"):
        integrate(state, np.zeros(6), np.zeros(3), 0.01)
