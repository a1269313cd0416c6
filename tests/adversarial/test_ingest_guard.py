"""Issue item 2: an emptied or shrunken input never wipes a finished run.

One validator (``validate``'s) runs in every command that ingests a file, so each refuses
the same files with the same error; a rebuild that would drop most of a run's consultations
needs ``--allow-shrink``; a release or report never outlives the rows it was made from.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from cases import CASES, BadInput, good_record, write_dataset, write_image
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.io import dataset, idhash
from medrealmm.io.dataset import check_dataset, check_shrink
from medrealmm.io.errors import DataError
from medrealmm.io.idhash import IdDigests


def _symlink_out(folder: Path) -> None:
    """The image is a link to a file outside the dataset folder (here: not an image)."""
    outside = folder.parent / "outside.txt"
    outside.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    (folder / "images/c1").mkdir(parents=True)
    (folder / "images/c1/01.png").symlink_to(outside)


def _symlink_case() -> BadInput:
    def build(folder: Path) -> None:
        write_dataset(folder, [_line(good_record("c1"))], image=False)
        _symlink_out(folder)

    return BadInput("image-symlink-out", build, "outside the dataset folder")


#: The checks only ``validate`` made before (images, time order): now every command makes them.
ONCE_VALIDATE_ONLY = [
    *(c for c in CASES if c.name.startswith(("image-", "timestamp-out-of-order"))),
    _symlink_case(),
]


def _line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _corpus(folder: Path, n: int) -> Path:
    """A dataset of ``n`` valid consultations sharing one image."""
    lines = [_line(good_record(f"c{i}")) for i in range(n)]
    write_dataset(folder, lines)
    return folder / "consultations.jsonl"


def _pipeline(tmp_path: Path, data: Path) -> Path:
    config = tmp_path / "pipeline.yaml"
    config.write_text(f"input: {data}\nworkers: 1\n", encoding="utf-8")
    return config


def _error(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


@pytest.mark.parametrize("case", ONCE_VALIDATE_ONLY, ids=lambda c: c.name)
def test_every_ingesting_command_refuses_what_validate_refuses(
    case: BadInput, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    case.build(data)
    jsonl = str(data / "consultations.jsonl")
    expected = _error(["validate", jsonl])
    assert case.expect in expected
    assert _error(["corpus", "build", jsonl, str(tmp_path / "a"), "--workers", "1"]) == expected
    config = _pipeline(tmp_path, data)
    assert _error(["run", str(tmp_path / "b"), "--config", str(config)]) == expected
    mccp = ["mccp", "extract", str(data), str(tmp_path / "c"), "--from", "raw"]
    assert _error(mccp) == expected


def _rows(run: Path) -> str:
    with sqlite3.connect(run / "store.sqlite") as db:
        rows = db.execute(
            "select stage, key, status, payload from records order by 1, 2"
        ).fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def _finished_outputs(run: Path) -> None:
    """Stand-ins for the release and report a finished run holds beside its rows."""
    (run / "release").mkdir()
    (run / "release" / "manifest.json").write_text("{}", encoding="utf-8")
    (run / "report").mkdir()
    (run / "report" / "index.html").write_text("<html></html>", encoding="utf-8")


def test_an_emptied_or_truncated_input_leaves_a_corpus_build_as_it_was(tmp_path: Path) -> None:
    source, run = _corpus(tmp_path / "in", 6), tmp_path / "run"
    build = ["corpus", "build", str(source), str(run), "--workers", "1"]
    assert CliRunner().invoke(app, build).exit_code == 0
    _finished_outputs(run)
    before = _rows(run)

    source.write_bytes(b"")  # : > IN/consultations.jsonl
    assert "no consultations in this file" in _error(build)
    write_dataset(source.parent, [_line(good_record("c0")), _line(good_record("c1"))])
    error = _error(build)  # 2 of 6 kept: 4 lost
    assert "holds a run over 6 consultations" in error and "drop 4 of them (67%)" in error
    assert "--allow-shrink" in error and "nothing was changed" in error
    assert _rows(run) == before and (run / "release").is_dir() and (run / "report").is_dir()

    shrunk = CliRunner().invoke(app, [*build, "--allow-shrink"])
    assert shrunk.exit_code == 0, shrunk.output
    assert _rows(run) != before
    assert not (run / "release").exists() and not (run / "report").exists()  # made from old rows


def test_a_smaller_input_within_the_limit_rebuilds_without_the_flag(tmp_path: Path) -> None:
    source, run = _corpus(tmp_path / "in", 4), tmp_path / "run"
    build = ["corpus", "build", str(source), str(run), "--workers", "1"]
    assert CliRunner().invoke(app, build).exit_code == 0
    write_dataset(source.parent, [_line(good_record(f"c{i}")) for i in range(2)])
    assert CliRunner().invoke(app, build).exit_code == 0  # half kept: not "most" dropped


def test_an_emptied_input_leaves_a_pipeline_run_as_it_was(tmp_path: Path) -> None:
    data, run = tmp_path / "in", tmp_path / "run"
    source = _corpus(data, 4)
    config = _pipeline(tmp_path, data)
    later = ["corpus", "deid", "review", "mccp", "rubric", "evaluate", "release", "report"]
    only_ingest = [arg for stage in later for arg in ("--skip", stage)]
    first = CliRunner().invoke(app, ["run", str(run), "--config", str(config), *only_ingest])
    assert first.exit_code == 0, first.output
    _finished_outputs(run)
    before = _rows(run)

    source.write_bytes(b"")
    assert "no consultations in this file" in _error(["run", str(run), "--config", str(config)])
    write_dataset(data, [_line(good_record("c0"))])
    write_image(data)
    error = _error(["run", str(run), "--config", str(config)])
    assert "drop 3 of them (75%)" in error
    assert _rows(run) == before and (run / "release").is_dir() and (run / "report").is_dir()

    args = ["run", str(run), "--config", str(config), *only_ingest, "--allow-shrink"]
    allowed = CliRunner().invoke(app, args)
    assert allowed.exit_code == 0, allowed.output
    assert not (run / "release").exists() and not (run / "report").exists()


def test_a_chain_run_never_keeps_a_release_made_from_other_rows(tmp_path: Path) -> None:
    """With the input stage skipped, a chain run removes what it may make stale at once."""
    from medrealmm.pipeline import CHAIN, StageContext, run_chain
    from medrealmm.pipeline.settings import PipelineSettings
    from medrealmm.store import RunStore

    run = tmp_path / "run"
    run.mkdir()
    _finished_outputs(run)
    everything_but_report = [stage.name for stage in CHAIN if stage.name != "report"]
    with RunStore(run, writer=True) as store:
        ctx = StageContext(store, run, PipelineSettings(input=tmp_path))
        with pytest.raises(ValueError):  # report reads eval.score, which is missing
            run_chain(ctx, CHAIN, skip=everything_but_report)
    assert (run / "release").is_dir() and not (run / "report").exists()


def test_a_duplicate_id_is_named_with_both_lines_before_a_later_problem(tmp_path: Path) -> None:
    """Ids are checked as digests after the scan, yet the first problem in line order wins."""
    lines = [_line(good_record(f"c{i}")) for i in range(5)]
    write_dataset(tmp_path / "a", [*lines, lines[2], b"{"])
    with pytest.raises(DataError) as dup:
        check_dataset(tmp_path / "a")
    assert str(dup.value).endswith(
        "consultations.jsonl:6: field 'id': duplicate id 'c2' (first on line 3)"
    )
    write_dataset(tmp_path / "b", [*lines, b"{", lines[2]])
    with pytest.raises(DataError, match=r":6: field '<json>': not valid JSON"):
        check_dataset(tmp_path / "b")
    write_dataset(tmp_path / "c", [*lines, lines[4]])
    assert len(check_dataset(tmp_path / "c", limit=5).ids) == 5  # the repeat is past the limit


def test_colliding_digests_are_no_duplicate_and_hide_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every id given one digest: distinct ids pass, a real repeat is still named exactly."""
    monkeypatch.setattr(idhash, "id_digest", lambda value: 7)
    monkeypatch.setattr(dataset, "id_digest", lambda value: 7)
    lines = [_line(good_record(f"c{i}")) for i in range(4)]
    write_dataset(tmp_path / "a", lines)
    assert check_dataset(tmp_path / "a").departments.total() == 4
    write_dataset(tmp_path / "b", [*lines, lines[1]])
    with pytest.raises(DataError, match=r":5: field 'id': duplicate id 'c1' \(first on line 2\)"):
        check_dataset(tmp_path / "b")


def test_the_shrink_guard_counts_distinct_consultations_from_digests(tmp_path: Path) -> None:
    held = ["a", "a", "b", "c", "d"]  # a copy's source counts once
    with pytest.raises(ValueError, match=r"over 4 consultations .* drop 3 of them \(75%\)"):
        check_shrink(tmp_path, iter(held), IdDigests(["a", "x"]), allow=False)
    check_shrink(tmp_path, iter(held), IdDigests(["a", "b"]), allow=False)  # half: allowed
    check_shrink(tmp_path, iter(held), IdDigests([]), allow=True)
    check_shrink(tmp_path, iter([]), IdDigests(["a"]), allow=False)  # a new run
