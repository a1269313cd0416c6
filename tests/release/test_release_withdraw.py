from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from medrealmm.io import read_parquet_rows
from medrealmm.release import (
    WITHDRAWN,
    ReleaseInfo,
    Withdrawal,
    all_withdrawals,
    build_release,
    default_register,
    record_withdrawal,
)
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages

INFO = ReleaseInfo(
    name="medrealmm", version="1.0", title="t", authors=("a",), dua="测试用数据使用协议。\n"
)
REASON = "患者王小明本人来电要求删除"  # names the requester: must never be published


def shipped_images(out: Path) -> set[str]:
    return {p.relative_to(out).as_posix() for p in (out / "images").rglob("*") if p.is_file()}


def test_withdrawal_removes_case_instances_rubrics_and_all_images(
    run_dir: Path, tmp_path: Path
) -> None:
    before = build_release(run_dir, tmp_path / "v1", INFO)
    with RunStore(run_dir) as store:
        victim = next(store.iter(stages.CORPUS_FINAL, Consultation))
        record_withdrawal(store, default_register(run_dir), victim.id, REASON, date(2026, 3, 4))
    after = build_release(
        run_dir,
        tmp_path / "v1.1",
        ReleaseInfo(
            name="medrealmm", version="1.1", title="t", authors=("a",), dua="测试用数据使用协议。\n"
        ),
    )
    out = tmp_path / "v1.1"

    assert victim.id not in {r["id"] for r in read_parquet_rows(out / "data/consultations.parquet")}
    instances = read_parquet_rows(out / "data/instances.parquet")
    assert victim.id not in {r["consultation_id"] for r in instances}
    kept_ids = {r["id"] for r in instances}
    assert {r["instance_id"] for r in read_parquet_rows(out / "data/rubrics.parquet")} == kept_ids

    victim_images = {name for name in shipped_images(tmp_path / "v1") if f"/{victim.id}/" in name}
    assert len(victim_images) == len(victim.patient_medical_images) > 0
    assert not (out / "images" / victim.id).exists()
    assert shipped_images(out) == shipped_images(tmp_path / "v1") - victim_images
    shipped_bytes = set(after.manifest["files"].values())
    for name in victim_images:  # no copy of the withdrawn images under any other name
        assert before.manifest["files"][name] not in shipped_bytes
    assert (
        after.manifest["counts"]["consultations"] == before.manifest["counts"]["consultations"] - 1
    )
    assert after.manifest["counts"]["withdrawn_cases"] == 1


