"""Robot models of the benchmarks by name or path (helpers of bench/, not a test).

``--model`` of bench_core.py and bench_node.py takes a URDF path or one of these names:

- ``icub``: iCubGazeboV2_5 of the ``icub-models`` package (32 joints, 213 links);
- ``g1``: Unitree G1, ``g1_29dof_rev_1_0.urdf`` of ``example-robot-data`` (29 joints);
- ``talos``: PAL Talos, ``talos_full_v2.urdf`` of ``example-robot-data`` (44 joints: legs,
  torso, arms, grippers, head);
- ``talos_reduced``: ``talos_reduced.urdf`` (32 joints: no grippers, wrists, head).

example-robot-data (a dependency of the ``pin`` wheel, in the venv) installs its URDFs under
``<site-packages>/cmeel.prefix/share/example-robot-data/robots``; meshes are not read.
"""

import importlib.metadata
import pathlib

__all__ = ["NAMED", "model_path", "model_text", "model_label"]

NAMED = {
    'g1': 'g1_description/urdf/g1_29dof_rev_1_0.urdf',
    'talos': 'talos_data/robots/talos_full_v2.urdf',
    'talos_reduced': 'talos_data/robots/talos_reduced.urdf',
}
_ERD = 'cmeel.prefix/share/example-robot-data/robots'


def model_path(name):
    """The URDF path of ``name`` (a path, or a name of :data:`NAMED`, or ``icub``)."""
    if name is None or name == 'icub':
        import icub_models
        return pathlib.Path(icub_models.get_model_file('iCubGazeboV2_5'))
    path = pathlib.Path(name)
    if path.exists() or name not in NAMED:
        return path
    try:
        dist = importlib.metadata.distribution('example-robot-data')
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(f"model '{name}': the example-robot-data package is not "
                                f"installed (pip install example-robot-data)") from None
    found = pathlib.Path(dist.locate_file(f'{_ERD}/{NAMED[name]}'))
    if not found.exists():
        raise FileNotFoundError(f"model '{name}': {found} is missing")
    return found


def model_text(name=None):
    """The URDF text of :func:`model_path` (None: iCub)."""
    return model_path(name).read_text()


def model_label(name=None):
    """A short label: iCubGazeboV2_5, else the file's stem."""
    if name is None or name == 'icub':
        return 'iCubGazeboV2_5'
    return model_path(name).stem
