"""Which path runs (compiled kernels or the NumPy core) and where numba's cache goes
(kin_dyn_ros.dynamics.compiled). The path is chosen once per process: each case runs in a
fresh interpreter with its own environment."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# Prints what the process runs and computes a mass matrix both ways on a small tree.
PROBE = """
import json, sys
sys.path.insert(0, {repo!r})
{setup}
import numpy as np
from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.dynamics.compiled import jit_status, _tick_parts, _WARM_UP_URDF
kd = KinDynComputations(_WARM_UP_URDF)
ref = KinDynComputations(_WARM_UP_URDF, compiled=False)
s = np.array([0.3])
try:
    KinDynComputations(_WARM_UP_URDF, compiled=True)
    forced = ""
except RuntimeError as exc:
    forced = str(exc)
same = bool(np.abs(kd.mass_matrix(np.eye(4), s) - ref.mass_matrix(np.eye(4), s)).max() < 1e-12)
status = jit_status()
parts = {{name: str(args) in map(str, getattr(kd._jit.k, name).signatures)
         for name, args in _tick_parts()}} if kd.compiled else {{}}
print(json.dumps(dict(compiled=kd.compiled, reason=status.reason, cache=status.cache_dir,
                      describe=status.describe(), forced=forced, same=same,
                      queries=status.queries_seconds, parts=parts)))
