"""The bundled synthetic demo corpus: shape, planted cases, and reproducible generation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medrealmm.demo import TRUTH_FILE
from medrealmm.io import iter_jsonl, resolve_image
from medrealmm.schema import Consultation, Sender
from medrealmm.testing.demo_corpus.generate import BAD_CASES, generate_demo_corpus
from medrealmm.testing.demo_corpus.identities import id_check_char


def _load(path: Path) -> list[Consultation]:
    return list(iter_jsonl(path, Consultation))


def test_bundled_corpus_has_the_promised_shape(demo_corpus: Path, demo_dir: Path) -> None:
    cases = _load(demo_corpus)
    truth = json.loads((demo_dir / TRUTH_FILE).read_text(encoding="utf-8"))
    valid = [c for c in cases if truth[c.id]["expected_drop"] is None]
    assert 38 <= len(cases) <= 45
    assert len({c.department for c in valid}) >= 8
    for c in valid:
        assert 5 <= len(c.events) <= 30
        assert 1 <= len(c.patient_medical_images) <= 4
        assert c.total_chars <= 4000
        assert any("\u4e00" <= ch <= "\u9fff" for ch in c.events[0].content)
    for c in cases:  # every referenced image exists inside the corpus folder
        for event in c.events:
            for ref in event.images:
                assert resolve_image(demo_dir, ref).stat().st_size > 0


def test_every_phase1_filter_has_a_planted_case(demo_corpus: Path, demo_dir: Path) -> None:
    truth = json.loads((demo_dir / TRUTH_FILE).read_text(encoding="utf-8"))
    planted = {t["expected_drop"] for t in truth.values() if t["expected_drop"]}
    assert planted == set(BAD_CASES)
    by_reason = {truth[c.id]["expected_drop"]: c for c in _load(demo_corpus)}
    assert not by_reason["no_patient_image"].patient_medical_images
    assert len(by_reason["too_few_turns"].events) < 5
    assert len(by_reason["too_many_turns"].events) > 30
    assert by_reason["too_long"].total_chars > 4000
    one_sided = by_reason["one_sided"]
    assert sum(e.sender is Sender.PATIENT for e in one_sided.events) > len(one_sided.events) / 2
    assert "退款" in by_reason["refund_close"].events[-2].content


def test_planted_identifiers_are_in_the_text(demo_corpus: Path, demo_dir: Path) -> None:
    truth = json.loads((demo_dir / TRUTH_FILE).read_text(encoding="utf-8"))
    kinds: set[str] = set()
    for c in _load(demo_corpus):
        text = "".join(e.content for e in c.events)
        for kind, values in truth[c.id]["planted_text_pii"].items():
            kinds.add(kind)
            assert all(v in text for v in values)
    assert {"NAME", "PHONE", "ID", "HOSPITAL"} <= kinds


def test_resident_id_check_character() -> None:
    # GB 11643 worked example: 11010519491231002 -> X
    assert id_check_char("11010519491231002") == "X"


@pytest.mark.slow
def test_generation_is_reproducible_and_matches_the_bundled_copy(
    tmp_path: Path, demo_dir: Path
) -> None:
    generate_demo_corpus(tmp_path / "a")
    corpus_a = (tmp_path / "a" / "consultations.jsonl").read_bytes()
    assert corpus_a == (demo_dir / "consultations.jsonl").read_bytes()
    assert (tmp_path / "a" / TRUTH_FILE).read_bytes() == (demo_dir / TRUTH_FILE).read_bytes()
