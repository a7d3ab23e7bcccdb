"""Argument checks (kin_dyn_ros.dynamics.checks): shapes, NaN and inf named, finite values kept."""

import numpy as np
import pytest

from kin_dyn_ros.dynamics.checks import checked_array, checked_arrays


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [0, 5, 15])
def test_non_finite_values_are_named(bad, where):
    value = np.ones(16)
    value[where] = bad
    with pytest.raises(ValueError, match="w_H_b contains NaN or inf"):
        checked_array("w_H_b", value.reshape(4, 4), (4, 4))


@pytest.mark.filterwarnings("error")     # and no overflow warning reaches the caller
def test_large_finite_values_pass_even_when_their_sum_overflows():
    value = np.full(4, 1e308)            # sum = inf, every element finite
    out = checked_array("s", value, (4,))
    np.testing.assert_array_equal(out, value)
    with pytest.raises(ValueError, match="contains NaN or inf"):
        checked_array("s", np.array([1e308, 1e308, np.nan, 0.0]), (4,))


def test_shape_and_type():
    with pytest.raises(ValueError, match=r"expected s with shape \(3,\), got \(2,\)"):
        checked_array("s", [1.0, 2.0], (3,))
    out = checked_array("s", [1, 2, 3], (3,))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("arg", ["w_H_b", "s", "base_vel", "s_dot"])
def test_jacobian_dot_names_the_bad_argument(core_models, arg):
    icub = core_models("icub")
    n = icub.NDoF
    args = dict(w_H_b=np.eye(4), s=np.zeros(n), base_vel=np.zeros(6), s_dot=np.zeros(n))
    args[arg] = args[arg].copy()
    args[arg].flat[-1] = np.nan
    with pytest.raises(ValueError, match=f"{arg} contains NaN or inf"):
        icub.jacobian_dot("l_sole", args["w_H_b"], args["s"], args["base_vel"], args["s_dot"])


def test_checked_arrays_as_checked_array_one_by_one():
    items = [("a", np.eye(2), (2, 2)), ("b", None, (3,)), ("c", [1, 2, 3], (3,))]
    a, b, c = checked_arrays(*items)
    assert b is None and a.dtype == c.dtype == np.float64
    np.testing.assert_array_equal(a, np.eye(2))
    np.testing.assert_array_equal(c, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"expected c with shape \(3,\), got \(2,\)"):
        checked_arrays(("a", np.eye(2), (2, 2)), ("c", [1.0, 2.0], (3,)))
    with pytest.raises(ValueError, match="a contains NaN or inf"):      # the first bad one
        checked_arrays(("a", [np.inf], (1,)), ("c", [np.nan], (1,)))
    with pytest.raises(ValueError, match="c contains NaN or inf"):
        checked_arrays(("a", [1.0], (1,)), ("c", [np.nan], (1,)))
