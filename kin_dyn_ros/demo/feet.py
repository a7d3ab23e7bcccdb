"""The feet of a humanoid model: which links they are, and what their soles look like.

Pure Python and NumPy (no ROS): used by the demo's command line (:mod:`.__main__`), its
motion source (:mod:`.motion`) and the node parameters it writes (:func:`contacts_yaml`).

Which links are the feet (:func:`guess_feet`, when ``--feet LEFT RIGHT`` is not given):

1. the links whose name contains ``sole``; if they do not give a left and a right foot,
   those that contain ``foot``; then ``ankle`` (case-insensitive);
2. left and right are told apart by a word of the name: ``l`` or ``left`` for the left foot,
   ``r`` or ``right`` for the right one (words are separated by ``_``, ``-``, ``.``, digits
   or a change of case: ``l_sole``, ``left_sole_link``, ``LeftFoot``, ``leg_left_6_link``);
   a name with both or neither is not a foot;
3. on one side, of the candidates on different moving bodies the one on the body furthest
   from the root (Unitree G1: ``left_ankle_roll_link`` below ``left_ankle_pitch_link``); of
   several on that body (frames fixed to it: iCub's ``l_sole`` and its ``l_sole_skin_*``),
   the shortest name.

The guess fails with a one-line :class:`FeetError` naming the candidates when one side has
none, or when the candidates of a side are on different branches of the tree, or tie;
:class:`NoFootLinks` (a FeetError) when no link name contains any of the three words (a
robot arm: the demo then holds the model by its root).

What a sole looks like (:func:`sole_geometry`): the bottom of the collision geometry of the
foot's body (``<box>``, ``<sphere>``, ``<cylinder>`` of the foot link and of every link fixed
to the same moving body; meshes are not read): the convex hull of the points within 5 mm of
the lowest one, in the foot link's frame, on the plane of that lowest point; when the foot
link's name contains ``sole`` its origin is taken to be on the sole (the hull is put in its
xy plane: iCub's ``l_sole``, Talos' ``left_sole_link``). Without such geometry: a 16 x 7 cm
rectangle centred on the foot link's origin, in its xy plane. The foot link's z axis must be
the sole normal (pointing up into the leg), as for iCub, Talos and G1.
"""

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from ..dynamics.contacts import convex_hull
from ..dynamics.spatial import inverse_homogeneous, rpy_to_matrix

__all__ = ["FOOT_WORDS", "NOMINAL_FOOT", "FeetError", "NoFootLinks", "UrdfTree", "Sole",
           "side_of", "guess_feet", "check_feet", "sole_geometry", "contacts_yaml"]

FOOT_WORDS = ("sole", "foot", "ankle")
LEFT_WORDS = frozenset({"l", "left"})
RIGHT_WORDS = frozenset({"r", "right"})
NOMINAL_FOOT = (0.16, 0.07)   # length, width [m] of a sole without collision geometry
SOLE_TOLERANCE = 0.005        # [m] collision points this close to the lowest one are the sole
MIN_SOLE_AREA = 1e-4          # [m^2] a smaller hull (a single sphere, a line) is not a sole
DEFAULT_FRICTION = 0.6


class FeetError(ValueError):
    """The feet cannot be found or guessed (a one-line message)."""


class NoFootLinks(FeetError):
    """No link name contains sole, foot or ankle."""


_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def side_of(name):
    """'left', 'right' or None: the side a link name says (see the module docstring)."""
    words = {w.lower() for part in re.split(r"[_\-.\s/]+", name) for w in _WORD.findall(part)}
    left, right = bool(words & LEFT_WORDS), bool(words & RIGHT_WORDS)
    if left == right:
        return None
    return "left" if left else "right"


class UrdfTree:
    """Links and joints of a URDF text: ``links`` (names, document order), ``parent``
    ({child link: (parent link, joint type)}), ``root``."""

    def __init__(self, urdf_xml):
        root = ET.fromstring(urdf_xml)
        self.element = root
        self.links = [link.get("name") for link in root.findall("link")]
        self.parent = {}
        for joint in root.findall("joint"):
            child, parent = joint.find("child"), joint.find("parent")
            if child is not None and parent is not None:
                self.parent[child.get("link")] = (parent.get("link"), joint.get("type"))
        roots = [link for link in self.links if link not in self.parent]
        self.root = roots[0] if roots else None

    def body(self, link):
        """The moving body a link is fixed to: itself, or its nearest ancestor that is the
        child of a movable joint (or the root)."""
        seen = set()
        while link in self.parent and self.parent[link][1] == "fixed" and link not in seen:
            seen.add(link)
            link = self.parent[link][0]
        return link

    def ancestors(self, link):
        """Links above ``link``, nearest first."""
        out = []
        while link in self.parent and link not in out:
            link = self.parent[link][0]
            out.append(link)
        return out

    def rigid_links(self, link):
        """Every link fixed to the moving body of ``link`` (the body first)."""
        body = self.body(link)
        return [body] + [other for other in self.links
                         if other != body and self.body(other) == body]


