"""Reading ROS 2 parameter files in the tests."""


def flatten(prefix, tree):
    """Nested parameter dicts as ``(dotted name, value)`` pairs, as launch_ros passes them."""
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from flatten(f'{prefix}{key}.', value)
        else:
            yield f'{prefix}{key}', value
