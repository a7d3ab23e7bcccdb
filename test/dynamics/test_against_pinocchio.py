"""Every quantity of the core API against Pinocchio.

The tests are those of test_against_idyntree.py (inherited, ``oracle_kind`` switched):
Pinocchio works in BODY_FIXED velocities with its own joint order and (cos, sin)
continuous joints, and oracles.PinocchioOracle converts to the tested representation.
Added here: ABA against Pinocchio's own ``pin.aba`` with ``fext`` (the iDynTree oracle
has no forward dynamics and solves with M), and the bias against ``pin.nonLinearEffects``.
"""

import numpy as np

from oracles import assert_close
from test_against_idyntree import RTOL, TestAgainstIDynTree as _CoreVsOracle


class TestAgainstPinocchio(_CoreVsOracle):
    oracle_kind = "pinocchio"

    def test_bias_against_nonlinear_effects(self, kd, ref, rep, state):
        st = state
        v = (st.w_H_b, st.s, st.base_vel, st.s_dot)
        assert_close(kd.bias_force(*v), ref.nonlinear_effects(rep, *v), f"bias_force vs nonLinearEffects {rep}", RTOL)

    def test_aba_zero_torque_free_fall(self, kd, ref, case, rep, state):
        """Zero torques and no velocity: the whole robot falls; the joints may still move."""
        st = state
        zero = np.zeros(case.n)
        assert_close(kd.aba(st.w_H_b, st.s, np.zeros(6), zero, zero), ref.aba(rep, st.w_H_b, st.s, np.zeros(6), zero, zero),
                     f"aba free fall {rep}", RTOL)
