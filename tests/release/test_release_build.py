from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from medrealmm.demo import CORPUS_FILE
from medrealmm.io import iter_jsonl, read_parquet_rows
from medrealmm.release import (
    ReleaseInfo,
    UnmaskedDataError,
    build_release,
    load_release,
    record_acceptance,
)
from medrealmm.schema import Consultation, Instance
from medrealmm.store import RunStore, stages

INFO = ReleaseInfo(
    name="medrealmm",
    version="1.0",
    title="测试集",
    authors=("维护者",),
    dua="测试用数据使用协议。\n",
)


def tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_building_twice_gives_identical_checksums(run_dir: Path, tmp_path: Path) -> None:
    first = build_release(run_dir, tmp_path / "a", INFO)
    second = build_release(run_dir, tmp_path / "b", INFO)
    assert first.manifest["files"] == second.manifest["files"]
    assert tree(tmp_path / "a") == tree(tmp_path / "b")  # manifest.json included
    again = build_release(run_dir, tmp_path / "a", INFO)  # rebuild in place
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    assert again.manifest == first.manifest


def test_manifest_lists_counts_departments_and_every_file(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    manifest = build_release(run_dir, out, INFO).manifest
    on_disk = tree(out)
    del on_disk["manifest.json"]
    assert manifest["files"] == on_disk
    assert {"DUA.md", "CHANGELOG.md", "CITATION.cff", "README.md"} <= set(on_disk)
    counts = manifest["counts"]
    assert (counts["consultations"], counts["instances"], counts["rubrics"]) == (6, 6, 6)
    assert counts["images"] == sum(1 for name in on_disk if name.startswith("images/"))
    assert counts["images"] > 6
    assert sum(d["consultations"] for d in manifest["departments"].values()) == 6
    assert manifest["sources"]["corpus_review_approved"] is True
    assert manifest["contamination"]["canary"].startswith("MEDREALMM CANARY GUID ")
    assert manifest["contamination"]["known_training_exposure"] == []
    assert manifest["dua"]["sha256"] == on_disk["DUA.md"]
    assert 'version: "1.0"' in (out / "CITATION.cff").read_text(encoding="utf-8")
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8")) == manifest


def test_rows_point_at_shipped_images_named_by_content(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    build_release(run_dir, out, INFO)
    for row in read_parquet_rows(out / "data" / "consultations.parquet"):
        refs = [ref for event in row["events"] for ref in event["images"]]
        assert refs
        for ref in refs:
            assert ref["path"].startswith(f"images/{row['id']}/")
            shipped = out / ref["path"]
            assert hashlib.sha256(shipped.read_bytes()).hexdigest() == ref["sha256"]
            assert ref["sha256"][:16] in shipped.name  # original file names do not travel


def test_card_front_matter_points_hugging_face_at_the_tables(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    build_release(run_dir, out, INFO)
    card = (out / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("---\n")[1])
    configs = {c["config_name"]: c for c in front["configs"]}
    assert set(configs) == {"consultations", "instances", "rubrics"}
    for config in configs.values():
        assert (out / config["data_files"][0]["path"]).is_file()
    assert configs["instances"]["default"] is True
    assert front["license_link"] == "DUA.md"


def test_card_and_manifest_carry_the_dataset_statistics(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    result = build_release(run_dir, out, INFO)
    stats = result.manifest["statistics"]
    assert stats["instances"] == result.manifest["counts"]["instances"]
    quantities = [d["quantity"] for d in stats["distributions"]]
    assert quantities == ["turns", "images", "criteria", "positive", "negative"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "数据集统计" in card and "量表标准数 (criteria)" in card and "患者意图" in card


@pytest.mark.slow
def test_hugging_face_datasets_loads_the_release(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "rel"
    build_release(run_dir, out, INFO)
    loaded = datasets.load_dataset(str(out), "instances", cache_dir=str(tmp_path / "hf"))
    assert loaded["test"].num_rows == 6
    assert set(loaded["test"]["consultation_id"]) == {
        r["consultation_id"] for r in read_parquet_rows(out / "data" / "instances.parquet")
    }


def test_unapproved_stages_are_released_but_flagged(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    run = make_run(corpus_stage=stages.CORPUS_DEID, rubric_stage=stages.RUBRIC_ROUND)
    out = tmp_path / "rel"
    manifest = build_release(run, out, INFO, allow_unreviewed=True).manifest
    assert manifest["sources"] == {
        "corpus_stage": stages.CORPUS_DEID,
        "corpus_review_approved": False,
        "rubric_stage": stages.RUBRIC_ROUND,
        "rubrics_approved": False,
    }
    rubrics = read_parquet_rows(out / "data" / "rubrics.parquet")
    assert len(rubrics) == 6
    assert {r["round"] for r in rubrics} == {1}  # each instance's latest round
    assert "not review-approved" in (out / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("stage", [stages.RAW, stages.CORPUS_SAMPLED])
def test_unmasked_stages_are_refused(stage: str, run_dir: Path, tmp_path: Path) -> None:
    with RunStore(run_dir) as store:
        rows = list(store.iter(stages.CORPUS_FINAL, Consultation))
        store.delete(stages.CORPUS_FINAL)
        store.put_many(stage, ((c.id, c) for c in rows))
    with pytest.raises(UnmaskedDataError, match="no de-identified corpus"):
        build_release(run_dir, tmp_path / "rel", INFO)
    assert not (tmp_path / "rel").exists()


def test_instance_cut_from_unmasked_text_is_refused(run_dir: Path, tmp_path: Path) -> None:
    with RunStore(run_dir) as store:
        instance = next(store.iter(stages.MCCP_INSTANCE, Instance))
        context = [e.model_copy() for e in instance.context]
        context[0] = context[0].model_copy(update={"content": "我叫张三，电话13800000000"})
        store.put(
            stages.MCCP_INSTANCE, instance.id, instance.model_copy(update={"context": context})
        )
    with pytest.raises(UnmaskedDataError, match=instance.id):
        build_release(run_dir, tmp_path / "rel", INFO)


def test_missing_image_root_is_refused(run_dir: Path, tmp_path: Path) -> None:
    with RunStore(run_dir) as store:
        store.set_meta(stages.image_root_key(stages.CORPUS_FINAL), None)
        store.set_meta(stages.image_root_key(stages.RAW), "/somewhere/raw")
    with pytest.raises(UnmaskedDataError, match="image root"):
        build_release(run_dir, tmp_path / "rel", INFO)


def test_never_overwrites_a_folder_that_is_not_a_release(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(ValueError, match="holds no release"):
        build_release(run_dir, out, INFO)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_bad_version_is_refused(run_dir: Path, tmp_path: Path) -> None:
    bad = ReleaseInfo(
        name="medrealmm", version="v1", title="t", authors=("a",), dua="测试用数据使用协议。\n"
    )
    with pytest.raises(ValueError, match=r"X\.Y"):
        build_release(run_dir, tmp_path / "rel", bad)


def test_demo_step_skips_without_masked_corpus_then_releases(
    run_dir: Path, tmp_path: Path, demo_dir: Path
) -> None:
    from medrealmm.release.demo import release_demo

    empty = tmp_path / "empty"
    with RunStore(empty) as store:
        raw = iter_jsonl(demo_dir / CORPUS_FILE, Consultation)
        store.put_many(stages.RAW, ((c.id, c) for c in raw))
        assert (
            release_demo(store, empty) == "release: skipped (no de-identified corpus in this run)"
        )
    with RunStore(run_dir) as store:
        assert release_demo(store, run_dir).startswith("release: refused: give the dataset's own")
        store.set_meta(stages.DEMO_META, True)  # the demo's own run: its bundled DUA
        line = release_demo(store, run_dir)
        assert line.startswith("release 0.1: 6 consultations, 6 instances")
        assert release_demo(store, run_dir) == line  # rerun rebuilds the same release
    assert (run_dir / "release" / "manifest.json").is_file()


def test_release_without_rubrics_leaves_them_out_of_the_card(
    run_dir: Path, tmp_path: Path, dua_file: Path
) -> None:
    with RunStore(run_dir) as store:
        store.delete(stages.RUBRIC_FINAL)
    out = tmp_path / "rel"
    manifest = build_release(run_dir, out, INFO).manifest
    assert manifest["counts"]["rubrics"] == 0
    assert manifest["sources"]["rubric_stage"] is None
    card = (out / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("---\n")[1])
    assert [c["config_name"] for c in front["configs"]] == ["consultations", "instances"]
    assert "Rubric stage: `none`" in card
    record_acceptance(out / "DUA.md", name="x", dataset="medrealmm", release="medrealmm 1.0")
    loaded = load_release(out)
    assert (len(loaded.instances), loaded.rubrics) == (6, [])
