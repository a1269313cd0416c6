from __future__ import annotations

import asyncio
import csv
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from medrealmm.demo import bundled_corpus_dir
from medrealmm.io import DataError
from medrealmm.llm import build_client, resolve_spec
from medrealmm.mccp import (
    decisions,
    draw_validation_sample,
    export_validation_csv,
    import_validation_csv,
    record_decision,
    run_mccp,
    summarize_validation,
    validation_sample,
)
from medrealmm.pipeline.steps.ingest import load_raw
from medrealmm.store import RunStore, stages


@pytest.fixture(scope="module")
def extracted_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One offline extraction of the demo corpus, closed so its file can be copied."""
    folder = tmp_path_factory.mktemp("extracted")
    demo = bundled_corpus_dir()
    with RunStore(folder) as store:
        store.set_meta(stages.image_root_key(stages.RAW), str(demo))
        load_raw(store, demo)
        client = build_client(resolve_spec("offline"), cache=store.cache)
        asyncio.run(run_mccp(store, client, source_stage=stages.RAW))
    return folder


@pytest.fixture()
def extracted(extracted_once: Path, tmp_path: Path) -> Iterator[RunStore]:
    """A private copy per test, so one test's decisions never reach another."""
    shutil.copytree(extracted_once, tmp_path / "run")
    with RunStore(tmp_path / "run") as store:
        yield store


def test_sample_is_seeded_and_kept_for_the_review_app(extracted: RunStore) -> None:
    first = draw_validation_sample(extracted, 10, seed=7)
    assert len(first) == len(set(first)) == 10
    assert draw_validation_sample(extracted, 10, seed=7) == first
    assert draw_validation_sample(extracted, 10, seed=8) != first
    assert validation_sample(extracted) == draw_validation_sample(extracted, 10, seed=8)
    everything = draw_validation_sample(extracted, 10_000)
    assert sorted(everything) == sorted(extracted.keys(stages.MCCP_INSTANCE))


def test_acceptance_rate_counts_each_reviewer_once_per_instance(extracted: RunStore) -> None:
    ids = draw_validation_sample(extracted, 4, seed=1)
    assert summarize_validation(extracted).rate is None
    record_decision(extracted, ids[0], "dr-wang", True)
    record_decision(extracted, ids[1], "dr-wang", False, "图片与回复无关")
    record_decision(extracted, ids[1], "dr-wang", True)  # changed their mind: replaces
    record_decision(extracted, ids[2], "dr-li", False)
    summary = summarize_validation(extracted)
    assert (summary.accepted, summary.decided) == (2, 3)
    assert summary.rate == pytest.approx(2 / 3)
    assert summary.by_reviewer == {"dr-wang": (2, 2), "dr-li": (0, 1)}
    assert (summary.sample_size, summary.undecided) == (4, 1)
    assert "2/3 cases = 66.7%" in summary.lines()[0]
    with pytest.raises(KeyError):
        record_decision(extracted, "nope", "dr-li", True)


def test_acceptance_is_per_case_over_the_drawn_sample(extracted: RunStore) -> None:
    ids = draw_validation_sample(extracted, 3, seed=1)
    outside = sorted(set(extracted.keys(stages.MCCP_INSTANCE)) - set(ids))[0]
    record_decision(extracted, ids[0], "dr-wang", True)
    record_decision(extracted, ids[0], "dr-li", True)
    record_decision(extracted, ids[1], "dr-wang", True)
    record_decision(extracted, ids[1], "dr-li", False)  # the physicians disagree
    record_decision(extracted, outside, "dr-li", True)  # not in the sample: not counted
    summary = summarize_validation(extracted)
    assert (summary.accepted, summary.decided, summary.disagreements) == (1, 2, 1)
    assert summary.rate == pytest.approx(1 / 2)
    assert (summary.undecided, summary.outside_sample) == (1, 1)
    assert summary.by_reviewer == {"dr-wang": (2, 2), "dr-li": (1, 2)}


def test_csv_round_trip_reports_the_acceptance_rate(extracted: RunStore, tmp_path: Path) -> None:
    path = tmp_path / "validation.csv"
    assert export_validation_csv(extracted, path, 5, seed=3) == 5
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["instance_id"] for r in rows] == validation_sample(extracted)
    assert all(r["physician_reply"] and "患者：" in r["dialogue"] for r in rows)
    for i, row in enumerate(rows):
        row["decision"] = ["接受", "accept", "reject", "", "1"][i]
    rows[0]["reviewer"] = "dr-zhao"
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    summary = import_validation_csv(extracted, path, reviewer="dr-sun")
    assert (summary.accepted, summary.decided, summary.undecided) == (3, 4, 1)
    assert {d.reviewer for d in decisions(extracted)} == {"dr-zhao", "dr-sun"}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_bad_rows_name_file_line_and_field_and_import_nothing(
    extracted: RunStore, tmp_path: Path
) -> None:
    good = sorted(extracted.keys(stages.MCCP_INSTANCE))[0]
    multiline = f'instance_id,dialogue,decision,reviewer\n{good},"a\nb",accept,dr\nx,y,maybe,dr\n'
    with pytest.raises(DataError) as caught:
        import_validation_csv(extracted, _write(tmp_path / "a.csv", multiline))
    assert (caught.value.line, caught.value.field) == (4, "decision")
    assert decisions(extracted) == []  # checked whole before recording anything

    unknown = "instance_id,decision,reviewer\nghost,accept,dr\n"
    with pytest.raises(DataError, match="ghost") as caught:
        import_validation_csv(extracted, _write(tmp_path / "b.csv", unknown))
    assert caught.value.field == "instance_id"

    anonymous = f"instance_id,decision\n{good},accept\n"
    with pytest.raises(DataError) as caught:
        import_validation_csv(extracted, _write(tmp_path / "c.csv", anonymous))
    assert (caught.value.line, caught.value.field) == (2, "reviewer")

    with pytest.raises(DataError) as caught:
        import_validation_csv(extracted, _write(tmp_path / "d.csv", "id,verdict\n"))
    assert caught.value.field == "decision"


def test_sampling_an_empty_run_is_a_clear_error(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store, pytest.raises(ValueError, match="mccp extract"):
        draw_validation_sample(store, 5)
