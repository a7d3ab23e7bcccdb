"""Files of the example-robot-data package (PyPI ``example-robot-data``: URDFs of Talos, G1,
Romeo and others; models only since 4.4, so they are found through its installed
distribution, or through ``example_robot_data.getModelPath`` when the loaders are there)."""

import importlib.metadata
import pathlib

__all__ = ["example_robot_data_file"]


def example_robot_data_file(relative):
    """Path of ``robots/<relative>`` in the installed example-robot-data, or None."""
    try:
        import example_robot_data   # the loaders (example-robot-data-loaders), when present
        path = pathlib.Path(example_robot_data.getModelPath(relative)) / relative
        if path.is_file():
            return path
    except Exception:   # not installed, or loaders without the models
        pass
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if str(file).endswith("robots/" + relative):
            path = pathlib.Path(dist.locate_file(file))
            return path if path.is_file() else None
    return None
