"""bench/bench_core.py's command line: ``--model`` (a smoke run, not a benchmark; ~5 s)."""

import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "bench_core.py"


def run(*args, timeout=120):
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_unknown_model_is_a_usage_error():
    pytest.importorskip("pinocchio")
    pytest.importorskip("idyntree")
    pytest.importorskip("adam")
    pytest.importorskip("icub_models")
    out = run("--quick", "--model", "/nonexistent/robot.urdf")
    assert out.returncode == 2
    assert "--model /nonexistent/robot.urdf: no such file" in out.stderr


def test_quick_run_with_a_model_prints_its_ratio():
    pytest.importorskip("pinocchio")
    pytest.importorskip("idyntree")
    pytest.importorskip("adam")
    pytest.importorskip("icub_models")
    sys.path.insert(0, str(REPO / "bench"))
    from models import model_path
    try:
        model_path("g1")
    except FileNotFoundError:
        pytest.skip("example-robot-data is not installed")
    out = run("--quick", "--model", "g1")
    assert out.returncode == 0, out.stderr[-2000:]
    robots = out.stdout.split("compute_tick vs Pinocchio's same set, per robot")[1]
    rows = {line.split()[0]: line.split() for line in robots.splitlines()[3:5]}
    assert set(rows) == {"iCubGazeboV2_5", "g1_29dof_rev_1_0"}
    assert rows["g1_29dof_rev_1_0"][1] == "29"           # joints
    assert rows["g1_29dof_rev_1_0"][-1] == "P:ok"        # same numbers as Pinocchio
    assert "fitted exponent k of t ~ n^k" in out.stdout
    assert "g1_29dof_rev_1_0" in out.stdout.split("summary:")[1]