"""


# numba compiling every kernel from nothing (25-40 s each): the same with any ROS
# distribution, so scripts/test.sh runs it in its first distribution's pass only
ONCE = pytest.mark.skipif(os.environ.get("KIN_DYN_REPEAT_PASS") == "1", reason=(
    "does not depend on the ROS distribution: run in test.sh's first distribution's pass"))


def probe(env=None, setup=""):
    """The PROBE's report in a fresh interpreter with ``env`` added to this one's."""
    out = subprocess.run([sys.executable, "-c", PROBE.format(repo=str(REPO), setup=setup)],
                         env={**os.environ, **(env or {})}, capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kin_dyn_jit_0_runs_the_numpy_core():
    got = probe({"KIN_DYN_JIT": "0"})
    assert not got["compiled"] and got["reason"] == "KIN_DYN_JIT=0" and got["same"]
    assert got["describe"] == "NumPy core (KIN_DYN_JIT=0)"
    assert got["forced"] == "compiled kernels unavailable: KIN_DYN_JIT=0"


def test_numba_refusing_to_import_runs_the_numpy_core():
    got = probe({"KIN_DYN_JIT": "1"}, setup="sys.modules['numba'] = None  # import fails")
    assert not got["compiled"] and got["same"]
    assert got["reason"].startswith("numba unavailable: ModuleNotFoundError")


def test_kernels_that_fail_to_compile_leave_the_numpy_core():
    setup = ("import kin_dyn_ros.dynamics.compiled as c\n"
             "def broken(compiled): raise RuntimeError('no LLVM here')\n"
             "c.warm_up = broken")
    got = probe({"KIN_DYN_JIT": "1"}, setup=setup)
    assert not got["compiled"] and got["same"]
    assert got["reason"] == "the kernels failed to compile: RuntimeError: no LLVM here"


@pytest.mark.skipif(os.environ.get("KIN_DYN_JIT", "1") == "0", reason="KIN_DYN_JIT=0 pass")
def test_the_compiled_path_runs_by_default_with_numba_s_cache():
    """... and the queries' kernels load in the background, from a warm cache too (not
    before the first tick: ~0.1 s of the start-up), a query waiting for them."""
    got = probe({"KIN_DYN_JIT": "1"})
    assert got["compiled"] and got["reason"] == "" and got["same"] and got["forced"] == ""
    assert got["describe"] == f"compiled kernels (numba; cache: {got['cache']})"
    assert got["queries"] is not None and got["queries"] >= 0.0


def _cache_dir(monkeypatch, **env):
    from kin_dyn_ros.dynamics.compiled import _cache_dir
    for name in ("NUMBA_CACHE_DIR", "ROS_HOME", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    return _cache_dir()


def test_the_cache_directory_numba_cache_dir_wins(monkeypatch, tmp_path):
    given = tmp_path / "given"
    assert _cache_dir(monkeypatch, NUMBA_CACHE_DIR=given, ROS_HOME=tmp_path / "ros",
                      HOME=tmp_path) == str(given)
    assert given.is_dir()


def test_the_cache_directory_under_ros_home_then_the_user_cache(monkeypatch, tmp_path):
    assert _cache_dir(monkeypatch, ROS_HOME=tmp_path / "ros", HOME=tmp_path) == \
        str(tmp_path / "ros" / "kin_dyn_ros" / "numba")
    assert _cache_dir(monkeypatch, XDG_CACHE_HOME=tmp_path / "xdg", HOME=tmp_path) == \
        str(tmp_path / "xdg" / "kin_dyn_ros" / "numba")
    assert _cache_dir(monkeypatch, HOME=tmp_path) == \
        str(tmp_path / ".cache" / "kin_dyn_ros" / "numba")


def test_an_unwritable_place_is_passed_over(monkeypatch, tmp_path):
    blocked = tmp_path / "a_file"                 # a directory cannot be made under a file
    blocked.write_text("")
    assert _cache_dir(monkeypatch, ROS_HOME=blocked, HOME=tmp_path) == \
        str(tmp_path / ".cache" / "kin_dyn_ros" / "numba")
    assert _cache_dir(monkeypatch, NUMBA_CACHE_DIR=blocked / "x", HOME=blocked) is None
    assert _cache_dir(monkeypatch, ROS_HOME=blocked, HOME=blocked) is None


@pytest.mark.skipif(os.environ.get("KIN_DYN_JIT", "1") == "0", reason="KIN_DYN_JIT=0 pass")
def test_only_compiles_the_named_kernels_into_the_cache(tmp_path):
    """What warm_up runs beside itself with an empty cache (``--only``): those kernels, into
    the cache, and the others not (frame_poses: the one that compiles in ~2 s)."""
    subprocess.run([sys.executable, "-m", "kin_dyn_ros.dynamics", "--only", "frame_poses"],
                   env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "KIN_DYN_JIT": "1"},
                   cwd=REPO, timeout=300, check=True)
    assert list(tmp_path.rglob("kernels.frame_poses-*.nbi"))
    assert not list(tmp_path.rglob("kernels.tick-*.nbi"))


@pytest.mark.skipif(os.environ.get("KIN_DYN_JIT", "1") == "0", reason="KIN_DYN_JIT=0 pass")
def test_a_group_the_other_process_did_not_compile_is_left(monkeypatch):
    """The loader (a start that compiled beside): a group of kernels not in the cache when
    the other process is done (it died) is not compiled in the node's process, where it would
    hold ticking for seconds: the steady tick's and the contact mechanics' are then never
    called (steady_ready, contacts_ready False: the plain and NumPy ways)."""
    from kin_dyn_ros.dynamics import KinDynComputations, compiled
    kd = KinDynComputations(compiled._WARM_UP_URDF)
    assert kd.compiled and compiled.steady_ready() and compiled.contacts_ready()
    warmed = []
    monkeypatch.setattr(compiled, "_warm", lambda _, names: warmed.append(names))
    monkeypatch.setattr(compiled, "_uncached", lambda names: names)        # (none cached)
    monkeypatch.setitem(compiled._STATE, "failed", set())
    try:
        compiled._CONTACT_READY.clear()
        compiled._STEADY_READY.clear()
        compiled._load_beside(kd._jit, None, [compiled._CONTACT, compiled._STEADY])
        assert not compiled.steady_ready(0) and not compiled.contacts_ready()
        assert compiled.steady_ready(None) is False             # (answered, not waiting)
        assert compiled.contact_kernels() is None and warmed == []
    finally:
        compiled._CONTACT_READY.set()
        compiled._STEADY_READY.set()
    monkeypatch.undo()
    assert compiled.steady_ready() and compiled.contacts_ready()


@pytest.mark.skipif(os.environ.get("KIN_DYN_JIT", "1") == "0", reason="KIN_DYN_JIT=0 pass")
def test_the_stages_beside_are_read_one_line_each(monkeypatch, tmp_path):
    """The lines of the process beside (:func:`compiled._compile_beside`, here a stand-in
    printing two stages at once and then nothing): each stage is read once its line is
    there (two lines in one read must not leave the second waiting for a third), a stage not
    done is False at once with no timeout, and an ended process answers True."""
    from kin_dyn_ros.dynamics import compiled
    script = tmp_path / "beside"
    script.write_text("#!/bin/sh\nprintf 'compiled a\\ncompiled b\\n'; exec sleep 60\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(script))
    process = compiled._compile_beside(("a",), ("b",), ("c",))
    try:
        assert compiled._stage_done(process, 0, timeout=30)
        assert compiled._stage_done(process, 1, timeout=5)
        assert not compiled._stage_done(process, 2, timeout=0)
        process.kill()
        process.wait()
        assert compiled._stage_done(process, 2, timeout=5)
    finally:
        process.kill()
        process.wait()


COLD = """
import json, sys, time
sys.path.insert(0, {repo!r})
import numpy as np
from kin_dyn_ros.dynamics import KinDynComputations, compiled
kd = KinDynComputations(compiled._WARM_UP_URDF)     # the tick's kernels compile here
pending = not compiled.queries_ready(0)
ref = KinDynComputations(compiled._WARM_UP_URDF, compiled=False)
s, w_H_b = np.array([0.3]), np.eye(4)
mass = kd.mass_matrix(w_H_b, s)                      # waits for the queries' kernels
jac = kd.jacobian("b", w_H_b, s)
print(json.dumps(dict(pending=pending, ready=compiled.queries_ready(0),
                      steady=compiled.steady_ready(0), contacts=compiled.contacts_ready(),
                      seconds=compiled.jit_status().queries_seconds,
                      mass=float(np.abs(mass - ref.mass_matrix(w_H_b, s)).max()),
                      jac=float(np.abs(jac - ref.jacobian("b", w_H_b, s)).max()))))
