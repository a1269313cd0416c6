from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from medrealmm.release import (
    DUANotAccepted,
    ReleaseInfo,
    ReleaseIntegrityError,
    build_release,
    load_release,
    record_acceptance,
    verify_release,
)
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages

INFO = ReleaseInfo(
    name="medrealmm", version="2.0", title="t", authors=("a",), dua="测试用数据使用协议。\n"
)


@pytest.fixture()
def release(run_dir: Path, tmp_path: Path, dua_file: Path) -> Path:
    out = tmp_path / "rel"
    build_release(run_dir, out, INFO)
    return out


def test_loader_refuses_without_dua_acceptance(release: Path, dua_file: Path) -> None:
    with pytest.raises(DUANotAccepted, match="accept-dua"):
        load_release(release)
    assert not dua_file.exists()


def test_loader_gives_schema_models_after_acceptance(
    release: Path, run_dir: Path, dua_file: Path
) -> None:
    record_acceptance(
        release / "DUA.md", name="李研究员", dataset="medrealmm", release="medrealmm 2.0"
    )
    loaded = load_release(release)
    assert loaded.version == "2.0"
    assert loaded.acceptance.name == "李研究员"
    with RunStore(run_dir) as store:
        source = {c.id: c for c in store.iter(stages.CORPUS_FINAL, Consultation)}
    assert {c.id for c in loaded.consultations} == set(source)
    for case in loaded.consultations:
        original = source[case.id]
        assert [e.content for e in case.events] == [e.content for e in original.events]
        for ref in case.patient_medical_images:
            data = loaded.image_path(ref).read_bytes()
            assert hashlib.sha256(data).hexdigest() == ref.sha256
    assert all(i.context[-1].sender.value == "patient" for i in loaded.instances)
    assert {r.instance_id for r in loaded.rubrics} == {i.id for i in loaded.instances}
    stored = json.loads(dua_file.read_text(encoding="utf-8"))
    assert stored[0]["dua_sha256"] == hashlib.sha256((release / "DUA.md").read_bytes()).hexdigest()


def test_acceptance_is_per_dua_text(release: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-DUA.md"
    other.write_text("另一份协议", encoding="utf-8")
    record_acceptance(other, name="x", dataset="other", release="other 1.0")
    with pytest.raises(DUANotAccepted):
        load_release(release)


def test_edited_dua_is_refused_even_if_accepted(release: Path) -> None:
    dua = release / "DUA.md"
    dua.write_text(dua.read_text(encoding="utf-8") + "\n允许任何用途。\n", encoding="utf-8")
    record_acceptance(dua, name="x", dataset="medrealmm", release="medrealmm 2.0")
    with pytest.raises(ReleaseIntegrityError, match="DUA"):
        load_release(release)


def test_tampered_or_added_files_fail_verification(release: Path) -> None:
    record_acceptance(release / "DUA.md", name="x", dataset="medrealmm", release="medrealmm 2.0")
    assert verify_release(release)["version"] == "2.0"
    image = next((release / "images").rglob("*.*"))
    image.write_bytes(image.read_bytes() + b"\0")
    (release / "extra.txt").write_text("x", encoding="utf-8")
    with pytest.raises(ReleaseIntegrityError) as caught:
        load_release(release)
    message = str(caught.value)
    assert "changed: images/" in message
    assert "not part of the release: extra.txt" in message
    assert load_release(release, verify=False).version == "2.0"


def test_not_a_release_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"manifest\.json"):
        load_release(tmp_path)
