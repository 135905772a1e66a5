"""scripts/speedup.py: eq. 2 of Five."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from scripts import speedup


def test_speedup_is_the_ratio_of_versions_to_first_reach_each_threshold():
    base = pd.DataFrame({"iteration": [10, 20, 30, 40, 50], "trueskill_mu": [1.0, 4.0, 9.0, 12.0, 20.0]})
    exp = pd.DataFrame({"iteration": [10, 20, 30, 40, 50], "trueskill_mu": [3.0, 11.0, 15.0, 16.0, 17.0]})
    rows = {r["threshold"]: r for r in speedup.speedups(base, exp, [3, 10, 20])}
    assert rows[3]["speedup"] == pytest.approx(20 / 10)  # baseline first >= 3 at 20, experiment at 10
    assert rows[10]["speedup"] == pytest.approx(40 / 20)
    assert rows[20]["speedup"] is None and rows[20]["experiment_versions"] is None  # never reached


def test_cli_reads_csvs_and_names_missing_columns(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"iteration": [1, 2], "trueskill_mu": [0.0, 6.0]}).to_csv(a, index=False)
    pd.DataFrame({"iteration": [1, 2], "trueskill_mu": [6.0, 7.0]}).to_csv(b, index=False)
    script = os.path.join(os.path.dirname(__file__), "..", "scripts", "speedup.py")
    out = subprocess.run([sys.executable, script, str(a), str(b), "--thresholds", "5"], capture_output=True,
                         text=True)
    assert out.returncode == 0
    assert json.loads(out.stdout.strip().splitlines()[-1])["speedups"][0]["speedup"] == pytest.approx(2.0)
    bad = subprocess.run([sys.executable, script, str(a), str(b), "--y", "elo"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no column(s) ['elo']" in bad.stderr
