"""Issue item 7: a symbolic link inside a release, a replies file with a bad byte or a runaway
reply, ``--skip X --redo X``, a model's refusal, and name look-ups by the de-identification
models' runtime. Each is refused or recorded, never silent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.demo import CORPUS_FILE
from medrealmm.evaluate import load_results
from medrealmm.io import iter_jsonl
from medrealmm.schema import CaseScore, Consultation, Response
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, " ".join(result.output.split())


# -- a release holds no symbolic link -------------------------------------------------------------


@pytest.fixture()
def release(demo_dir: Path, tmp_path: Path) -> Path:
    cases = [
        c for c in iter_jsonl(demo_dir / CORPUS_FILE, Consultation) if c.patient_medical_images
    ]
    with RunStore(tmp_path / "run") as store:
        store.put_many(stages.CORPUS_FINAL, ((c.id, c) for c in cases[:2]))
        store.set_meta(stages.image_root_key(stages.CORPUS_FINAL), str(demo_dir))
    out = tmp_path / "release"
    dua = tmp_path / "DUA.md"
    dua.write_text("测试用数据使用协议。\n", encoding="utf-8")
    build = ("release", "build", str(tmp_path / "run"), str(out), "--version", "1.0")
    assert _invoke(*build, "--dua", str(dua))[0] == 0
    assert _invoke("release", "verify", str(out))[0] == 0
    return out


def test_a_link_with_the_right_checksum_is_refused(release: Path, tmp_path: Path) -> None:
    """The link points at a copy outside the release with the same bytes: every checksum
    matches, and the release is still refused, naming the link."""
    image = next(p for p in (release / "images").rglob("*") if p.is_file())
    outside = tmp_path / "outside.bin"
    shutil.copyfile(image, outside)
    image.unlink()
    image.symlink_to(outside)
    code, output = _invoke("release", "verify", str(release))
    assert code == 2 and "symbolic link" in output, output
    assert image.relative_to(release).as_posix() in output


def test_a_linked_folder_is_refused_and_not_followed(release: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.txt").write_text("x", encoding="utf-8")
    (release / "extra").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    code, output = _invoke("release", "verify", str(release))
    assert code == 2 and "symbolic link (not allowed in a release): extra" in output, output
    assert "secret.txt" not in output  # never walked into


# -- import-responses: line numbers and a size cap ------------------------------------------------


@pytest.fixture()
def results(demo_dir: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    run = tmp_path / "run"
    assert (
        _invoke("mccp", "extract", str(demo_dir), str(run), "--from", "raw", "--limit", "2")[0] == 0
    )
    assert _invoke("rubric", "generate", str(run))[0] == 0
    with RunStore(run) as store:
        ids = sorted(store.keys(stages.MCCP_INSTANCE))
    return run, ids


def test_a_bad_byte_in_replies_names_its_line(
    results: tuple[Path, list[str]], tmp_path: Path
) -> None:
    run, ids = results
    path = tmp_path / "replies.jsonl"
    good = json.dumps({"instance_id": ids[0], "reply": "好的"}, ensure_ascii=False).encode()
    bad = b'{"instance_id": "' + ids[1].encode() + b'", "reply": "\xff\xfe"}'
    path.write_bytes(good + b"\n\n" + bad + b"\n")
    code, output = _invoke("eval", "import-responses", str(run), str(path), "--name", "elsewhere")
    assert code == 2, output
    assert "replies.jsonl:3: field '<encoding>'" in output and "0xff" in output


def test_a_runaway_reply_is_refused_naming_the_line(
    results: tuple[Path, list[str]], tmp_path: Path
) -> None:
    run, ids = results
    path = tmp_path / "replies.jsonl"
    lines = [
        {"instance_id": ids[0], "reply": "好的"},
        {"instance_id": ids[1], "reply": "很" * 400_000},  # 1.2 MB of UTF-8
    ]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines), encoding="utf-8")
    args = ("eval", "import-responses", str(run), str(path), "--name", "elsewhere")
    code, output = _invoke(*args)
    assert code == 2 and "replies.jsonl:2: field 'reply'" in output, output
    assert "1,200,000 bytes" in output and "--max-reply-bytes" in output
    # A line far over the cap is refused before it is read whole.
    path.write_text(json.dumps(lines[1]) + "\n", encoding="utf-8")  # \\uXXXX: 6 bytes a char
    code, output = _invoke(*args, "--max-reply-bytes", "1000")
    assert code == 2 and "replies.jsonl:1: field 'reply'" in output and "over" in output, output
    code, output = _invoke(*args, "--max-reply-bytes", "2000000")
    assert code == 0, output


# -- --skip and --redo of one stage ---------------------------------------------------------------


def test_skip_and_redo_of_one_stage_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "pipeline.yaml"
    config.write_text("input: nowhere\n", encoding="utf-8")
    run = tmp_path / "run"
    code, output = _invoke(
        "run", str(run), "--config", str(config), "--skip", "deid", "--redo", "deid"
    )
    assert code == 2 and "--skip and --redo both name deid" in output, output
    assert not run.exists()  # refused before the folder is made


# -- a refusal is recorded, scored 0 and counted --------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        FakeReply(content=None, refusal="I can't help with that."),
        FakeReply(content="", finish_reason="content_filter"),
    ],
    ids=["refusal-field", "content-filter"],
)
def test_a_refusal_is_recorded_scored_zero_and_counted(
    reply: FakeReply,
    results: tuple[Path, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, ids = results
    with FakeOpenAIServer(lambda body: reply, served_models=["m"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code, output = _invoke("eval", "run", str(run), "--model", "m", "--images", "off")
    assert code == 0, output
    assert f"{len(ids)} refusals (scored 0)" in output
    with RunStore(run) as store:
        replies = [r for r in store.iter(stages.EVAL_RESPONSE, Response) if r.model == "m"]
        scores = [s for s in store.iter(stages.EVAL_SCORE, CaseScore) if s.model == "m"]
        summary = {row.model: row for row in load_results(store).summary()}
        graded = [k for k in store.keys(stages.EVAL_VERDICT) if "|m|" in k]
    assert len(replies) == len(ids) and all(r.refused for r in replies)
    assert all(s.refused and s.complete and s.score == 0.0 for s in scores)
    assert graded == []  # nothing to grade: no grader call for a refusal
    assert summary["m"].refusals == len(ids) and summary["m"].score == 0.0
    code, output = _invoke("eval", "score", str(run))
    assert code == 0 and "refused" in output
    report = tmp_path / "report"
    assert _invoke("report", str(run), str(report))[0] == 0
    overall = json.loads((report / "tables" / "overall.json").read_text(encoding="utf-8"))
    rows = overall["rows"] if isinstance(overall, dict) else overall
    assert any(row["model"] == "m" and row["refused"] == len(ids) for row in rows)


# -- no name look-up from the de-identification models' runtime -----------------------------------

_MODELS_THEN_WAIT = (
    "import time\n"
    "from medrealmm.deid.ner import _model\n"
    "from medrealmm.deid.ocr import _build_engine\n"
    "_model(); _build_engine()\n"
    "time.sleep(14)\n"  # ONNX Runtime's telemetry looked its host up about 9 s after a session
)


def test_onnxruntime_telemetry_is_off_before_the_first_session() -> None:
    code = "import os\nfrom medrealmm.deid.ner import _model\n_model()\n"
    code += "print(os.environ.get('ORT_DISABLE_TELEMETRY'))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "1"


def test_telemetry_switched_on_by_an_earlier_import_is_reported() -> None:
    """ONNX Runtime reads the switch when it is imported: the library's models import it
    after the switch (no warning), and a process that imported it first is told."""
    ours = "from medrealmm.deid.ner import _model\n_model()\n"
    theirs = "import onnxruntime\nfrom medrealmm.deid.ner import _model\n_model()\n"
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env=env,
        )
        for code in (ours, theirs)
    ]
    assert all(run.returncode == 0 for run in runs), [run.stderr[-2000:] for run in runs]
    assert "telemetry" not in runs[0].stderr
    assert "imported before ORT_DISABLE_TELEMETRY=1" in runs[1].stderr


@pytest.mark.slow
def test_deid_models_resolve_no_name(tmp_path: Path) -> None:
    """Every connect of the process and its threads, seen by strace: none to a DNS server or
    any other network host (the runtime's telemetry did both before it was turned off)."""
    if shutil.which("strace") is None:
        pytest.skip("needs strace")
    probe = subprocess.run(["strace", "-f", "-o", "/dev/null", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("ptrace is not permitted here")
    trace = tmp_path / "trace.txt"
    result = subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmmsg", "-o", str(trace),
         sys.executable, "-c", _MODELS_THEN_WAIT],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    calls = trace.read_text(encoding="utf-8", errors="replace").splitlines()
    network = [c for c in calls if "AF_INET" in c or "htons(53)" in c or "events.data" in c]
    assert network == [], network[:5]
