"""bench/bench_queries.py runs (a smoke run, not a benchmark; ~5 s): every query row, and the
step support's polygon by the wrench cone (no LPs) and by the projection (LPs), with the same
vertex count."""

import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_smoke_run_prints_every_row():
    out = subprocess.run([sys.executable, str(REPO / "bench" / "bench_queries.py"),
                          "--repeats", "10"], capture_output=True, text=True, timeout=300,
                         cwd=REPO)
    assert out.returncode == 0, out.stderr
    for label in ("jacobian l_sole", "mass_matrix", "dynamics (get_dynamics",
                  "equilibrium_check, flat feet", "equilibrium_check, step"):
        assert label in out.stdout
    cone = re.search(r"step, cone .*\(0 LPs, (\d+) vertices\)", out.stdout)
    lps = re.search(r"step, projection .*\((\d+) LPs, (\d+) vertices\)", out.stdout)
    assert cone and lps, out.stdout
    assert int(lps.group(1)) > 0 and cone.group(1) == lps.group(2)
