from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner, Result

from medrealmm.cli import app
from medrealmm.release import load_release

runner = CliRunner()


def invoke(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def test_every_release_command_has_help() -> None:
    for command in ("build", "withdraw", "accept-dua", "verify"):
        result = invoke("release", command, "--help")
        assert result.exit_code == 0, result.output
        assert "Usage" in result.output


def test_build_withdraw_accept_load_round_trip(
    run_dir: Path, tmp_path: Path, dua_file: Path
) -> None:
    v1 = tmp_path / "v1.0"
    dua = tmp_path / "our-DUA.md"
    dua.write_text("测试用数据使用协议。\n", encoding="utf-8")
    result = invoke(
        "release", "build", str(run_dir), str(v1), "--version", "1.0", "--dua", str(dua)
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((v1 / "manifest.json").read_text(encoding="utf-8"))

    result = invoke(
        "release", "withdraw", "demo-000", "--reason", "patient request",
        "--store", str(run_dir), "--date", "2026-02-03",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    v2 = tmp_path / "v1.1"
    result = invoke(
        "release", "build", str(run_dir), str(v2), "--version", "1.1", "--dua", str(dua),
        "--contamination-note", "none of our models saw it",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "| 2026-02-03 | demo-000 |" in (v2 / "CHANGELOG.md").read_text(encoding="utf-8")

    declined = invoke("release", "accept-dua", str(v2), "--name", "研究员", input="n\n")
    assert declined.exit_code != 0
    assert not dua_file.exists()
    accepted = invoke("release", "accept-dua", str(v2), "--name", "研究员", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    loaded = load_release(v2)
    assert "demo-000" not in {c.id for c in loaded.consultations}
    assert len(loaded.consultations) == manifest["counts"]["consultations"] - 1
    assert loaded.manifest["contamination"]["known_training_exposure"] == [
        "none of our models saw it"
    ]
    assert invoke("release", "verify", str(v2)).exit_code == 0


def test_errors_are_one_clear_line(run_dir: Path, tmp_path: Path) -> None:
    missing = invoke(
        "release", "build", str(tmp_path / "nope"), str(tmp_path / "o"), "--version", "1.0"
    )
    assert missing.exit_code == 2
    assert "no run store" in missing.output
    unknown = invoke("release", "withdraw", "ghost", "--reason", "r", "--store", str(run_dir))
    assert unknown.exit_code == 2
    assert "no case 'ghost'" in unknown.output
    assert "Traceback" not in unknown.output
