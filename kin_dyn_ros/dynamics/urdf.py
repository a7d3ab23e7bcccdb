"""URDF reading: the only module that imports ``urdf_parser_py`` (PyPI package ``urdfdom-py``).

It turns a URDF (file path or XML text) into plain, validated records (:class:`LinkSpec`,
:class:`JointSpec`) with URDF defaults filled in: a missing ``<origin>`` is the identity, a
missing ``<axis>`` is (1, 0, 0), a missing ``<inertial>`` is a massless link. Axes are
normalised. Anything the dynamics cannot represent raises ``ValueError`` naming the offender.
"""

import contextlib
import io
import os
from dataclasses import dataclass, field, replace

import numpy as np

from .spatial import homogeneous, rpy_to_matrix

__all__ = ["LinkSpec", "JointSpec", "RobotSpec", "load_urdf", "MOVABLE_TYPES"]

MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
_SUPPORTED_TYPES = MOVABLE_TYPES + ("fixed",)


@dataclass(frozen=True)
class LinkSpec:
    """Inertial data of one link, in the link frame.

    ``mass`` [kg]; ``com`` (3,) [m]; ``inertia`` (3, 3) [kg m^2] about the CoM, link axes.
    """

    name: str
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))


@dataclass(frozen=True)
class JointSpec:
    """One URDF joint. ``origin`` is parent_link_H_joint_frame (4, 4) at zero position;
    ``axis`` (3,) is a unit vector in the joint (= child link) frame."""

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    mimic: tuple = None            # (master joint name, multiplier, offset) or None
    limits: tuple = None           # (lower, upper, effort, velocity) or None


@dataclass(frozen=True)
class RobotSpec:
    """A validated URDF tree: links by name, joints in file order, and the root link.
    ``notes``: what the URDF has that the model does not follow, one sentence each."""

    name: str
    links: dict
    joints: tuple
    root: str
    notes: tuple = ()

    def children(self, link):
        """Joints whose parent is ``link``, in URDF file order."""
        return [j for j in self.joints if j.parent == link]


def _origin_matrix(origin):
    if origin is None:
        return np.eye(4)
    xyz = origin.xyz if origin.xyz is not None else (0.0, 0.0, 0.0)
    rpy = origin.rpy if origin.rpy is not None else (0.0, 0.0, 0.0)
    return homogeneous(rpy_to_matrix(rpy), np.asarray(xyz, dtype=float))


def _link_spec(link):
    inertial = link.inertial
    if inertial is None or inertial.mass is None:
        return LinkSpec(link.name)
    h = _origin_matrix(inertial.origin)
    i = inertial.inertia
    local = np.zeros((3, 3)) if i is None else np.array(
        [[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]], dtype=float)
    r = h[:3, :3]
    return LinkSpec(link.name, float(inertial.mass), h[:3, 3].copy(), r @ local @ r.T)


def _joint_spec(joint, link_names):
    if joint.type not in _SUPPORTED_TYPES:
        raise ValueError(
            f"joint '{joint.name}' has type '{joint.type}': only revolute, continuous, prismatic "
            f"and fixed joints are supported inside the URDF (the floating base is implicit; a "
            f"floating joint is accepted only from a massless root link, e.g. 'world', to the "
            f"robot's base)")
    for role, link in (("parent", joint.parent), ("child", joint.child)):
        if link not in link_names:
            raise ValueError(f"joint '{joint.name}' names a missing {role} link '{link}'")
    axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    if joint.type != "fixed":
        norm = np.linalg.norm(axis)
        if not np.isfinite(norm) or norm < 1e-12:
            raise ValueError(f"joint '{joint.name}' has a zero or invalid axis {axis.tolist()}")
        axis = axis / norm
    mimic = None
    if joint.mimic is not None:
        mimic = (joint.mimic.joint,
                 1.0 if joint.mimic.multiplier is None else float(joint.mimic.multiplier),
                 0.0 if joint.mimic.offset is None else float(joint.mimic.offset))
    limits = None
    if joint.limit is not None:
        lim = joint.limit
        limits = tuple(float("nan") if v is None else float(v)
                       for v in (lim.lower, lim.upper, lim.effort, lim.velocity))
    return JointSpec(joint.name, joint.type, joint.parent, joint.child,
                     _origin_matrix(joint.origin), axis, mimic, limits)