def _pick(candidates, tree, side, word):
    """The foot among one side's candidates (see the module docstring)."""
    bodies = {c: tree.body(c) for c in candidates}
    distal = [b for b in set(bodies.values())
              if all(o == b or o in tree.ancestors(b) for o in bodies.values())]
    if len(distal) != 1:
        raise FeetError(f"cannot tell the {side} foot among the links named *{word}* "
                        f"{sorted(candidates)} (on different branches): pass --feet LEFT RIGHT")
    on_body = sorted((c for c in candidates if bodies[c] == distal[0]), key=lambda c: (len(c), c))
    if len(on_body) > 1 and len(on_body[0]) == len(on_body[1]):
        raise FeetError(f"cannot tell the {side} foot between {on_body[0]} and {on_body[1]}: "
                        f"pass --feet LEFT RIGHT")
    return on_body[0]


def guess_feet(tree):
    """(left, right) foot links of a :class:`UrdfTree` (or URDF text) by their names.

    Raises :class:`FeetError` (or :class:`NoFootLinks`) with a one-line message.
    """
    if isinstance(tree, str):
        tree = UrdfTree(tree)
    found = {}
    for word in FOOT_WORDS:
        candidates = [link for link in tree.links if word in link.lower()]
        if not candidates:
            continue
        sides = {"left": [], "right": []}
        for link in candidates:
            side = side_of(link)
            if side is not None:
                sides[side].append(link)
        found[word] = candidates
        if sides["left"] and sides["right"]:
            return (_pick(sides["left"], tree, "left", word),
                    _pick(sides["right"], tree, "right", word))
    if not found:
        raise NoFootLinks(f"no link name contains {', '.join(FOOT_WORDS)}: "
                          "pass --feet LEFT RIGHT to name the feet")
    listed = "; ".join(f"*{w}*: {', '.join(_few(c))}" for w, c in found.items())
    raise FeetError(f"cannot guess the feet: no left and right pair (l/left, r/right in the "
                    f"name) among the links {listed}: pass --feet LEFT RIGHT")


def _few(names, count=6):
    names = sorted(names)
    return names[:count] + ([f"... ({len(names)} in all)"] if len(names) > count else [])


def check_feet(tree, feet):
    """``feet`` (left, right) if both are distinct links of the tree, else a FeetError that
    names the links that look like feet."""
    left, right = feet
    if left == right:
        raise FeetError(f"--feet: the left and right foot are the same link ({left})")
    missing = [f for f in feet if f not in tree.links]
    if missing:
        try:
            hint = "; the guess from the link names is --feet " + " ".join(guess_feet(tree))
        except FeetError:
            looks = [link for link in tree.links if any(w in link.lower() for w in FOOT_WORDS)]
            hint = (f"; links named like feet: {', '.join(_few(looks))}" if looks else
                    f"; the links are: {', '.join(_few(tree.links))}")
        raise FeetError(f"--feet: the model has no link {' or '.join(missing)}{hint}")
    return left, right


# ------------------------------------------------------------------------------ soles
@dataclass(frozen=True)
class Sole:
    """A foot's sole in its link's frame.

    - ``link``: the foot link; ``points`` (k, 3): the sole polygon's corners [m] in the link
      frame, counter-clockwise seen from above, all at the sole's height ``z`` (<= 0 when the
      link origin is above the sole); ``source``: where they come from.
    """

    link: str
    points: np.ndarray
    source: str

    @property
    def outline(self):
        """(k, 2) corners in the link's xy plane."""
        return self.points[:, :2]

    @property
    def height(self):
        """Height [m] of the link origin above the sole plane."""
        return -float(self.points[0, 2])


def _floats(text, count, default):
    if text is None:
        return np.array(default, dtype=float)
    values = np.array([float(v) for v in text.split()], dtype=float)
    if values.shape != (count,):
        raise ValueError(f"expected {count} numbers, got {text!r}")
    return values


def _shape_points(geometry):
    """Points (m, 3) of a collision shape in its own frame, lowest ones first for spheres;
    None for meshes and unknown shapes."""
    box, sphere, cylinder = (geometry.find(k) for k in ("box", "sphere", "cylinder"))
    if box is not None:
        size = _floats(box.get("size"), 3, (0, 0, 0))
        corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5)
                            for z in (-0.5, 0.5)])
        return corners * size
    if sphere is not None:
        return np.array([[0.0, 0.0, 0.0]]), float(sphere.get("radius"))
    if cylinder is not None:
        r, h = float(cylinder.get("radius")), float(cylinder.get("length"))
        a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        ring = np.stack([r * np.cos(a), r * np.sin(a)], axis=1)
        return np.vstack([np.column_stack([ring, np.full(16, z)]) for z in (-h / 2, h / 2)])
    return None


