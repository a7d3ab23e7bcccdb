"""The node's parameters have one source: their declaration in kin_dyn_ros/node/settings.py.

What restates it must agree with what a node really declares (``declare_settings`` on a
node, parameter files read by rcl's own YAML parser):

- :class:`Settings`' field defaults (``make_settings()``);
- config/kin_dyn.yaml, the robot-neutral defaults: every declared parameter but ``contacts``
  (which has no default), each with its declared default and type, and nothing else (a
  misspelled name in a parameter file is silently ignored by ROS);
- config/icub.yaml, on top of it: only iCub's contacts (declared names, valid geometry, the
  soles' corners from the URDF's collision boxes);
- README.md's parameter tables: the first lists exactly the declared parameters
  (``contact.<name>.*`` for the per-contact ones), every table gives the declared default
  and says "read-only" exactly for the read-only ones.

Run:  python -m pytest test/ros/test_settings.py
"""

import array
import pathlib
import re
from dataclasses import fields, replace

import numpy as np
import pytest
import rclpy
import yaml
from parameter_files import flatten
from rclpy.exceptions import ParameterUninitializedException
from rclpy.parameter import Parameter

from kin_dyn_ros.node.settings import Settings, declare_settings, make_settings

REPO = pathlib.Path(__file__).resolve().parents[2]
NEUTRAL = REPO / 'config' / 'kin_dyn.yaml'
ICUB = REPO / 'config' / 'icub.yaml'
NODE_NAME = 'kin_dyn_node'
CONTACT = 'some_link'        # stands for README's <name>
NO_DEFAULT = {'contacts', 'cpu_affinity'}    # declared by type only: README says []

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')


def declare(*files, contacts=()):
    """(Settings, {name: (default, read_only)}) of a node named kin_dyn_node given the
    parameter files (as ``--params-file``) and ``contacts`` (as an override): the
    parameters that declare_settings declares, with their values."""
    context = rclpy.Context()
    args = [NODE_NAME, '--ros-args'] + [a for f in files for a in ('--params-file', str(f))]
    rclpy.init(args=args, context=context)
    try:
        overrides = [Parameter('contacts', value=list(contacts))] if contacts else []
        node = rclpy.create_node(NODE_NAME, context=context, parameter_overrides=overrides,
                                 start_parameter_services=False, enable_rosout=False)
        try:
            before = set(node.list_parameters([], 0).names)    # rclpy's own (use_sim_time)
            settings = declare_settings(node)
            names = set(node.list_parameters([], 0).names) - before
            params = {n: (value(node, n), node.describe_parameter(n).read_only)
                      for n in names}
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    return settings, params


def value(node, name):
    """A parameter's value as YAML gives it: arrays as lists, no value (declared by type
    only) as []."""
    try:
        value = node.get_parameter(name).value
    except ParameterUninitializedException:
        return []
    if isinstance(value, (array.array, np.ndarray, tuple)):
        return list(value.tolist() if hasattr(value, 'tolist') else value)
    return value


