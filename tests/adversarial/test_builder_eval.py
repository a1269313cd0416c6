"""Issue item 6: the builder's own run is evaluable, and every offline command of the README and
of the documentation site's pages (in the order of mkdocs.yml's nav) runs as printed, in order,
on a fresh folder, then from the folder that holds the releases with dotted output names (issue
46 item 1: ``--out results-0.2`` there deleted the release).

A run folder holds the corpus build's ``manifest.json``; it was taken for a release manifest
(read-only: "is a release"; with ``--out``: "release format None is not supported"). Releases
are now told apart by content."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.release.loader import is_release

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.output


@pytest.fixture()
def builder_run(demo_dir: Path, tmp_path: Path) -> Path:
    """A small builder's run as the README's chain leaves it: corpus manifest.json and store."""
    run = tmp_path / "run"
    corpus = str(demo_dir / "consultations.jsonl")
    assert _invoke("corpus", "build", corpus, str(run), "--limit", "6")[0] == 0
    extract = ("mccp", "extract", str(demo_dir), str(run), "--from", "corpus.sampled")
    assert _invoke(*extract, "--limit", "2")[0] == 0
    assert _invoke("rubric", "generate", str(run))[0] == 0
    assert (run / "manifest.json").is_file() and not is_release(run)
    return run


def test_a_builders_run_is_evaluated_in_place_and_into_out(
    builder_run: Path, tmp_path: Path
) -> None:
    code, output = _invoke("eval", "run", str(builder_run), "--model", "offline")
    assert code == 0, output
    assert "read-only" not in output
    results = tmp_path / "results"
    code, output = _invoke(
        "eval", "run", str(builder_run), "--out", str(results), "--model", "online"
    )
    assert code == 0, output
    assert "format" not in output
    code, output = _invoke("eval", "score", str(results))
    assert code == 0 and "online" in output, output


def test_a_corpus_manifest_is_not_a_release(builder_run: Path, tmp_path: Path) -> None:
    code, output = _invoke("release", "verify", str(builder_run))
    assert code == 2 and "not a release manifest" in output, output
    # A release build never takes the run folder for an old release to replace.
    code, output = _invoke(
        "release", "build", str(builder_run), str(builder_run), "--version", "1.0"
    )
    assert code != 0 and (builder_run / "store.sqlite").is_file(), output


# -- the README and the docs, command by command -------------------------------------------------

#: Every command of the README and the docs that is not run here, with why. A new command must be
#: run or listed.
SKIPPED: dict[str, str] = {
    'pip install -e ".[dev]"': "installs the package; the test runs the installed one",
    "mkdocs build --strict": "builds the site from the repository; .ci/run runs it",
    "pytest": "the test suite itself",
    "LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=... inspect eval medrealmm/medrealmm "
    "-T release=demo-output/release --model openai-api/local/YOUR-MODEL": "a real server (the "
    "real-server tier runs it against llama.cpp's server)",
    "export OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=...": "a real server",
    "export OPENAI_BASE_URL=http://127.0.0.1:8000/v1": "a real server",
    "export OPENAI_API_KEY=...": "a real server",
    "medrealmm eval run demo-output/release --out results --model Qwen/Qwen3-VL-32B-Instruct "
    "--images on --k 3": "a real model",
    "medrealmm eval run demo-output/release --out results --model Qwen/Qwen3-VL-32B-Instruct "
    "--images off": "a real model",
    "medrealmm eval run demo-output --model Qwen/Qwen3-VL-32B-Instruct --images on": "a real model",
    "medrealmm mccp extract CORPUS/ OUT/": "placeholders CORPUS/ OUT/",
    "medrealmm mccp export-validation OUT/ --n 200 --seed 0": "placeholder OUT/",
    "medrealmm mccp import-validation OUT/ filled.csv --reviewer dr-li": "placeholders",
    "medrealmm deid run RUN/": "placeholder RUN/",
    "medrealmm deid image in.jpg out.jpg": "placeholder in.jpg",
    'medrealmm release withdraw CASE_ID --reason "..." --store demo-output': "placeholder CASE_ID",
    "medrealmm eval run demo-output --model qwen3-vl-32b --images on --k 3 --models-config "
    "models.yaml": "a real model",
    "medrealmm eval run demo-output --model qwen3-vl-32b --images off --models-config "
    "models.yaml": "a real model",
    "medrealmm review add-user dr_li --store demo-output --role physician": "prompts",
    "medrealmm review add-user rev_wang --store demo-output --role reviewer": "prompts",
    "medrealmm review serve --store demo-output": "a server that runs until stopped",
    "medrealmm report demo-output report/ --grader NAME --seed 0 --resamples 2000": "placeholder",
    "medrealmm report results-a report/ --add results-b --add results-c": "placeholders",
    "medrealmm rubric generate RUN": "placeholder RUN",
    "medrealmm rubric export-round RUN": "placeholder RUN",
    "medrealmm rubric import-feedback RUN FILE --reviewer dr_li": "placeholders RUN FILE",
    "medrealmm rubric refine RUN": "placeholder RUN",
    "medrealmm rubric status RUN": "placeholder RUN",
    'pip install "medrealmm[inspect]"': "an install",
    "inspect eval medrealmm/medrealmm -T release=demo-output/release --model openai/gpt-4o": (
        "a hosted model"
    ),
    "inspect view": "a server that runs until stopped",
}

_FENCE = re.compile(r"^\s*```bash\n(.*?)^\s*```", re.S | re.M)
_OPTIONAL = re.compile(r"\s+\[[^\]]*\]")  # "[--model NAME]": optional, left out


def readme_commands(text: str) -> list[str]:
    """Every command line of the README's bash blocks, in order, without its comment and
    optional ``[...]`` parts, as one normalised string (shlex quoting)."""
    commands = []
    for block in _FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():  # continued lines as one
            words = shlex.split(_OPTIONAL.sub("", line), comments=True)
            if words:
                commands.append(shlex.join(words))
    return commands


def _nav_files(node: object) -> list[str]:
    """The Markdown files of an mkdocs nav, in reading order."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [f for value in node.values() for f in _nav_files(value)]
    if isinstance(node, list):
        return [f for item in node for f in _nav_files(item)]
    return []


