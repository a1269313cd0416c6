"""A release loads with Hugging Face `datasets` as the Hub would load it: the card's configs
and splits, and each instance's images as `datasets.Image` features (PIL images)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from medrealmm.release import ReleaseInfo, build_release, load_release, record_acceptance

datasets = pytest.importorskip("datasets")
INFO = ReleaseInfo(
    name="medrealmm",
    version="1.0",
    title="测试集",
    authors=("维护者",),
    dua="测试用数据使用协议。\n",
)


@pytest.fixture()
def offline_hf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-home" / "datasets")


def test_datasets_loads_configs_splits_and_images(
    run_dir: Path, tmp_path: Path, offline_hf: None, dua_file: Path
) -> None:
    out = tmp_path / "rel"
    build_release(run_dir, out, INFO)
    card = (out / "README.md").read_text(encoding="utf-8").split("---")[1]
    configs = {c["config_name"]: c for c in yaml.safe_load(card)["configs"]}
    assert set(configs) == {"consultations", "instances", "rubrics"}
    assert all(c["data_files"][0]["split"] == "test" for c in configs.values())
    assert configs["instances"].get("default") is True

    cache = str(tmp_path / "hf-cache")
    instances = datasets.load_dataset(str(out), "instances", split="test", cache_dir=cache)
    feature = instances.features["images"]
    assert isinstance(getattr(feature, "feature", None), datasets.Image)
    record_acceptance(out / "DUA.md", name="李研究员", dataset="medrealmm", release="medrealmm 1.0")
    release = load_release(out)  # medrealmm's loader skips the column
    by_id = {i.id: i for i in release.instances}
    shown = 0
    for row in instances:
        want = [r.path for e in by_id[row["id"]].context for r in e.images]
        assert len(row["images"]) == len(want)
        for image in row["images"]:
            assert image.size[0] > 0  # a decoded PIL image
            shown += 1
    assert shown > 0

    plain = datasets.load_dataset(
        "parquet", data_files={"test": str(out / "data" / "instances.parquet")}, cache_dir=cache
    )["test"]
    assert isinstance(plain.features["images"].feature, datasets.Image)
    for name in ("consultations", "rubrics"):
        assert datasets.load_dataset(str(out), name, split="test", cache_dir=cache).num_rows > 0
