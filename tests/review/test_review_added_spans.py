"""A residual-PII reviewer adds an identifier de-identification missed: it is masked in the
final corpus, in the audit log, and counted in the review status."""

from __future__ import annotations

import shutil
from pathlib import Path

from fastapi.testclient import TestClient
from PIL import Image
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.corpus.review import (
    AddedBox,
    AddedSpan,
    ReviewDecision,
    ReviewVerdict,
    decisions,
    record,
    status,
    tasks,
)
from medrealmm.deid.record import DeidRecord, ImageBox, ImageRecord
from medrealmm.deid.spans import EntityType
from medrealmm.demo import bundled_corpus_dir
from medrealmm.review import audit
from medrealmm.review.suspects import added_span_labels, export_suspect_labels, suspect_labels
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages

from .conftest import CASE_ID, login, seed

PHONE = "18285029457"  # in turn 6 of the seeded (invented) case


def decide_all(client: TestClient, store: RunStore, csrf: str) -> None:
    for task in tasks(store):
        if task.key not in decisions(store) and task.round.value == "primary":
            client.post(f"/deid/{task.key}", data={"csrf_token": csrf, "verdict": "approve"})


def test_added_span_is_masked_in_the_final_corpus_audited_and_counted(
    client: TestClient, store: RunStore
) -> None:
    csrf = login(client, "rev1")
    case = store.get(stages.CORPUS_DEID, CASE_ID, Consultation)
    assert case is not None
    start = case.events[6].content.index(PHONE)
    span = f"6:{start}:{start + len(PHONE)}:PHONE"
    key = f"{CASE_ID}|pii|primary"
    assert 'id="span-add"' in client.get(f"/deid/{key}").text
    done = client.post(
        f"/deid/{key}", data={"csrf_token": csrf, "verdict": "approve", "add_span": span}
    )
    assert done.status_code == 200
    assert [s.type.value for s in decisions(store)[key].added_spans] == ["PHONE"]
    assert status(store).added_spans == 1
    assert "审核员补充遗漏 1 处" in client.get("/deid").text
    entry = audit.entries(store.connection(), action="deid_decision")[0]
    assert entry.detail["spans_added"] == ["PHONE"]
    decide_all(client, store, csrf)
    if store.get(stages.CORPUS_FINAL, CASE_ID, Consultation) is None:  # sampled for audit
        client.cookies.clear()
        other = login(client, "rev2")
        for task in tasks(store):
            if task.key not in decisions(store):
                client.post(f"/deid/{task.key}", data={"csrf_token": other, "verdict": "approve"})
    final = store.get(stages.CORPUS_FINAL, CASE_ID, Consultation)
    assert final is not None
    assert PHONE not in final.events[6].content and "[PHONE]" in final.events[6].content
    assert final.events[0].content == case.events[0].content


def test_an_added_span_outside_the_text_is_refused(client: TestClient, store: RunStore) -> None:
    csrf = login(client, "rev1")
    key = f"{CASE_ID}|pii|primary"
    for bad in ("6:0:99999:PHONE", "6:5:2:PHONE", "6:0:3:NOPE", "junk"):
        refused = client.post(
            f"/deid/{key}", data={"csrf_token": csrf, "verdict": "approve", "add_span": bad}
        )
        assert refused.status_code == 400 and "补充的隐私片段与原文不符" in refused.text
    assert key not in decisions(store)


def test_added_spans_are_exported_as_dev_data(
    client: TestClient, store: RunStore, tmp_path: Path
) -> None:
    csrf = login(client, "rev1")
    case = store.get(stages.CORPUS_DEID, CASE_ID, Consultation)
    assert case is not None
    start = case.events[6].content.index(PHONE)
    client.post(
        f"/deid/{CASE_ID}|pii|primary",
        data={
            "csrf_token": csrf,
            "verdict": "approve",
            "add_span": f"6:{start}:{start + len(PHONE)}:PHONE",
        },
    )
    [row] = added_span_labels(store)
    assert (row.span, row.kind, row.reason, row.identifier) == (PHONE, "missed", "PHONE", True)
    out = tmp_path / "labels.jsonl"
    assert export_suspect_labels(store, out) == len(suspect_labels(store)) + 1


