"""The whole chain over the demo corpus and over hand-made inputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from medrealmm.corpus import CorpusConfig, Drop, Engine, build_corpus
from medrealmm.corpus.build import DROPPED_FILE, MANIFEST_FILE, SAMPLED_FILE
from medrealmm.demo import TRUTH_FILE
from medrealmm.io import DataError, iter_jsonl
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages

OUTPUT_FILES = (SAMPLED_FILE, DROPPED_FILE, MANIFEST_FILE)


def _truth(demo_dir: Path) -> dict[str, str | None]:
    truth = json.loads((demo_dir / TRUTH_FILE).read_text(encoding="utf-8"))
    return {cid: entry["expected_drop"] for cid, entry in truth.items()}


def test_demo_planted_bad_cases_are_dropped_with_the_right_reasons(
    demo_corpus: Path, demo_dir: Path, tmp_path: Path
) -> None:
    manifest = build_corpus(demo_corpus, tmp_path, workers=1)
    expected = _truth(demo_dir)
    drops = {d.consultation_id: d.reason.value for d in iter_jsonl(tmp_path / DROPPED_FILE, Drop)}
    assert drops == {cid: reason for cid, reason in expected.items() if reason}
    kept = [c.id for c in iter_jsonl(tmp_path / SAMPLED_FILE, Consultation)]
    assert kept == sorted(cid for cid, reason in expected.items() if reason is None)
    odd = [c.id for c in iter_jsonl(demo_corpus, Consultation) if len(c.events) % 2]
    assert len([cid for cid in odd if expected[cid] is None]) >= 10
    assert set(odd) - {"demo-bad-01-too-few-turns"} <= set(kept)  # the side rule keeps them
    counts = [(s.operator.value, s.input, s.output) for s in manifest.stages]
    n = len(expected)
    assert counts == [
        ("image", n, n - 1),
        ("completeness", n - 1, n - 6),
        ("balance", n - 6, n - 6),
        ("privacy", n - 6, n - 7),
    ]
    assert manifest.departments["皮肤科"] == {"C0": 16, "C1": 15, "C2": 14, "C3": 14, "C3'": 13}
    assert manifest.privacy_backend == "offline-baseline" and manifest.privacy_backend_is_baseline


def test_results_land_in_the_store_with_the_image_root(
    demo_corpus: Path, demo_dir: Path, tmp_path: Path
) -> None:
    build_corpus(demo_corpus, tmp_path, workers=1)
    with RunStore(tmp_path) as store:
        assert store.count(stages.CORPUS_SAMPLED) == 33
        assert store.count(stages.CORPUS_DROPPED) == 7
        root = store.get_meta(stages.image_root_key(stages.CORPUS_SAMPLED))
        assert Path(root) == demo_dir.resolve()
        assert store.get_meta("corpus.manifest")["input"] == "consultations.jsonl"


def test_rebuild_with_a_cap_replaces_rows_and_reuses_agent_verdicts(
    demo_corpus: Path, tmp_path: Path
) -> None:
    build_corpus(demo_corpus, tmp_path, workers=1)
    config = CorpusConfig.model_validate({"balance": {"cap": 4, "seed": 1}})
    manifest = build_corpus(demo_corpus, tmp_path, config, workers=1)
    with RunStore(tmp_path) as store:
        sampled = list(store.iter(stages.CORPUS_SAMPLED, Consultation))
        assert sum(c.department == "皮肤科" for c in sampled) <= 4
        assert store.count(stages.CORPUS_SAMPLED) == manifest.stages[-1].output
        calls = sum(row["calls"] for row in store.usage())
    assert calls == 33  # the second build screened no case twice
    assert manifest.balance_cap == 4


def test_worker_count_does_not_change_the_output(demo_corpus: Path, tmp_path: Path) -> None:
    build_corpus(demo_corpus, tmp_path / "one", workers=1)
    build_corpus(demo_corpus, tmp_path / "two", workers=2)
    for name in OUTPUT_FILES:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


@pytest.mark.slow
def test_ray_engine_output_is_byte_identical_on_the_demo(demo_corpus: Path, tmp_path: Path) -> None:
    build_corpus(demo_corpus, tmp_path / "local", workers=2)
    build_corpus(demo_corpus, tmp_path / "ray", engine=Engine.RAY, workers=2)
    for name in OUTPUT_FILES:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes()


def test_oversampled_copies_carry_their_source(demo_corpus: Path, tmp_path: Path) -> None:
    config = CorpusConfig.model_validate(
        {"balance": {"min_per_department": 2, "with_replacement": True}}
    )
    manifest = build_corpus(demo_corpus, tmp_path, config, workers=1)
    copies = [
        c for c in iter_jsonl(tmp_path / SAMPLED_FILE, Consultation) if "duplicate_of" in c.meta
    ]
    assert len(copies) == manifest.stages[2].added_copies > 0
    assert all(c.id.startswith(str(c.meta["duplicate_of"])) for c in copies)


def test_a_bad_line_names_file_line_and_field(demo_corpus: Path, tmp_path: Path) -> None:
    lines = demo_corpus.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[2])
    del broken["department"]
    lines[2] = json.dumps(broken, ensure_ascii=False)
    shutil.copytree(demo_corpus.parent / "images", tmp_path / "images")  # a copy of the images
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        build_corpus(bad, tmp_path / "out", workers=2)
    assert (info.value.path, info.value.line, info.value.field) == (bad, 3, "department")


def test_duplicate_ids_are_rejected(demo_corpus: Path, tmp_path: Path) -> None:
    lines = demo_corpus.read_text(encoding="utf-8").splitlines()
    shutil.copytree(demo_corpus.parent / "images", tmp_path / "images")  # a copy of the images
    bad = tmp_path / "dup.jsonl"
    bad.write_text("\n".join([*lines, "", lines[0]]) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        build_corpus(bad, tmp_path / "out", workers=1)
    assert info.value.line == len(lines) + 2 and info.value.field == "id"
    assert "first on line 1" in str(info.value)


def test_missing_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl"):
        build_corpus(tmp_path / "nope.jsonl", tmp_path / "out")


@pytest.mark.parametrize(
    "settings",
    [{"cap": 4, "seed": 1}, {"cap": 5, "min_per_department": 3, "with_replacement": True}],
)
def test_the_streamed_build_selects_what_the_in_memory_path_selects(
    demo_corpus: Path, tmp_path: Path, settings: dict[str, object]
) -> None:
    """The build streams through a pool on disk; the old path held every screened row and ran
    ``balance`` and the 4a rule over lists. Both select the same cases and drops."""
    from medrealmm.corpus import balance, privacy_rule
    from medrealmm.corpus.build import materialize
    from medrealmm.corpus.engines import run_screen
    from medrealmm.corpus.screen import plan_shards

    config = CorpusConfig.model_validate({"balance": settings, "privacy": {"model": None}})
    rows = run_screen(plan_shards(demo_corpus), config.completeness, workers=1)
    records = {row["id"]: row["record"] for row in rows if row["record"]}
    picked = balance(
        ((row["id"], row["department"]) for row in rows if row["record"]), config.balance
    )
    cases = [materialize(pick, records[pick.source_id]) for pick in picked.picks]
    expected = [c for c in cases if privacy_rule(c, config.privacy) is None]
    assert any(pick.is_copy for pick in picked.picks) == ("with_replacement" in settings)
    (tmp_path / ".corpus-pool-killed").mkdir()  # what a killed build leaves
    build_corpus(demo_corpus, tmp_path, config, workers=1)
    built = list(iter_jsonl(tmp_path / SAMPLED_FILE, Consultation))
    assert built == expected
    dropped = {d.consultation_id for d in iter_jsonl(tmp_path / DROPPED_FILE, Drop)}
    assert {d.consultation_id for d in picked.drops} <= dropped
    assert not list(tmp_path.glob(".corpus-pool-*"))  # the scratch pools are gone


def test_a_repeated_id_across_the_pool_batches_names_its_first_line(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from medrealmm.corpus import pool

    monkeypatch.setattr(pool, "_BATCH", 3)
    lines = demo_corpus.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "dup.jsonl"
    bad.write_text("\n".join([*lines[:10], lines[4], *lines[10:]]) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        # validate=False: the pool's own check, not the validator's (which also refuses it)
        build_corpus(bad, tmp_path / "out", workers=1, validate=False)
    assert info.value.line == 11 and "first on line 5" in str(info.value)