def sole_geometry(kd, urdf_xml, foot, tree=None):
    """The :class:`Sole` of ``foot`` (a link of ``kd``'s model): see the module docstring."""
    tree = UrdfTree(urdf_xml) if tree is None else tree
    elements = {link.get("name"): link for link in tree.element.findall("link")}
    s = np.zeros(kd.NDoF)
    foot_H_w = inverse_homogeneous(kd.forward_kinematics(foot, np.eye(4), s))
    points, spheres, used = [], [], []
    for link in tree.rigid_links(foot):
        if link not in elements or link not in kd.frame_names:
            continue
        foot_H_link = foot_H_w @ kd.forward_kinematics(link, np.eye(4), s)
        for collision in elements[link].findall("collision"):
            geometry = collision.find("geometry")
            shape = None if geometry is None else _shape_points(geometry)
            if shape is None:
                continue
            origin = collision.find("origin")
            xyz = _floats(None if origin is None else origin.get("xyz"), 3, (0, 0, 0))
            rpy = _floats(None if origin is None else origin.get("rpy"), 3, (0, 0, 0))
            link_H_shape = np.eye(4)
            link_H_shape[:3, :3], link_H_shape[:3, 3] = rpy_to_matrix(rpy), xyz
            h = foot_H_link @ link_H_shape
            if isinstance(shape, tuple):          # sphere: its lowest point along foot z
                centre = h[:3, 3]
                spheres.append(centre - [0.0, 0.0, shape[1]])
            else:
                points.append(shape @ h[:3, :3].T + h[:3, 3])
            if link not in used:
                used.append(link)
    allpts = np.vstack(points + ([np.array(spheres)] if spheres else [])) if (
        points or spheres) else np.zeros((0, 3))
    if len(allpts):
        low = allpts[:, 2].min()
        bottom = allpts[allpts[:, 2] <= low + SOLE_TOLERANCE]
        hull = convex_hull(bottom[:, :2]) if len(bottom) >= 3 else np.zeros((0, 2))
        if len(hull) >= 3 and _area(hull) >= MIN_SOLE_AREA:
            source = f"outline of the collision geometry of {', '.join(used)}"
            if "sole" in foot.lower():   # a sole frame: its origin is on the sole
                low = 0.0
                source += f", in the xy plane of {foot}"
            return Sole(foot, np.column_stack([hull, np.full(len(hull), low)]), source)
    length, width = NOMINAL_FOOT
    corners = np.array([[-length, -width], [length, -width], [length, width],
                        [-length, width]]) / 2
    return Sole(foot, np.column_stack([corners, np.zeros(4)]),
                f"default {length * 100:g} x {width * 100:g} cm rectangle centred at the "
                f"origin of {foot} (no box, sphere or cylinder collision on its body)")


def _area(poly):
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def contacts_yaml(soles, model_name="", friction=DEFAULT_FRICTION):
    """Text of a kin_dyn_node parameter file (like config/icub.yaml) with the feet as
    contacts: ``contacts`` and ``contact.<link>.points/normal/friction`` of each
    :class:`Sole` (list, left first)."""
    lines = [f"# Contacts of {model_name or 'the robot'} made by the kin_dyn_ros demo from its "
             "URDF (kin_dyn_ros/demo/feet.py):",
             "# the feet and their soles' corners in the foot link frames [m]. Pass it after "
             "config/kin_dyn.yaml:",
             "#   kin_dyn_node --ros-args --params-file config/kin_dyn.yaml --params-file "
             "<this file>"]
    for sole in soles:
        lines.append(f"# {sole.link}: {sole.source}")
    lines += ["kin_dyn_node:", "  ros__parameters:",
              f"    contacts: [{', '.join(s.link for s in soles)}]", "    contact:"]
    for sole in soles:
        flat = ", ".join(_number(v) for v in np.asarray(sole.points, dtype=float).ravel())
        lines += [f"      {sole.link}:", f"        topic: {sole.link}/wrench",
                  f"        points: [{flat}]", "        normal: [0.0, 0.0, 1.0]",
                  f"        friction: {_number(friction)}"]
    return "\n".join(lines) + "\n"


def _number(value):
    """A float as ROS YAML reads a double: fixed point, with a decimal point (to 1 um)."""
    text = f"{float(value):.6f}".rstrip("0")
    text = text + "0" if text.endswith(".") else text
    return "0.0" if text == "-0.0" else text
