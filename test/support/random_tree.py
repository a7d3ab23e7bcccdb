"""Random URDF kinematic trees for tests and benchmarks (test support, not installed).

Importable as ``random_tree`` from the tests (test/conftest.py puts test/support on
``sys.path``) and from bench/bench_core.py.

A URDF counterpart of spatial_v2's ``autoTree``: :func:`random_tree_urdf` writes a
random but physically valid robot (a chain or a branching tree) as URDF text, with
the awkward corners of real robot descriptions switched on on purpose: joint axes of
non-unit length, ``<origin>`` tags given with ``xyz`` and ``rpy``, with ``xyz`` only,
or left out (URDF default: identity), inertials whose frame is rotated and offset,
extra links hanging on fixed joints (massive ones, which a dynamics library must lump
into their parent, and massless "sensor frames" like a humanoid's skin patches), an
optionally massless root or leaf, joint limits and ``<mimic>`` tags.

Pure NumPy and the standard library: no ROS, no URDF parser.  Deterministic for a
given seed, and fast enough to build trees of a few hundred joints in milliseconds.
"""

import numpy as np

__all__ = ["random_tree_urdf"]

_MOVABLE_TYPES = ("revolute", "continuous", "prismatic")


def _fmt(values):
    """Space-separated floats written with 17 significant digits (exact round trip)."""
    return " ".join(format(float(v), ".17g") for v in values)


def _random_rotation(rng):
    """A uniformly distributed rotation matrix, shape (3, 3), from a random unit quaternion."""
    w, x, y, z = rng.normal(size=4)
    n = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _origin_tag(rng, scale, p_missing, p_xyz_only):
    """An ``<origin>`` element (or ``""``: URDF default identity) with random xyz and rpy."""
    u = rng.random()
    if u < p_missing:
        return ""
    xyz = rng.uniform(-scale, scale, size=3)
    if u < p_missing + p_xyz_only:
        return f'<origin xyz="{_fmt(xyz)}"/>'
    rpy = rng.uniform(-np.pi, np.pi, size=3)
    return f'<origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>'


def _inertial_tag(rng, p_missing_origin):
    """A random, physically valid ``<inertial>`` element.

    The principal moments are built from positive second moments of the mass
    distribution (``Ixx = m(b + c)``, ...), so they satisfy the triangle inequality
    strictly; a random rotation then makes the tensor full.  The inertial frame is
    itself offset and rotated (``<origin xyz rpy>``) unless the draw leaves it out.
    """
    mass = rng.uniform(0.2, 5.0)
    a, b, c = mass * rng.uniform(1e-3, 4e-2, size=3)
    principal = np.array([b + c, a + c, a + b])
    rot = _random_rotation(rng)
    inertia = rot @ np.diag(principal) @ rot.T
    origin = _origin_tag(rng, 0.15, p_missing_origin, 0.0)
    return (
        f"<inertial>{origin}"
        f'<mass value="{_fmt([mass])}"/>'
        f'<inertia ixx="{_fmt([inertia[0, 0]])}" ixy="{_fmt([inertia[0, 1]])}" '
        f'ixz="{_fmt([inertia[0, 2]])}" iyy="{_fmt([inertia[1, 1]])}" '
        f'iyz="{_fmt([inertia[1, 2]])}" izz="{_fmt([inertia[2, 2]])}"/>'
        "</inertial>"
    )


def _axis(rng):
    """A joint axis of random length in [0.2, 3]; one in three is (anti)aligned with x, y or z."""
    if rng.random() < 1.0 / 3.0:
        direction = np.zeros(3)
        direction[rng.integers(3)] = rng.choice([-1.0, 1.0])
    else:
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
    return direction * rng.uniform(0.2, 3.0)