def test_changelog_names_case_and_date_but_not_requester(run_dir: Path, tmp_path: Path) -> None:
    with RunStore(run_dir) as store:
        victim = next(store.iter(stages.CORPUS_FINAL, Consultation))
        record_withdrawal(store, default_register(run_dir), victim.id, REASON, date(2026, 3, 4))
    out = tmp_path / "rel"
    build_release(run_dir, out, INFO)
    changelog = (out / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"| 2026-03-04 | {victim.id} |" in changelog
    for path in out.rglob("*"):  # the reason (and the requester it names) is nowhere
        if path.is_file() and path.suffix in {".md", ".json", ".cff"}:
            assert "王小明" not in path.read_text(encoding="utf-8")
    assert "王小明" in default_register(run_dir).read_text(encoding="utf-8")  # kept privately


def test_instance_id_withdraws_its_whole_consultation(run_dir: Path, tmp_path: Path) -> None:
    with RunStore(run_dir) as store:
        instance_id = sorted(store.keys(stages.MCCP_INSTANCE))[0]
        withdrawal = record_withdrawal(
            store, default_register(run_dir), instance_id, "patient request", date(2026, 1, 2)
        )
        assert withdrawal.case_id == instance_id.split("#")[0]
        assert store.keys(WITHDRAWN) == {withdrawal.case_id}


def test_withdrawal_is_recorded_once_and_unknown_ids_are_refused(run_dir: Path) -> None:
    register = default_register(run_dir)
    with RunStore(run_dir) as store:
        case = sorted(store.keys(stages.CORPUS_FINAL))[0]
        first = record_withdrawal(store, register, case, "r", date(2026, 1, 2))
        again = record_withdrawal(store, register, case, "r2", date(2026, 5, 6))
        assert again == first
        assert len(register.read_text(encoding="utf-8").splitlines()) == 1
        with pytest.raises(ValueError, match="no case 'nope'"):
            record_withdrawal(store, register, "nope", "r", date(2026, 1, 2))


def test_register_survives_a_rebuilt_store(run_dir: Path, tmp_path: Path, demo_dir: Path) -> None:
    """The register, not the store, is the durable record: a fresh run cannot resurrect a case."""
    register = tmp_path / "maintainers" / "withdrawals.jsonl"
    with RunStore(run_dir) as store:
        case = sorted(store.keys(stages.CORPUS_FINAL))[0]
        record_withdrawal(store, register, case, "r", date(2026, 1, 2))
        store.delete(WITHDRAWN)
    out = tmp_path / "rel"
    manifest = build_release(run_dir, out, INFO, register=register).manifest
    assert manifest["counts"]["withdrawn_cases"] == 1
    assert case not in {r["id"] for r in read_parquet_rows(out / "data/consultations.parquet")}
    assert [w.case_id for w in all_withdrawals(register)] == [case]


def test_malformed_register_names_file_line_and_field(run_dir: Path, tmp_path: Path) -> None:
    from medrealmm.io import DataError

    register = tmp_path / "withdrawals.jsonl"
    good = Withdrawal(case_id="demo-000", date=date(2026, 1, 2), reason="r")
    register.write_text(
        good.model_dump_json() + "\n" + json.dumps({"case_id": "x", "date": "soon", "reason": "r"}),
        encoding="utf-8",
    )
    with pytest.raises(DataError) as caught:
        build_release(run_dir, tmp_path / "rel", INFO, register=register)
    assert (caught.value.line, caught.value.field) == (2, "date")


def test_a_withdrawal_removes_the_runs_release_and_report_and_says_so(run_dir: Path) -> None:
    """The run's release still holds the withdrawn case: it goes with the write that withdraws
    it, and the command says so on stderr without the case's text."""
    import os
    import subprocess
    import sys

    from medrealmm.release.demo import release_demo

    with RunStore(run_dir) as store:
        store.set_meta(stages.DEMO_META, True)  # the demo's run: its bundled DUA
        release_demo(store, run_dir, allow_unreviewed=True)  # the chain's release step
        victim = next(store.iter(stages.CORPUS_FINAL, Consultation))
    (run_dir / "report").mkdir()
    (run_dir / "report" / "index.html").write_text("<html></html>", encoding="utf-8")
    assert (run_dir / "release" / "manifest.json").is_file()
    src = str(Path(__file__).resolve().parents[2] / "src")
    command = "import sys; from medrealmm.cli import main; sys.exit(main())"
    args = ["release", "withdraw", victim.id, "--reason", REASON, "--store", str(run_dir)]
    result = subprocess.run(
        [sys.executable, "-c", command, *args],
        env={**os.environ, "PYTHONPATH": src, "COLUMNS": "400"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert not (run_dir / "release").exists() and not (run_dir / "report").exists()
    message = " ".join(result.stderr.split())
    assert f"rows of stage {WITHDRAWN} changed: removed {run_dir / 'release'} and" in message
    assert "`medrealmm release build`" in message
    texts = [event.content for event in victim.events if len(event.content) > 3]
    assert REASON not in result.stderr and not any(t in result.stderr for t in texts)


def test_next_version_changelog_lists_added_and_withdrawn_cases(
    run_dir: Path, tmp_path: Path, demo_dir: Path
) -> None:
    from .conftest import cut, demo_cases, rubric

    first = build_release(run_dir, tmp_path / "v1", INFO)
    assert "首个版本（first version）" in (tmp_path / "v1" / "CHANGELOG.md").read_text("utf-8")
    new = demo_cases(demo_dir, 8)[6:]
    with RunStore(run_dir) as store:
        store.put_many(stages.CORPUS_FINAL, ((c.id, c) for c in new))
        store.put_many(stages.MCCP_INSTANCE, ((cut(c).id, cut(c)) for c in new))
        store.put_many(stages.RUBRIC_FINAL, ((cut(c).id, rubric(cut(c).id)) for c in new))
        victim = first.shipped["consultations"][0]
        record_withdrawal(store, default_register(run_dir), victim, REASON, date(2026, 3, 4))
    info = ReleaseInfo(
        name="medrealmm", version="1.1", title="t", authors=("a",), dua="测试用数据使用协议。\n"
    )
    second = build_release(run_dir, tmp_path / "v1.1", info)
    assert second.added == sorted(c.id for c in new)
    assert second.manifest["previous_version"] == "1.0"
    assert second.manifest["counts"]["added_cases"] == 2
    changelog = (tmp_path / "v1.1" / "CHANGELOG.md").read_text("utf-8")
    added = changelog.split("Added cases")[1].split("Withdrawn cases")[0]
    assert all(f"- {c.id}" in added for c in new) and "since 1.0" in added
    assert victim in changelog.split("Withdrawn cases")[1]
    with RunStore(run_dir) as store:
        shipped = store.get_meta(stages.RELEASE_VERSIONS_META)
    assert set(shipped) == {"1.0", "1.1"}
    assert victim not in shipped["1.1"]["consultations"]
