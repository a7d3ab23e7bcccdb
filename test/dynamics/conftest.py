"""Shared fixtures of the dynamics tests: models (built once per session), oracles, states.

Tests that request ``model_name``, ``rep`` or ``state_index`` are parametrised over
:data:`MODEL_NAMES`, the three representations and :data:`N_STATES` random states
(``pytest_generate_tests`` below).  The core (``kin_dyn_ros.dynamics``) is imported
lazily, so ``test_oracles_agree.py`` runs without it.
"""

import functools
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
for p in (str(HERE), str(REPO)):
    if p not in sys.path:
        sys.path.insert(0, p)

import icub_models  # noqa: E402
from oracles import (  # noqa: E402
    GRAVITY,
    REPRESENTATIONS,
    IDynTreeOracle,
    PinocchioOracle,
    default_joint_order,
    load_random_tree,
    make_case,
    core_representation,
    random_state,
    urdf_structure,
)


random_tree_urdf = load_random_tree()

ICUB_MODEL = "iCubGazeboV2_5"
MODEL_NAMES = ("icub", "tree12", "chain10_prismatic", "massless_root")
N_STATES = 2


def _build_cases():
    icub = pathlib.Path(icub_models.get_model_file(ICUB_MODEL)).read_text()
    rng = np.random.default_rng(0)
    _, icub_links, _ = urdf_structure(icub)
    # iCub has 213 links: compare Jacobians on the feet, hands, head, base and a few
    # fixed-joint children (sensors, skin, dh frames) picked by a seeded draw.
    named = ["root_link", "l_sole", "r_sole", "l_hand", "r_hand", "head", "chest", "l_foot", "r_upper_leg"]
    named = [f for f in named if f in icub_links]
    others = [f for f in icub_links if f not in named]
    icub_frames = named + list(rng.choice(others, size=8, replace=False))
    tree12 = random_tree_urdf(12, seed=1, branching=True)
    tree12_joints = list(rng.permutation(default_joint_order(tree12)))  # not the default order
    cases = [
        make_case("icub", icub, jacobian_frames=icub_frames, wrench_frames=("l_sole", "r_sole")),
        make_case("tree12", tree12, joints=tree12_joints),
        make_case(
            "chain10_prismatic",
            random_tree_urdf(10, seed=2, branching=False, joint_types=("revolute", "prismatic")),
        ),
        make_case("massless_root", random_tree_urdf(9, seed=3, massless_root=True, n_fixed=12)),
    ]
    return {c.name: c for c in cases}


@pytest.fixture(scope="session")
def model_cases():
    """``{name: ModelCase}`` for :data:`MODEL_NAMES`, built once."""
    return _build_cases()


@pytest.fixture(scope="session")
def icub_urdf():
    """The iCubGazeboV2_5 URDF text."""
    return pathlib.Path(icub_models.get_model_file(ICUB_MODEL)).read_text()


@pytest.fixture(scope="session")
def icub_joints(icub_urdf):
    """Every movable joint of iCubGazeboV2_5 (32), in the spec's default order."""
    return default_joint_order(icub_urdf)


@pytest.fixture(scope="session")
def oracles(model_cases):
    """``oracles[kind, model_name]`` with kind 'idyntree' or 'pinocchio'; built on first use."""

    class _Oracles:
        @functools.cache
        def __getitem__(self, key):
            kind, name = key
            case = model_cases[name]
            cls = {"idyntree": IDynTreeOracle, "pinocchio": PinocchioOracle}[kind]
            return cls(case.urdf, case.joints, case.root, GRAVITY)

    return _Oracles()


@pytest.fixture(scope="session")
def core_models(model_cases):
    """``core_models(name, gravity=GRAVITY)`` -> the core's KinDynComputations, built once per key."""

    @functools.cache
    def build(name, gravity=tuple(GRAVITY)):
        from kin_dyn_ros.dynamics import KinDynComputations

        case = model_cases[name]
        return KinDynComputations(case.urdf, case.core_joints, None, np.array(gravity, dtype=float))

    return build


@pytest.fixture(scope="session")
def make_state():
    """The random-state factory: ``make_state(case, rng) -> State``."""
    return random_state


@pytest.fixture(scope="session")
def states(model_cases):
    """``states[name]``: :data:`N_STATES` seeded random states per model."""
    out = {}
    for i, name in enumerate(MODEL_NAMES):
        rng = np.random.default_rng([0, i])
        out[name] = [random_state(model_cases[name], rng) for _ in range(N_STATES)]
    return out


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def pytest_generate_tests(metafunc):
    if "model_name" in metafunc.fixturenames:
        metafunc.parametrize("model_name", MODEL_NAMES)
    if "rep" in metafunc.fixturenames:
        metafunc.parametrize("rep", REPRESENTATIONS)
    if "state_index" in metafunc.fixturenames:
        metafunc.parametrize("state_index", range(N_STATES))


@pytest.fixture
def case(model_cases, model_name):
    return model_cases[model_name]


@pytest.fixture
def state(states, model_name, state_index):
    return states[model_name][state_index]


@pytest.fixture
def kd(core_models, model_name, request):
    """The core for ``model_name``, set to the test's representation (MIXED if it has none)."""
    kd = core_models(model_name)
    rep = request.getfixturevalue("rep") if "rep" in request.fixturenames else "MIXED"
    kd.set_frame_velocity_representation(core_representation(rep))
    return kd
