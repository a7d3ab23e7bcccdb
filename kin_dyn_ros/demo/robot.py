"""The demo's robot: its URDF file read with one-line errors, its feet and their soles.

Pure Python and NumPy (no ROS): the command line (:mod:`.__main__`) loads the robot before
anything starts, so that a bad ``--model`` or ``--feet`` ends in a one-line usage error (exit
code 2), and :func:`.runner.run` uses the same :class:`Robot`.
"""

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ..dynamics import KinDynComputations
from .feet import FeetError, NoFootLinks, UrdfTree, check_feet, guess_feet, sole_geometry

__all__ = ["ICUB_FEET", "ModelError", "FeetError", "Robot", "load_robot", "read_urdf"]

ICUB_FEET = ("l_sole", "r_sole")    # the feet of config/icub.yaml


class ModelError(ValueError):
    """The model file cannot be used (a one-line message naming the file)."""


@dataclass
class Robot:
    """A model ready for the demo.

    - ``path``, ``urdf`` (text), ``kd`` (KinDynComputations), ``tree`` (:class:`.feet.UrdfTree`),
      ``name``; ``default``: the default iCub of icub-models.
    - ``feet``: (left, right) foot links, or None (no link looks like a foot: the demo holds
      the model by its root); ``feet_source``: 'given with --feet', 'guessed from the link
      names' or 'the default model's'; ``note``: why there are no feet.
    - ``soles``: {foot: :class:`.feet.Sole`}.
    """

    path: str
    urdf: str
    kd: KinDynComputations
    tree: UrdfTree
    name: str
    default: bool = False
    feet: tuple = None
    feet_source: str = ""
    note: str = ""
    soles: dict = field(default_factory=dict)


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def read_urdf(path):
    """(URDF text, KinDynComputations, UrdfTree) of the file ``path``; ModelError with a
    one-line reason (missing, a folder, unreadable, not XML, not a <robot>, not a usable
    model)."""
    p = Path(path)
    where = f"--model {path}"
    if not p.exists():
        raise ModelError(f"{where}: no such file")
    if p.is_dir():
        raise ModelError(f"{where}: is a folder, not a URDF file")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ModelError(f"{where}: cannot read it ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{where}: not a URDF (a binary file, not UTF-8 XML text)") from None
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelError(f"{where}: not a URDF (not XML: {_first_line(exc)})") from None
    if root.tag != "robot":
        raise ModelError(f"{where}: not a URDF (its root element is <{root.tag}>, not "
                         "<robot>)")
    try:
        kd = KinDynComputations(text)
    except Exception as exc:   # the core's ValueError, or anything a strange file causes
        raise ModelError(f"{where}: not a usable URDF ({_first_line(exc)})") from None
    if kd.NDoF == 0:
        raise ModelError(f"{where}: the URDF has no movable joint (nothing to move)")
    return text, kd, UrdfTree(text)


def load_robot(path, feet=None, default=False):
    """The :class:`Robot` of a URDF file with its feet: ``feet`` (left, right) when given,
    else the guess of :func:`.feet.guess_feet`. ``default``: the file is the demo's default
    iCub (:func:`.runner.default_model`).

    Raises ModelError or FeetError (one-line messages).
    """
    path = str(path)
    urdf, kd, tree = read_urdf(path)
    robot = Robot(path=path, urdf=urdf, kd=kd, tree=tree, name=kd.model.name or Path(path).stem,
                  default=default)
    if feet is not None:
        robot.feet = check_feet(tree, tuple(feet))
        robot.feet_source = "given with --feet"
    else:
        try:
            robot.feet = guess_feet(tree)
            robot.feet_source = ("the default model's" if default and robot.feet == ICUB_FEET
                                 else "guessed from the link names")
        except NoFootLinks as exc:
            robot.note = str(exc)
    if robot.feet is not None:
        robot.soles = {f: sole_geometry(kd, urdf, f, tree) for f in robot.feet}
    return robot

