"""The frozen, flat multibody model built from a URDF (Model / scratch-free algorithms split).

Bodies are the rigid groups that movable joints separate: body 0 is the floating base (the
root link plus every link welded to it by fixed joints); body ``k + 1`` is moved by internal
joint ``k``. Bodies are in depth-first order, so ``parent[i] < i``. Every URDF link stays a
*frame* rigidly attached to one body, so kinematics reaches links behind fixed joints while the
dynamics sees their inertia lumped into the body.

A joint is a screw: ``parent_body_H_body(q) = X0 @ exp(S q)``, with ``S = [v; w]`` (6,) in the
body frame ([linear; angular]); ``|w| = 1`` for revolute/continuous joints, ``w = 0`` and
``|v| = 1`` for prismatic ones. The screw form lets a tree be re-rooted at any link.
Joint coordinates are ordered as ``joints_name_list``; ``coordinate[k]`` maps internal joint ``k``
to its position in that list.
"""

from dataclasses import dataclass

import numpy as np

from .kinematics import (body_terms, joint_axes, joint_basis, quaternion_basis,
                         spatial_inertia)
from .spatial import skew
from .urdf import MOVABLE_TYPES, load_urdf

__all__ = ["Model", "MimicJoints", "build_model"]


@dataclass(frozen=True, eq=False)
class Model:
    """Constant model data; all arrays are read-only. N bodies, n = N - 1 joints, F frames."""

    name: str
    root_link: str
    joint_names: tuple        # internal order (body k+1 <-> joint k), length n
    joints_name_list: tuple   # user order
    coordinate: np.ndarray    # (n,) user index of internal joint k
    internal: np.ndarray      # (n,) internal index of user joint i
    parent: np.ndarray        # (N,) parent body, -1 for the base
    depth: np.ndarray         # (N,) base = 1
    jumps: tuple              # pointer-jumping ancestor tables over N + 1 nodes (node N = world)
    ancestor: np.ndarray      # (N, N) 1.0 where row is an ancestor of (or equal to) column
    paths: tuple              # per body: internal joint indices from the base to it
    path_coordinates: tuple   # per body: the same joints' user indices (joints_name_list)
    path_basis: tuple         # per body: basis[paths[body]], contiguous
    path_axes: tuple          # per body: joint_axes[paths[body]] (d, 4, 3), contiguous
    x0: np.ndarray            # (n, 4, 4) parent_body_H_joint at zero position
    screw: np.ndarray         # (n, 6) joint screw in the body frame
    revolute: np.ndarray      # (n,) bool
    basis: np.ndarray         # (n, 4, 16) local transform basis (kinematics.joint_basis)
    mass: np.ndarray          # (N,) kg
    inertia: np.ndarray       # (N, 6, 6) spatial inertia about the body origin, body axes
    body_terms: np.ndarray    # (N, 4, 4) pseudo-inertia + scaled Plucker matrix (kinematics)
    screw_unscale: np.ndarray # (n, 1) the inverse scales of those Plucker matrices
    frame_names: tuple        # every URDF link
    frame_body: np.ndarray    # (F,) body of each frame
    body_H_frame: np.ndarray  # (F, 4, 4)
    frame_index: dict         # name -> frame index
    joint_frames: tuple       # (parent link, child link) of each internal joint
    link_H_joint: np.ndarray  # (n, 4, 4) parent_link_H_parent_body: TF = this @ local transform
    tf_quaternions: np.ndarray  # (n, 3, 4) user order: the TF's quaternion basis (kinematics)
    static_edges: tuple       # (joint, parent link, child link, parent_H_child) of the others
    mimic: dict               # mimic joint -> (master coordinate, not a mimic, mult, offset)
    limits: dict              # joint name -> (lower, upper, effort, velocity)
    notes: tuple = ()         # what the URDF has that the model does not follow (RobotSpec)

    @property
    def n(self):
        """Number of joint coordinates."""
        return len(self.joint_names)

    @property
    def total_mass(self):
        return float(self.mass.sum())


def _neighbours(spec):
    """Undirected adjacency: link -> [(joint, other link, forward?)] in URDF file order."""
    adj = {name: [] for name in spec.links}
    for j in spec.joints:
        adj[j.parent].append((j, j.child, True))
        adj[j.child].append((j, j.parent, False))
    return adj


def _inverse(h):
    out = np.eye(4)
    out[:3, :3] = h[:3, :3].T
    out[:3, 3] = -h[:3, :3].T @ h[:3, 3]
    return out


def _edge(joint, forward, movable):
    """(X0, screw) of an edge traversed parent->child (forward) or child->parent."""
    axis = joint.axis
    s = np.zeros(6)
    if movable:
        s[:3] = axis if joint.type == "prismatic" else 0.0
        s[3:] = 0.0 if joint.type == "prismatic" else axis
    if forward:
        return joint.origin, s
    o = joint.origin  # reversed: P_H_C(q)^-1 = O^-1 exp(-Ad_O S q)
    r, p = o[:3, :3], o[:3, 3]
    w = r @ s[3:]
    return _inverse(o), -np.concatenate([r @ s[:3] + np.cross(p, w), w])