def random_tree_urdf(
    n_joints,
    seed=0,
    *,
    branching=True,
    joint_types=_MOVABLE_TYPES,
    n_fixed=None,
    massless_root=False,
    massless_leaf=False,
    mimic=False,
):
    """Generate a random URDF kinematic tree.

    Parameters
    ----------
    n_joints : int
        Number of movable joints (revolute, continuous or prismatic), >= 1 (>= 2 when
        ``mimic`` is set).
    seed : int, optional
        Seed of the ``numpy.random.default_rng`` stream; the same arguments always give
        the same text.
    branching : bool, optional
        True: every new body hangs on a randomly chosen existing link (a tree, possibly
        through fixed-joint frames).  False: the movable joints form a single serial
        chain ``link_000 -> link_001 -> ...``; fixed frames still hang anywhere.
    joint_types : sequence of str, optional
        Types drawn uniformly for the movable joints, among ``"revolute"``,
        ``"continuous"`` and ``"prismatic"``.
    n_fixed : int, optional
        Number of extra links attached by fixed joints (default ``n_joints // 2``).
        About 40 % of them carry an inertial (to be lumped into their parent), the rest
        are massless frames.
    massless_root : bool, optional
        Give the root link ``link_000`` no ``<inertial>``.
    massless_leaf : bool, optional
        Make the child of the last movable joint a massless leaf (nothing hangs on it),
        so that the joint space inertia matrix is singular: forward dynamics must refuse.
    mimic : bool, optional
        Turn about a quarter of the movable joints (at least one where the joint types
        allow it, never ``joint_000``) into ``<mimic>`` joints of an earlier non-mimic
        joint of the same kind (rotational or prismatic).

    Returns
    -------
    str
        The URDF XML text.  Movable joints are named ``joint_000`` ... and their child
        links ``link_001`` ...; the root is ``link_000``; fixed frames are ``frame_000``
        ... attached by ``fixed_000`` ...  Axes have random non-unit lengths, and some
        joints and inertials have no ``<origin>``.  In branching mode the elements are
        written in shuffled order, so the file order differs from the tree order.

    Raises
    ------
    ValueError
        If ``n_joints`` is too small or ``joint_types`` names a non-movable type.
    """
    n_joints = int(n_joints)
    if n_joints < (2 if mimic else 1):
        raise ValueError(f"expected n_joints >= {2 if mimic else 1}, got {n_joints}")
    joint_types = tuple(joint_types)
    bad = [t for t in joint_types if t not in _MOVABLE_TYPES]
    if bad or not joint_types:
        raise ValueError(f"expected joint_types among {_MOVABLE_TYPES}, got {joint_types}")
    n_fixed = n_joints // 2 if n_fixed is None else int(n_fixed)
    rng = np.random.default_rng(seed)

    links = {"link_000": "" if massless_root else _inertial_tag(rng, 0.2)}
    joints = []  # (name, type, [xml elements]) in creation order
    # Interleave the fixed frames among the movable joints so that movable joints can
    # hang on fixed frames too (as a humanoid's limbs hang on its FT-sensor frames).
    kinds = np.array(["m"] * n_joints + ["f"] * n_fixed)
    if massless_leaf:
        kinds = np.concatenate([rng.permutation(kinds[1:]), ["m"]])
    else:
        kinds = rng.permutation(kinds)
    chain_tip = "link_000"
    movable = []  # (name, type)
    i_mov = i_fix = 0
    for k, kind in enumerate(kinds):
        parents = list(links)
        if kind == "m":
            child = f"link_{i_mov + 1:03d}"
            name = f"joint_{i_mov:03d}"
            parent = parents[rng.integers(len(parents))] if branching else chain_tip
            jtype = joint_types[rng.integers(len(joint_types))]
            is_leaf = massless_leaf and k == len(kinds) - 1
            links[child] = "" if is_leaf else _inertial_tag(rng, 0.2)
            body = [
                _origin_tag(rng, 0.3, 0.15, 0.1),
                f'<parent link="{parent}"/><child link="{child}"/>',
                f'<axis xyz="{_fmt(_axis(rng))}"/>',
            ]
            effort, velocity = rng.uniform(10.0, 100.0), rng.uniform(1.0, 10.0)
            if jtype == "revolute":
                lo, hi = rng.uniform(-3.0, -0.3), rng.uniform(0.3, 3.0)
            elif jtype == "prismatic":
                lo, hi = rng.uniform(-0.5, -0.05), rng.uniform(0.05, 0.5)
            if jtype == "continuous":
                body.append(f'<limit effort="{_fmt([effort])}" velocity="{_fmt([velocity])}"/>')
            else:
                body.append(
                    f'<limit effort="{_fmt([effort])}" velocity="{_fmt([velocity])}" '
                    f'lower="{_fmt([lo])}" upper="{_fmt([hi])}"/>'
                )
            joints.append((name, jtype, body))
            movable.append((name, jtype))
            chain_tip = child
            i_mov += 1
        else:
            child = f"frame_{i_fix:03d}"
            name = f"fixed_{i_fix:03d}"
            if massless_leaf:  # keep the massless leaf a leaf
                parents = [p for p in parents if p != f"link_{n_joints:03d}"]
            parent = parents[rng.integers(len(parents))]
            links[child] = _inertial_tag(rng, 0.2) if rng.random() < 0.4 else ""
            body = [_origin_tag(rng, 0.3, 0.15, 0.1), f'<parent link="{parent}"/><child link="{child}"/>']
            joints.append((name, "fixed", body))
            i_fix += 1

    if mimic:
        n_mimic = max(1, n_joints // 4)
        kind_of = {"revolute": "r", "continuous": "r", "prismatic": "p"}
        by_name = {name: body for name, _, body in joints}
        mimics, masters_used = set(), set()
        for c in rng.permutation(np.arange(1, n_joints)):
            if len(mimics) == n_mimic:
                break
            if c in masters_used:
                continue
            name, jtype = movable[c]
            masters = [
                m for m, (_, mt) in enumerate(movable[:c]) if m not in mimics and kind_of[mt] == kind_of[jtype]
            ]
            if not masters:
                continue
            mimics.add(int(c))
            i_master = masters[rng.integers(len(masters))]
            masters_used.add(i_master)
            master = movable[i_master][0]
            multiplier, offset = rng.uniform(-2.0, 2.0), rng.uniform(-0.3, 0.3)
            by_name[name].append(
                f'<mimic joint="{master}" multiplier="{_fmt([multiplier])}" offset="{_fmt([offset])}"/>'
            )

    link_xml = [f'  <link name="{name}">{inertial}</link>' for name, inertial in links.items()]
    joint_xml = [f'  <joint name="{name}" type="{jtype}">{"".join(body)}</joint>' for name, jtype, body in joints]
    if branching:
        link_xml = [link_xml[i] for i in rng.permutation(len(link_xml))]
        joint_xml = [joint_xml[i] for i in rng.permutation(len(joint_xml))]
    return (
        '<?xml version="1.0"?>\n'
        f'<robot name="random_tree_{n_joints}_{seed}">\n' + "\n".join(link_xml + joint_xml) + "\n</robot>\n"
    )