def test_added_box_is_painted_on_a_copy_in_the_final_corpus(
    client: TestClient, store: RunStore, tmp_path: Path
) -> None:
    root = tmp_path / "deid-images"  # the masked images a de-identification run wrote
    shutil.copytree(bundled_corpus_dir() / "images" / CASE_ID, root / "images" / CASE_ID)
    store.set_meta(stages.image_root_key(stages.CORPUS_DEID), str(root))
    csrf = login(client, "rev1")
    key = f"{CASE_ID}|pii|primary"
    assert 'id="box-mode"' in client.get(f"/deid/{key}").text
    for bad in ("4:9:0:0:0.5:0.5", "4:0:0.8:0:0.5:0.5", "4:0:x"):
        refused = client.post(
            f"/deid/{key}", data={"csrf_token": csrf, "verdict": "approve", "add_box": bad}
        )
        assert refused.status_code == 400 and "遮挡框无效" in refused.text
    client.post(
        f"/deid/{key}",
        data={"csrf_token": csrf, "verdict": "approve", "add_box": "4:0:0.25:0.25:0.5:0.5"},
    )
    assert status(store).added_boxes == 1
    assert audit.entries(store.connection(), action="deid_decision")[0].detail["boxes_added"] == 1
    decide_all(client, store, csrf)
    if store.get(stages.CORPUS_FINAL, CASE_ID, Consultation) is None:  # sampled for audit
        client.cookies.clear()
        other = login(client, "rev2")
        for task in tasks(store):
            if task.key not in decisions(store):
                client.post(f"/deid/{task.key}", data={"csrf_token": other, "verdict": "approve"})
    final = store.get(stages.CORPUS_FINAL, CASE_ID, Consultation)
    assert final is not None
    ref = final.events[4].images[0]
    assert ref.path == f"reviewed/{CASE_ID}/4-0.png"
    with (
        Image.open(root / ref.path) as painted,
        Image.open(root / "images" / CASE_ID / "01_skin.jpg") as before,
    ):
        w, h = painted.size
        assert painted.convert("RGB").getpixel((w // 2, h // 2)) == (0, 0, 0)
        assert before.convert("RGB").getpixel((w // 2, h // 2)) != (0, 0, 0)  # original kept
    assert (
        final.events[4].images[1]
        == store.get(stages.CORPUS_DEID, CASE_ID, Consultation).events[4].images[1]
    )  # type: ignore[union-attr]


def test_masked_image_boxes_can_be_outlined(client: TestClient, store: RunStore) -> None:
    path = "images/demo-000/01_skin.jpg"  # event 4 of the demo case
    face = ImageBox(kind="face", box=(30, 40, 130, 140))
    image = ImageRecord(source=path, output=path, width=400, height=300, face_detector="x")
    image = image.model_copy(update={"boxes": [face]})
    store.put(stages.DEID_RECORD, CASE_ID, DeidRecord(consultation_id=CASE_ID, images=[image]))
    login(client, "rev1")
    for task in (f"{CASE_ID}|pii|primary", f"{CASE_ID}|utility|primary"):
        page = client.get(f"/deid/{task}").text
        assert 'id="outline-masked"' in page and 'class="masked-boxes"' in page
        assert 'x="30" y="40" width="100" height="100"><title>face</title>' in page


def test_review_status_prints_what_reviewers_added(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run) as store:
        seed(store)
        key = f"{CASE_ID}|pii|primary"
        case = store.get(stages.CORPUS_DEID, CASE_ID, Consultation)
        assert case is not None
        start = case.events[6].content.index(PHONE)
        span = AddedSpan(event=6, start=start, end=start + len(PHONE), type=EntityType.PHONE)
        box = AddedBox(event=4, image=0, x=0.1, y=0.1, width=0.2, height=0.2)
        decision = ReviewDecision(
            task_key=key,
            reviewer="rev1",
            verdict=ReviewVerdict.APPROVE,
            added_spans=[span],
            added_boxes=[box],
        )
        record(store, decision)
    result = CliRunner().invoke(app, ["corpus", "review", "status", str(run)])
    assert result.exit_code == 0, result.output
    assert "reviewer-added spans 1, image boxes 1" in " ".join(result.output.split())