def _find_root(links, joints):
    parent_of = {}
    for j in joints:
        if j.child in parent_of:
            raise ValueError(f"link '{j.child}' is the child of two joints "
                             f"('{parent_of[j.child].name}' and '{j.name}'): the URDF has a cycle")
        parent_of[j.child] = j
    roots = [name for name in links if name not in parent_of]
    if len(roots) != 1:
        raise ValueError(f"the URDF must have exactly one root link, found {len(roots)}: "
                         f"{sorted(roots) if roots else 'none (the joints form a cycle)'}")
    return roots[0]


def _check_connected(spec):
    seen, stack = set(), [spec.root]
    while stack:
        link = stack.pop()
        seen.add(link)
        stack.extend(j.child for j in spec.children(link) if j.child not in seen)
    missing = sorted(set(spec.links) - seen)
    if missing:
        raise ValueError(f"links not reachable from the root '{spec.root}' (a cycle): {missing}")


def _unfollowable_mimics(joints):
    """``joints`` without the ``<mimic>`` of each joint whose master is not a movable joint of
    the URDF (missing, or fixed: e.g. a gripper that xacro made rigid): such a joint moves on
    its own. Returns (joints, a note for each)."""
    by_name = {j.name: j for j in joints}
    out, notes = [], []
    for j in joints:
        master = None if j.mimic is None else by_name.get(j.mimic[0])
        if j.mimic is not None and (master is None or master.type not in MOVABLE_TYPES):
            notes.append(f"mimic joint '{j.name}' follows '{j.mimic[0]}', which is not a "
                         f"movable joint of the URDF: '{j.name}' is an ordinary joint")
            j = replace(j, mimic=None)
        out.append(j)
    return tuple(out), tuple(notes)


def _read_text(urdf):
    """The XML text of ``urdf`` (text or a file path), without a byte-order mark."""
    text = str(urdf).lstrip("\ufeff")
    if not text.lstrip().startswith("<") and os.path.isfile(text):
        with open(text, "r", encoding="utf-8-sig") as f:
            return f.read()
    if not text.lstrip().startswith("<"):
        raise ValueError(f"urdf is neither an existing file nor URDF XML text: {text[:80]!r}")
    return text


def _parse_xml(text):
    from urdf_parser_py import urdf as urdf_module
    from urdf_parser_py.xml_reflection import core

    previous = core.on_error
    core.on_error = lambda message: None  # unknown tags (gazebo, transmission) are normal
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return urdf_module.URDF.from_xml_string(text.encode("utf-8"))
    except Exception as exc:  # the parser raises many types; report one
        raise ValueError(f"cannot parse the URDF: {exc}") from exc
    finally:
        core.on_error = previous


def _drop_floating_root(robot):
    """Remove a massless root link (e.g. ``world``) whose only joint is ``floating`` from the
    parsed ``robot``, with that joint: its child, the robot's base, becomes the root. The
    floating base is implicit in the dynamics (its pose and velocity are inputs), so the
    joint only restates it, as some URDFs written for simulators do. A floating joint
    anywhere else is still rejected. Returns the notes of what was dropped."""
    floating = [j for j in robot.joints if j.type == "floating"]
    if len(floating) != 1:
        return ()
    joint, root = floating[0], floating[0].parent
    links = [link for link in robot.links if link.name == root]
    touching = [j for j in robot.joints if root in (j.parent, j.child)]
    base_has_parent = any(j.child == joint.child for j in robot.joints if j is not joint)
    massless = all(link.inertial is None or not link.inertial.mass for link in links)
    if len(links) == 1 and touching == [joint] and massless and not base_has_parent:
        robot.joints.remove(joint)
        robot.links.remove(links[0])
        return (f"floating joint '{joint.name}' from the massless root '{root}' dropped with "
                f"it: the floating base is '{joint.child}'",)
    return ()


def load_urdf(urdf):
    """Read and validate a URDF.

    Parameters
    ----------
    urdf : str or os.PathLike
        A file path or the URDF XML text.

    Returns
    -------
    RobotSpec
    """
    robot = _parse_xml(_read_text(urdf))
    notes = _drop_floating_root(robot)
    links = {}
    for link in robot.links:
        if link.name in links:
            raise ValueError(f"link '{link.name}' is defined twice")
        links[link.name] = _link_spec(link)
    names = set()
    for j in robot.joints:
        if j.name in names:
            raise ValueError(f"joint '{j.name}' is defined twice")
        names.add(j.name)
    joints, mimic_notes = _unfollowable_mimics(
        tuple(_joint_spec(j, links) for j in robot.joints))
    if not links:
        raise ValueError("the URDF has no links")
    spec = RobotSpec(robot.name or "", links, joints, _find_root(links, joints),
                     notes + mimic_notes)
    _check_connected(spec)
    return spec