def same(a, b):
    """Equal with the same types (ROS parameters are typed: 0 is not 0.0)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def file_parameters(path):
    """{dotted name: value} of the kin_dyn_node section of a parameter file."""
    data = yaml.safe_load(path.read_text())
    assert list(data) == [NODE_NAME], f'{path.name}: one section, {NODE_NAME}'
    return dict(flatten('', data[NODE_NAME]['ros__parameters']))


def readme_tables():
    """Rows [(name, default, meaning)] of each README table headed parameter|default|meaning,
    cells without their backticks, ``<name>`` replaced by CONTACT."""
    tables, rows = [], None
    for line in (REPO / 'README.md').read_text().splitlines() + ['']:
        cells = [c.strip() for c in re.split(r'(?<!\\)\|', line.strip())[1:-1]] \
            if line.startswith('|') else None
        if cells == ['parameter', 'default', 'meaning']:
            rows = []
        elif rows is not None and cells is None:
            tables.append(rows)
            rows = None
        elif rows is not None and not set(''.join(cells)) <= set('-:'):
            rows.append(tuple(c.strip('`').replace('<name>', CONTACT) for c in cells))
    return tables


@pytest.fixture(scope='module')
def declared():
    """{name: (default, read_only)} of every parameter, the per-contact ones for CONTACT."""
    plain = declare()[1]
    return declare(contacts=[CONTACT])[1] | {name: ([], plain[name][1]) for name in NO_DEFAULT}


def test_the_declaration_is_found(declared):
    assert len(declared) > 25
    assert declared['rate'] == (0.0, False)
    assert declared['contacts'] == ([], True)
    assert declared[f'contact.{CONTACT}.topic'] == (f'{CONTACT}/wrench', True)
    assert declared[f'contact.{CONTACT}.friction'][0] == 0.6


def test_settings_defaults_are_the_declared_ones():
    declared, defaults = declare()[0], make_settings()
    differ = {f.name: (getattr(defaults, f.name), getattr(declared, f.name))
              for f in fields(Settings) if getattr(defaults, f.name) != getattr(declared, f.name)}
    assert not differ, f'Settings default vs declared: {differ}'


def test_kin_dyn_yaml_is_every_declared_default(declared):
    values = file_parameters(NEUTRAL)
    general = {n for n in declared if not n.startswith('contact.')}
    assert set(values) == general - NO_DEFAULT, 'config/kin_dyn.yaml: missing / unknown'
    wrong = {n: (v, declared[n][0]) for n, v in values.items() if not same(v, declared[n][0])}
    assert not wrong, f'config/kin_dyn.yaml value vs declared default: {wrong}'
    assert declare(NEUTRAL)[0] == make_settings()      # as rcl reads it: no change, no contacts


def test_icub_yaml_holds_only_icubs_contacts(declared):
    values = file_parameters(ICUB)
    contacts = values['contacts']
    assert contacts == ['l_sole', 'r_sole']
    assert all(n == 'contacts' or n.startswith('contact.') for n in values), sorted(values)
    names = set(declare(contacts=contacts)[1])
    assert set(values) <= names, f'not declared: {sorted(set(values) - names)}'
    settings = declare(NEUTRAL, ICUB)[0]
    assert settings.contacts == ('l_sole', 'r_sole')
    assert settings.contact_topics == (('l_sole', 'l_sole/wrench'), ('r_sole', 'r_sole/wrench'))
    for contact, points, normal, friction in settings.contact_geometry:
        np.testing.assert_array_equal(np.ravel(points), values[f'contact.{contact}.points'])
        np.testing.assert_array_equal(normal, values[f'contact.{contact}.normal'])
        assert friction == values[f'contact.{contact}.friction']
    # everything else stays the neutral defaults
    assert replace(settings, contacts=(), contact_topics=(), contact_geometry=()) == \
        make_settings()


def test_icub_sole_points_are_the_corners_of_its_feet(icub_urdf):
    from kin_dyn_ros.demo.motion import foot_outline
    from kin_dyn_ros.dynamics import KinDynComputations
    kd = KinDynComputations(icub_urdf)
    values = file_parameters(ICUB)
    for sole in values['contacts']:
        points = np.reshape(values[f'contact.{sole}.points'], (-1, 3))
        np.testing.assert_array_equal(points[:, 2], 0.0)
        corners = foot_outline(kd, icub_urdf, sole)
        np.testing.assert_allclose(sorted(map(tuple, points[:, :2])),
                                   sorted(map(tuple, corners)), atol=1e-12)


def test_readme_lists_the_declared_parameters_with_their_defaults(declared):
    tables = readme_tables()
    assert tables and len(tables[0]) > 20
    names = [row[0] for row in tables[0]]
    assert len(names) == len(set(names)), 'a parameter listed twice'
    assert set(names) == set(declared), (
        f'README lists {sorted(set(names) - set(declared))} (not declared), misses '
        f'{sorted(set(declared) - set(names))}')
    for rows in tables:
        for name, default, meaning in rows:
            assert name in declared, f'README: {name} is not a parameter'
            value, read_only = declared[name]
            assert same(yaml.safe_load(default), value), \
                f'README: {name} default {default}, declared {value!r}'
            assert ('read-only' in meaning.lower()) == read_only, \
                f'README: {name} is {"" if read_only else "not "}read-only'
