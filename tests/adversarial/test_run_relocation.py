"""Issue 46 item 4: a copied run reads its own images, and a release ships only the images
de-identification wrote.

The store recorded absolute image folders, so ``cp -a run copy`` then ``release build copy``
shipped the original folder's (since changed) images with valid checksums, and the review app
and ``eval`` of the copy read them too.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from small_runs import build_release, demo_cases, invoke

from medrealmm.demo import bundled_corpus_dir
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _masked_run(folder: Path) -> Path:
    """Two cases as ``deid run`` leaves them: masked copies under RUN/deid, their sha256 on the
    rows, the image folder recorded absolute (as every run written before this fix has it)."""
    source = bundled_corpus_dir()
    masked = folder / "deid"
    cases = []
    for case in demo_cases(2):
        events = []
        for event in case.events:
            refs = []
            for ref in event.images:
                target = masked / ref.path
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / ref.path, target)
                refs.append(ref.model_copy(update={"sha256": _sha(target)}))
            events.append(event.model_copy(update={"images": refs}))
        cases.append(case.model_copy(update={"events": events}))
    with RunStore(folder) as store:
        store.put_many(stages.CORPUS_DEID, ((c.id, c) for c in cases))
        store.set_meta(stages.image_root_key(stages.CORPUS_DEID), str(masked.resolve()))
    return folder


def _images(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / "deid" / "images").rglob("*") if p.is_file())


def _other_bytes(path: Path) -> bytes:
    others = sorted(p for p in (bundled_corpus_dir() / "images").rglob("*.png") if p.is_file())
    return next(p.read_bytes() for p in others if p.read_bytes() != path.read_bytes())


def _shipped(release: Path) -> set[str]:
    return {_sha(p) for p in (release / "images").rglob("*") if p.is_file()}


def test_a_copied_run_releases_its_own_images(tmp_path: Path) -> None:
    run = _masked_run(tmp_path / "run")
    copy = tmp_path / "copy"
    shutil.copytree(run, copy, symlinks=True)
    kept = {_sha(p) for p in _images(copy)}
    for image in _images(run):  # the original run's images change after the copy
        image.write_bytes(_other_bytes(image))
    code, output = build_release(copy, tmp_path / "rel", "--allow-unreviewed")
    assert code == 0, output
    assert _shipped(tmp_path / "rel") == kept
    with RunStore(copy, create=False) as store:
        assert store.image_root(stages.CORPUS_DEID) == copy / "deid"


def test_a_release_refuses_an_image_changed_since_it_was_masked(tmp_path: Path) -> None:
    run = _masked_run(tmp_path / "run")
    image = _images(run)[0]
    image.write_bytes(_other_bytes(image))
    code, output = build_release(run, tmp_path / "rel", "--allow-unreviewed")
    assert code == 2, output
    assert output.startswith(f"error: {image.resolve()}: not the image de-identification wrote")
    assert "nothing was released" in output
    assert not (tmp_path / "rel").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".building")]


def test_image_folders_inside_the_run_are_recorded_relative(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run) as store:
        store.set_image_root(stages.CORPUS_DEID, run / "deid")
        store.set_image_root(stages.RAW, bundled_corpus_dir())
        assert store.get_meta(stages.image_root_key(stages.CORPUS_DEID)) == "deid"
        assert Path(store.get_meta(stages.image_root_key(stages.RAW))).is_absolute()
    moved = tmp_path / "moved"
    run.rename(moved)
    with RunStore(moved, create=False) as store:
        assert store.image_root(stages.CORPUS_DEID) == moved / "deid"
        assert store.image_root(stages.RAW) == bundled_corpus_dir().resolve()


@pytest.mark.slow
def test_a_copy_of_a_deid_run_masks_evaluates_and_releases_from_itself(tmp_path: Path) -> None:
    """The real chain: corpus, de-identification and MCCP, copied; the copy's every image
    folder is its own, and a release of it ships its images."""
    data = bundled_corpus_dir()
    run = tmp_path / "run"
    build = ("corpus", "build", str(data / "consultations.jsonl"), str(run), "--limit", "2")
    assert invoke(*build, "--workers", "1")[0] == 0
    assert invoke("deid", "run", str(run), "--no-llm")[0] == 0
    assert invoke("mccp", "extract", str(data), str(run), "--limit", "2")[0] == 0
    copy = tmp_path / "copy"
    shutil.copytree(run, copy, symlinks=True)
    for image in _images(run):
        image.write_bytes(_other_bytes(image))
    with RunStore(copy, create=False) as store:
        for stage in (stages.CORPUS_DEID, stages.MCCP_INSTANCE):
            root = store.image_root(stage)
            assert root is not None and root.resolve() == (copy / "deid").resolve(), stage
        case = next(store.iter(stages.CORPUS_DEID, Consultation))
        assert case.patient_medical_images
    code, output = build_release(copy, tmp_path / "rel", "--allow-unreviewed")
    assert code == 0, output
    assert _shipped(tmp_path / "rel") <= {_sha(p) for p in _images(copy)}