def _traverse(spec, root):
    """Depth-first walk from ``root``: yields (link, joint, forward, parent link)."""
    adj = _neighbours(spec)
    order, seen, stack = [], {root}, [(root, None, True, None)]
    while stack:
        link, joint, forward, parent = stack.pop()
        order.append((link, joint, forward, parent))
        nxt = [(other, j, fwd, link) for j, other, fwd in adj[link] if other not in seen]
        seen.update(other for other, *_ in nxt)
        stack.extend((o, j, f, l) for o, j, f, l in reversed(nxt))
    return order


def _lumped_inertia(links_of_body, spec):
    """Mass, first moment, rotational inertia about the body origin (body frame)."""
    m, h, ibar = 0.0, np.zeros(3), np.zeros((3, 3))
    for link, b_h_l in links_of_body:
        ls = spec.links[link]
        r, p = b_h_l[:3, :3], b_h_l[:3, 3]
        c = p + r @ ls.com
        cx = skew(c)
        m += ls.mass
        h += ls.mass * c
        ibar += r @ ls.inertia @ r.T - ls.mass * cx @ cx
    return m, h, ibar


def _check_joint_list(spec, joints_name_list):
    by_name = {j.name: j for j in spec.joints}
    seen = set()
    for name in joints_name_list:
        j = by_name.get(name)
        if j is None:
            raise ValueError(f"joints_name_list entry '{name}' is not a joint of the URDF")
        if j.type not in MOVABLE_TYPES:
            raise ValueError(f"joints_name_list entry '{name}' is a {j.type} joint, "
                             f"not a movable (revolute, continuous, prismatic) one")
        if name in seen:
            raise ValueError(f"joints_name_list entry '{name}' appears twice")
        seen.add(name)


def _jump_tables(parent, depth):
    n_nodes = len(parent) + 1
    world = n_nodes - 1
    anc = np.append(np.where(parent < 0, world, parent), world).astype(np.intp)
    tables, reach = [], 1
    while reach < depth.max():   # after k products each body is composed with its 2^k-th ancestor
        tables.append(anc)
        anc = anc[anc]
        reach *= 2
    return tuple(tables)


def _frozen(array):
    array = np.ascontiguousarray(array)
    array.flags.writeable = False
    return array


def _paths(parent):
    paths = [np.zeros(0, dtype=np.intp)]
    for i in range(1, len(parent)):
        paths.append(np.append(paths[parent[i]], i - 1).astype(np.intp))
    for p in paths:
        p.flags.writeable = False
    return tuple(paths)


def _ancestor_matrix(parent):
    n = len(parent)
    a = np.eye(n)
    for i in range(1, n):
        a[:, i] += a[:, parent[i]]
    return a


def _mimic_map(spec, active):
    """{mimic joint: (master, multiplier, offset)} of the active mimic joints, a chain of
    mimics (a mimic of a mimic) resolved to its first master that is no mimic:
    ``q = m1 (m2 q_master + o2) + o1``. A mimic whose master is not active (fixed, left out
    of joints_name_list) is an ordinary joint. ValueError naming the joints of a cycle."""
    declared = {j.name: j.mimic for j in spec.joints
                if j.mimic is not None and j.name in active and j.mimic[0] in active}
    out = {}

    def resolve(name, chain):
        if name in chain:
            raise ValueError(f"mimic joints form a cycle: {' -> '.join(chain + (name,))}")
        if name not in out:
            master, mult, offset = declared[name]
            if master in declared:
                root, mult2, offset2 = resolve(master, chain + (name,))
                master, mult, offset = root, mult * mult2, mult * offset2 + offset
            out[name] = (master, mult, offset)
        return out[name]

    for name in declared:
        resolve(name, ())
    return out


class MimicJoints:
    """The one place that fills mimic joints: position ``m q_master + o``, velocity
    ``m dq_master``.

    ``joint_names``: the order of the (n,) arrays; ``mimic``: {mimic joint: (master joint,
    multiplier, offset)} whose masters are no mimics (as ``Model.mimic`` and
    ``KinDynComputations.mimic_joints`` give them). ``joints`` and ``masters`` are the index
    arrays (k,) of the mimics and of their masters.
    """

    def __init__(self, joint_names, mimic):
        index = {name: i for i, name in enumerate(joint_names)}
        rows = [(index[j], index[m], mult, off) for j, (m, mult, off) in mimic.items()]
        columns = list(zip(*rows)) or [(), (), (), ()]
        self.joints, self.masters = (np.array(c, dtype=np.intp) for c in columns[:2])
        self.multipliers, self.offsets = (np.array(c, dtype=float) for c in columns[2:])

    def positions(self, s):
        """Copy of joint positions ``s`` (n,) (or (K, n): K states) with the mimic joints set
        from their masters."""
        out = np.array(s, dtype=float)
        if self.joints.size:
            out[..., self.joints] = self.multipliers * out[..., self.masters] + self.offsets
        return out

    def velocities(self, s_dot):
        """Copy of joint velocities (or accelerations) ``s_dot`` (n,) with the mimic joints
        set from their masters; (K, n): K states."""
        out = np.array(s_dot, dtype=float)
        if self.joints.size:
            out[..., self.joints] = self.multipliers * out[..., self.masters]
        return out