def documented_pages() -> list[Path]:
    """The README, then every page of the documentation site in nav order: the order a new
    user reads them and the order their commands run in."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return [README] + [ROOT / config.get("docs_dir", "docs") / f for f in _nav_files(config["nav"])]


def documented_commands() -> list[str]:
    """Every command of every ```bash block of the README and the docs, in reading order."""
    return [c for page in documented_pages() for c in readme_commands(page.read_text("utf-8"))]


def test_every_readme_command_is_run_or_skipped_with_a_reason() -> None:
    commands = documented_commands()
    known = {shlex.join(shlex.split(c)) for c in SKIPPED}
    runnable = [c for c in commands if c not in known]
    assert all(c.startswith("medrealmm ") for c in runnable), runnable
    assert "medrealmm eval run demo-output --model online" in runnable  # the builder's run
    assert not known - set(commands), "SKIPPED lists commands the docs no longer have"


@pytest.mark.slow
def test_readme_offline_commands_run_literally_in_order(tmp_path: Path) -> None:
    """The README's and the docs' commands as a new user types them, in a fresh folder, one
    process each, answering yes where one asks (accepting the DUA)."""
    known = {shlex.join(shlex.split(c)) for c in SKIPPED}
    commands = [c for c in documented_commands() if c not in known]
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    env.pop("OPENAI_BASE_URL", None)
    if shutil.which("medrealmm", path=env["PATH"]) is None:
        pytest.skip("the medrealmm command is not installed beside this Python")
    for command in commands:
        result = subprocess.run(
            shlex.split(command),
            input="y\n",
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr, command
    scores = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    assert scores
    assert (tmp_path / "results" / "report" / "index.html").is_file()
    assert (tmp_path / "releases" / "1.1" / "manifest.json").is_file()
    assert (tmp_path / "results-0.2" / "store.sqlite").is_file()  # a dotted name is a folder

    # From the folder that holds the releases, with dotted output names: the release evaluated
    # is never taken for a derived folder of the results (it was deleted), nor written.
    here = tmp_path / "demo-output"
    for command in (
        "medrealmm eval run release --out results-0.1 --model offline --images off",
        "medrealmm eval run release-0.2 --out qwen2.5-vl --model offline",
        "medrealmm eval score qwen2.5-vl --json scores-v1.0.json",
        "medrealmm report results-0.1 report-0.1 --add qwen2.5-vl",
    ):
        result = subprocess.run(
            shlex.split(command), cwd=here, env=env, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr, command
    for release in ("release", "release-0.2"):
        verified = subprocess.run(
            ["medrealmm", "release", "verify", release], cwd=here, env=env, check=False
        )
        assert verified.returncode == 0, release
    for results in ("results-0.1", "qwen2.5-vl"):
        assert (here / results / "store.sqlite").is_file(), results
    assert json.loads((here / "scores-v1.0.json").read_text(encoding="utf-8"))
    assert (here / "report-0.1" / "index.html").is_file()
