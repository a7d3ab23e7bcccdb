"""Contact states of iCub's soles for the tests of the node's contact outputs
(test_marker_array.py, test_contact_mechanics.py): the states a standing robot passes
through, as wrenches given in various frames, and a tick of the core under them."""

from types import SimpleNamespace

import numpy as np

from builtin_interfaces.msg import Time

FEET = ('l_sole', 'r_sole')
THRESHOLD = 20.0        # [N]
SOLE = [0.1, 0.04, 0.0, -0.05, 0.04, 0.0, -0.05, -0.04, 0.0, 0.1, -0.04, 0.0]  # [m]


def wrench(fz, tx=0.0, ty=0.0, fx=0.0):
    return np.array([fx, 0.4, fz, tx, ty, 0.02])


CASES = [       # (name, {sole: (frame, wrench)}, the active contacts)
    ('both loaded', {'l_sole': ('l_sole', wrench(180.0, 1.0, -2.0, 3.0)),
                     'r_sole': ('r_foot', wrench(140.0, -0.5, 1.5))}, FEET),   # (in r_sole's)
    ('both loaded, the ZMP outside', {'l_sole': ('l_sole', wrench(180.0, 60.0, -40.0)),
                                      'r_sole': ('r_sole', wrench(140.0, 50.0, 30.0))},
     FEET),
    # (the l_sole's CoP 5 mm inside its sole's toe edge: green, not red)
    ('one below the threshold', {'l_sole': ('l_sole', wrench(200.0, 0.3, -19.0)),
                                 'r_sole': ('r_sole', wrench(5.0))}, FEET[:1]),
    ('one without a wrench', {'r_sole': ('root_link', wrench(150.0, 0.0, 0.2))}, FEET[1:]),
    ('none active', {'l_sole': ('l_sole', wrench(3.0)), 'r_sole': ('r_sole', wrench(1.0))},
     ()),
]


def in_frame(kd, wrenches):
    """``wrenches`` with each one given as (frame, w in the sole's axes about its origin)
    expressed in that frame instead (fixed to the sole: the same at every state)."""
    zero = kd.compute_tick(np.eye(4), np.zeros(kd.NDoF), np.zeros(6), np.zeros(kd.NDoF))
    index, out = kd.model.frame_index, {}
    for sole, (frame, w) in wrenches.items():
        h = np.linalg.solve(zero.world_H_frame(index[frame]), zero.world_H_frame(index[sole]))
        f = h[:3, :3] @ w[:3]
        out[sole] = (frame, np.concatenate([f, h[:3, :3] @ w[3:] + np.cross(h[:3, 3], f)]))
    return out


def tick_of(kd, geometry, wrenches, seed, spread=0.02):
    """The tick of a state (joints ``spread`` [rad] around zero: the soles not quite
    level), under ``wrenches`` (as :func:`in_frame` takes them)."""
    wrenches = in_frame(kd, wrenches)
    rng = np.random.default_rng(seed)
    w_H_b = np.eye(4)
    w_H_b[:3, 3] = [0.1, -0.2, 0.6]
    n = kd.NDoF
    result = kd.compute_tick(w_H_b, spread * rng.normal(size=n), rng.normal(size=6),
                             rng.normal(size=n), None, wrenches, geometry, THRESHOLD)
    return SimpleNamespace(result=result, stamp=Time(sec=12 + seed, nanosec=345 + seed),
                           inputs=SimpleNamespace(wrenches=wrenches))