def build_model(urdf, joints_name_list=None, root_link=None):
    """Build a :class:`Model` from a URDF path or text (see ``KinDynComputations``)."""
    spec = load_urdf(urdf)
    root = spec.root if root_link is None else root_link
    if root not in spec.links:
        raise ValueError(f"root_link '{root}' is not a link of the URDF")
    walk = _traverse(spec, root)
    if joints_name_list is None:
        joints_name_list = [j.name for _, j, _, _ in walk[1:] if j.type in MOVABLE_TYPES]
    joints_name_list = tuple(joints_name_list)
    _check_joint_list(spec, joints_name_list)
    active = set(joints_name_list)

    body_of, b_h_link = {root: 0}, {root: np.eye(4)}
    parent, depth, x0, screw, revolute, names = [-1], [1], [], [], [], []
    joint_frames, link_H_joint, static_edges = [], [], []
    for link, joint, forward, prev in walk[1:]:
        movable = joint.name in active
        x, s = _edge(joint, forward, movable)
        pb = body_of[prev]
        if movable:
            body_of[link], b_h_link[link] = len(parent), np.eye(4)
            parent.append(pb)
            depth.append(depth[pb] + 1)
            x0.append(b_h_link[prev] @ x)
            screw.append(s)
            revolute.append(joint.type != "prismatic")
            names.append(joint.name)
            joint_frames.append((prev, link))
            link_H_joint.append(_inverse(b_h_link[prev]))
        else:  # fixed, or a movable joint left out of joints_name_list (held at zero)
            body_of[link], b_h_link[link] = pb, b_h_link[prev] @ x
            static_edges.append((joint.name, prev, link, x))
    parent, depth = np.array(parent, dtype=np.intp), np.array(depth)

    n_bodies = len(parent)
    inertia = [_lumped_inertia([(l, b_h_link[l]) for l in body_of if body_of[l] == b], spec)
               for b in range(n_bodies)]
    frame_names = tuple(link for link, *_ in walk)
    position = {name: i for i, name in enumerate(joints_name_list)}
    coordinate = np.array([position[nm] for nm in names], dtype=np.intp)
    internal = np.argsort(coordinate)
    by_name = {j.name: j for j in spec.joints}
    mimic = _mimic_map(spec, active)
    x0, screw = np.array(x0).reshape(-1, 4, 4), np.array(screw).reshape(-1, 6)
    link_H_joint = np.array(link_H_joint).reshape(-1, 4, 4)
    revolute = np.array(revolute, dtype=bool)
    basis, paths = joint_basis(x0, screw, revolute), _paths(parent)
    axes = joint_axes(screw, revolute)
    spatial = spatial_inertia(*(np.array(v) for v in zip(*inertia)))
    terms, unscale = body_terms(spatial, screw)
    model = Model(
        name=spec.name, root_link=root, joint_names=tuple(names),
        joints_name_list=joints_name_list, coordinate=coordinate, internal=internal,
        parent=parent, depth=depth, jumps=_jump_tables(parent, depth),
        ancestor=_ancestor_matrix(parent),
        paths=paths,
        path_coordinates=tuple(_frozen(coordinate[p]) for p in paths),
        path_basis=tuple(_frozen(basis[p]) for p in paths),
        path_axes=tuple(_frozen(axes[p]) for p in paths),
        x0=x0, screw=screw, revolute=revolute,
        basis=basis,
        mass=np.array([m for m, _, _ in inertia]),
        inertia=spatial,
        body_terms=terms, screw_unscale=unscale,
        frame_names=frame_names,
        frame_body=np.array([body_of[f] for f in frame_names], dtype=np.intp),
        body_H_frame=np.array([b_h_link[f] for f in frame_names]),
        frame_index={f: i for i, f in enumerate(frame_names)},
        joint_frames=tuple(joint_frames),
        link_H_joint=link_H_joint,
        tf_quaternions=quaternion_basis(link_H_joint @ x0, screw, revolute)[internal],
        static_edges=tuple(static_edges),
        mimic=mimic,
        limits={nm: by_name[nm].limits for nm in joints_name_list},
        notes=spec.notes,
    )
    for value in vars(model).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return model