"""


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """The two cold starts (numba compiling every kernel from nothing, ~60 s each here),
    started side by side when first asked for (CI's two cores: ~50 s less than one after the
    other; each test waits for its own): {case: (process, its directory, its output file)}.
    "in memory": PROBE with a read-only install and home; "empty cache": COLD with an empty
    NUMBA_CACHE_DIR."""
    blocked = tmp_path_factory.mktemp("read_only") / "a_file"
    blocked.write_text("")
    empty = tmp_path_factory.mktemp("empty_cache")
    cases = {"in memory": (PROBE.format(repo=str(REPO), setup=""), blocked, {
        "HOME": str(blocked), "ROS_HOME": str(blocked), "XDG_CACHE_HOME": str(blocked),
        "NUMBA_CACHE_DIR": ""}),
        "empty cache": (COLD.format(repo=str(REPO)), empty, {"NUMBA_CACHE_DIR": str(empty)})}
    runs = {}
    for case, (code, where, env) in cases.items():
        output = tmp_path_factory.mktemp("output") / "out.txt"   # (files: no pipe to fill)
        with open(output, "w") as sink:
            runs[case] = (subprocess.Popen([sys.executable, "-c", code], stdout=sink,
                                           stderr=subprocess.STDOUT,
                                           env={**os.environ, **env, "KIN_DYN_JIT": "1"}),
                          where, output)
    yield runs
    for process, _, _ in runs.values():
        if process.poll() is None:
            process.kill()
            process.wait()


def _report(run):
    """(the last line of a :func:`cold` run's output as JSON, its directory), once ended."""
    process, where, output = run
    status = process.wait(timeout=600)
    text = output.read_text()
    assert status == 0, text[-3000:]
    return json.loads(text.strip().splitlines()[-1]), where


@ONCE
@pytest.mark.skipif(os.environ.get("KIN_DYN_JIT", "1") == "0", reason="KIN_DYN_JIT=0 pass")
def test_no_writable_cache_compiles_in_memory_and_runs(cold):
    """A read-only install and home: the kernels compile in memory (~30 s here) and run."""
    got, _ = _report(cold["in memory"])
    assert got["compiled"] and got["cache"] is None and got["same"]
    # every kernel compiled here: among their argument types, those with which a start with
    # an empty cache compiles the tick's last parts beside it (warm_up)
    assert got["parts"] and all(got["parts"].values()), got["parts"]
    assert got["describe"] == ("compiled kernels (numba; cache: in memory: no writable cache "
                               "directory)")


@ONCE
@pytest.mark.skipif(os.environ.get("KIN_DYN_JIT", "1") == "0", reason="KIN_DYN_JIT=0 pass")
def test_an_empty_cache_compiles_the_queries_beside_the_tick(cold):
    """With an empty cache the tick's kernels are ready first (the glue compiled beside); the
    contact mechanics', the steady tick's and the queries' kernels (more to compile, in
    another process) load afterwards, a query waits for them and answers as the NumPy core;
    every kernel is in the cache then, the lazy ones (horizon, coriolis) included, and the
    other process has ended."""
    got, cache = _report(cold["empty cache"])
    assert got["pending"] and got["ready"] and got["seconds"] > 0
    assert got["steady"] and got["contacts"]
    assert got["mass"] < 1e-12 and got["jac"] < 1e-12
    for name in ("tick", "share_state", "merge_joint_state", "balance", "contact_points",
                 "steady_tick", "whole_body", "frame_query", "horizon", "coriolis"):
        assert list(cache.rglob(f"kernels.{name}-*.nbi")), name
