"""Near-misses in the residual-PII pass: highlighted from the de-identification record,
ticked by the reviewer, stored with the decision and exported as labelled dev data."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from medrealmm.corpus.review import SuspectMark, decisions
from medrealmm.deid.record import DeidRecord, ImageBox, ImageRecord, Suspect, TurnRecord
from medrealmm.deid.term_vetoes import VETOES
from medrealmm.review.highlight import VETO_LABELS, highlight_with_suspects
from medrealmm.review.suspects import export_suspect_labels, parse_marks, suspect_labels
from medrealmm.store import RunStore, stages

from .conftest import CASE_ID, login

PII = f"{CASE_ID}|pii|primary"
UTILITY = f"{CASE_ID}|utility|primary"
# Masked turn 2 of the demo case: 有点渗液，味道比较重，去年夏天也这样过，我老公也有脚气。
NEAR = Suspect(start=0, end=2, kind="vetoed", source="lac_ner:PER", reason="model")  # 有点
SAFE = Suspect(start=5, end=7, kind="frame", source="person_cue", reason="person_frame")  # 味道
# 脚气, dropped by a veto class: the page and the export name the class.
TERM = Suspect(
    start=25, end=27, kind="vetoed", source="name_jieba_nr:NAME", reason="used_like_a_medicine"
)


def with_record(store: RunStore) -> None:
    record = DeidRecord(
        consultation_id=CASE_ID, turns=[TurnRecord(event=2, suspects=[NEAR, SAFE, TERM])]
    )
    store.put(stages.DEID_RECORD, CASE_ID, record)


def decide(client: TestClient, csrf: str, key: str, marks: list[str]) -> int:
    data = {"csrf_token": csrf, "verdict": "approve", "note": "", "mask_suspect": marks}
    return client.post(f"/deid/{key}", data=data, follow_redirects=False).status_code


def test_the_pii_pass_highlights_near_misses_and_records_the_ticked_ones(
    store: RunStore, client: TestClient, tmp_path: Path
) -> None:
    with_record(store)
    csrf = login(client, "rev1")
    page = client.get(f"/deid/{PII}").text
    assert '<mark class="suspect" title="模型半信的人名或机构 (model)">有点</mark>' in page
    assert 'title="人物语境中的生词 (person_frame)">味道</mark>' in page  # its evidence
    assert 'value="2:0:2"' in page and 'value="2:5:7"' in page
    # a veto class's drop is highlighted with its class, in the text and beside its tick box
    term = "已否决：用法像药品 (used_like_a_medicine)"
    assert f'<mark class="suspect" title="{term}">脚气</mark>' in page
    assert f"「脚气」 · {term}</label>" in page
    assert 'class="suspect"' not in client.get(f"/deid/{UTILITY}").text  # PII pass only

    assert decide(client, csrf, PII, ["2:9:11"]) == 400  # not offered on the page
    assert PII not in decisions(store)
    assert decide(client, csrf, PII, ["2:0:2"]) == 303
    assert decisions(store)[PII].masked_suspects == [SuspectMark(event=2, start=0, end=2)]

    labels = {(row.span, row.reason, row.identifier) for row in suspect_labels(store)}
    assert labels == {
        ("有点", "model", True),
        ("味道", "person_frame", False),  # each row carries its evidence
        ("脚气", "used_like_a_medicine", False),
    }
    out = tmp_path / "suspects.jsonl"
    assert export_suspect_labels(store, out) == 3
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["reviewer"] for r in rows} == {"rev1"}
    assert all(r["text"][r["start"] : r["end"]] == r["span"] for r in rows)
    assert {r["span"]: r["reason"] for r in rows}["脚气"] == "used_like_a_medicine"


def test_a_case_without_a_record_shows_no_highlights(store: RunStore, client: TestClient) -> None:
    login(client, "rev1")
    page = client.get(f"/deid/{PII}").text
    assert 'class="suspect"' not in page and "mask_suspect" not in page
    assert suspect_labels(store) == []


def test_suspects_never_nest_in_placeholders_and_stale_ones_are_skipped() -> None:
    html = str(
        highlight_with_suspects(
            "[NAME]说张三<b>来了",
            [
                Suspect(start=7, end=9, kind="proper_noun", source="jieba:nr"),
                Suspect(start=40, end=42, kind="vetoed", source="lac_ner:PER"),
            ],
        )
    )
    assert html.startswith('<mark class="masked">[NAME]</mark>说')
    assert '<mark class="suspect" title="未遮盖的专有名词">张三</mark>&lt;b&gt;' in html


def test_marks_are_parsed_only_from_what_was_shown() -> None:
    shown = {2: [NEAR]}
    assert parse_marks(["2:0:2"], shown) == [SuspectMark(event=2, start=0, end=2)]
    for bad in (["2:0:3"], ["x"], ["1:0:2"]):
        try:
            parse_marks(bad, shown)
        except ValueError:
            continue
        raise AssertionError(bad)


def test_the_cli_exports_judged_highlights(store: RunStore, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from medrealmm.cli import app
    from medrealmm.corpus.review import ReviewDecision, ReviewVerdict, record

    with_record(store)
    marked = SuspectMark(event=2, start=5, end=7)
    decision = ReviewDecision(
        task_key=PII, reviewer="rev2", verdict=ReviewVerdict.APPROVE, masked_suspects=[marked]
    )
    record(store, decision)
    out = tmp_path / "labels.jsonl"
    result = CliRunner().invoke(
        app, ["review", "export-suspects", "--store", str(store.path), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "3 judged highlights" in result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {(r["span"], r["reason"], r["identifier"]) for r in rows} == {
        ("有点", "model", False),
        ("味道", "person_frame", True),
        ("脚气", "used_like_a_medicine", False),
    }


def test_every_veto_class_has_a_name_on_the_page() -> None:
    assert {name for name, _ in VETOES} | {"medicine"} == set(VETO_LABELS)


def test_ocr_text_left_on_an_image_is_outlined_with_why_on_the_pii_pass_only(
    store: RunStore, client: TestClient
) -> None:
    path = "images/demo-000/01_skin.jpg"  # event 4 of the demo case
    near = ImageBox(kind="near_miss", box=(10, 20, 110, 60), label="brand_before_model")
    image = ImageRecord(
        source=path, output=path, width=400, height=300, face_detector="x", near_misses=[near]
    )
    store.put(stages.DEID_RECORD, CASE_ID, DeidRecord(consultation_id=CASE_ID, images=[image]))
    login(client, "rev1")
    page = client.get(f"/deid/{PII}").text
    assert 'viewBox="0 0 400 300"' in page
    title = "已否决：品牌+型号 (brand_before_model)"
    assert f'x="10" y="20" width="100" height="40"><title>{title}</title>' in page
    assert "near-misses" not in client.get(f"/deid/{UTILITY}").text


def test_the_pii_pass_counts_its_suspects_beside_their_reasons(
    store: RunStore, client: TestClient
) -> None:
    path = "images/demo-000/01_skin.jpg"
    near = ImageBox(kind="near_miss", box=(10, 20, 110, 60), label="brand_before_model")
    image = ImageRecord(
        source=path, output=path, width=400, height=300, face_detector="x", near_misses=[near]
    )
    record = DeidRecord(
        consultation_id=CASE_ID,
        turns=[TurnRecord(event=2, suspects=[NEAR, SAFE, TERM])],
        images=[image],
    )
    store.put(stages.DEID_RECORD, CASE_ID, record)
    login(client, "rev1")
    page = client.get(f"/deid/{PII}").text
    assert 'data-suspects="4"><strong>4 处疑似未遮盖</strong>（文字 3 处' in page
    assert "图片 1 处" in page
    assert "红色虚线高亮，3 处疑似未遮盖，理由见每项" in page  # the text ones' legend
    assert "「脚气」 · 已否决：用法像药品 (used_like_a_medicine)</label>" in page
    assert "疑似未遮盖" not in client.get(f"/deid/{UTILITY}").text  # PII pass only
    store.delete(stages.DEID_RECORD, CASE_ID)
    assert "疑似未遮盖" not in client.get(f"/deid/{PII}").text  # nothing to count
