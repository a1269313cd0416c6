"""The core install (`pip install medrealmm`, no extras) evaluates a release and writes its
report; a builder-only command there names the extra to add. The builder's packages are made
unimportable in a subprocess; .ci/run checks the same with a real core-only venv."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from medrealmm.cli import EXTRAS

from .conftest import accept

SRC = str(Path(__file__).resolve().parents[2] / "src")
#: Runs the CLI with every optional package unimportable, as on a core install.
LEAN = f"""
import importlib.abc, sys
BLOCKED = {sorted({*EXTRAS, "sklearn", "datasets", "krippendorff"})!r}
class Lean(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Lean())
from medrealmm.cli import main
main()
"""


def lean(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LEAN, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def test_core_install_evaluates_a_release_and_reports(release: Path, tmp_path: Path) -> None:
    accept(release)
    env = {**os.environ, "PYTHONPATH": SRC, "HOME": str(tmp_path), "MEDREALMM_PROGRESS": "0"}
    results = tmp_path / "results"
    run = lean("eval", "run", str(release), "--out", str(results), env=env)
    assert run.returncode == 0, run.stderr
    assert "4 cases scored, 0 incomplete" in run.stdout
    report = lean("report", str(results), str(tmp_path / "report"), "--resamples", "20", env=env)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report" / "index.html").is_file()

    builder_only = lean("deid", "text", "患者说明天复诊", env=env)
    assert builder_only.returncode == 2
    assert builder_only.stderr.strip().startswith("error: this command needs the 'build' extra")
    assert 'pip install "medrealmm[build]"' in builder_only.stderr
    assert "Traceback" not in builder_only.stderr
