from __future__ import annotations

from urllib.parse import quote

from fastapi.testclient import TestClient

from medrealmm.review import audit, panel
from medrealmm.review.highlight import highlight_html, segments
from medrealmm.schema import Verdict
from medrealmm.store import RunStore, stages

from .conftest import CASE_ID, RESPONSE_KEY, login


def test_segments_keep_the_text_and_mark_placeholders() -> None:
    text = "我叫[NAME]，电话[PHONE]，住在[地址]。[not one]"
    parts = segments(text)
    assert "".join(piece for piece, _ in parts) == text
    assert [piece for piece, masked in parts if masked] == ["[NAME]", "[PHONE]", "[地址]"]


def test_highlight_escapes_patient_text() -> None:
    html = str(highlight_html("<script>x</script>[NAME]"))
    assert "<script>" not in html
    assert '<mark class="masked">[NAME]</mark>' in html


def test_consultation_view_shows_turns_masks_and_images(
    client: TestClient, store: RunStore
) -> None:
    login(client, "rev1")
    events = store.get_raw(stages.CORPUS_DEID, CASE_ID)["events"]  # type: ignore[index]
    page = client.get(f"/consultations/{stages.CORPUS_DEID}/{CASE_ID}")
    assert page.status_code == 200
    assert '<mark class="masked">[NAME]</mark>' in page.text
    assert "朱秀英" not in page.text
    assert page.text.count('<article class="turn') == len(events)
    image = client.get(f"/images/{stages.CORPUS_DEID}/{CASE_ID}/4/0")
    assert image.status_code == 200 and image.headers["content-type"] == "image/jpeg"
    assert client.get(f"/images/{stages.CORPUS_DEID}/{CASE_ID}/0/0").status_code == 404
    assert client.get(f"/images/{stages.RAW}/{CASE_ID}/4/0").status_code == 404
    assert client.get(f"/consultations/{stages.RAW}/{CASE_ID}").status_code == 404


def test_instance_view_never_shows_the_target_reply(client: TestClient, store: RunStore) -> None:
    login(client, "doc1")
    page = client.get(f"/instances/{CASE_ID}-t4")
    assert page.status_code == 200
    assert page.text.count('<article class="turn') == 5
    target = store.get_raw(stages.MCCP_INSTANCE, f"{CASE_ID}-t4")["target_reply"]  # type: ignore[index]
    assert target[:20] not in page.text


def test_panel_grading_stores_verdicts_per_reviewer(client: TestClient, store: RunStore) -> None:
    csrf = login(client, "doc1")
    queue = client.get("/panel")
    assert "0 / 3" in queue.text
    form = client.get(f"/panel/{quote(RESPONSE_KEY)}")
    assert form.status_code == 200 and "考虑足癣" in form.text and "未经医生批准" in form.text
    response = client.post(
        f"/panel/{quote(RESPONSE_KEY)}",
        data={
            "csrf_token": csrf,
            "verdict:c1": "yes",
            "rationale:c1": "提到足癣",
            "verdict:c3": "no",
        },
    )
    assert response.status_code == 200 and "已保存" in response.text
    stored = store.get(stages.PANEL_VERDICT, f"doc1|{RESPONSE_KEY}|c1", Verdict)
    assert stored is not None and stored.value is True and stored.rationale == "提到足癣"
    assert stored.grader == "doc1"
    assert store.get(stages.PANEL_VERDICT, f"doc1|{RESPONSE_KEY}|c3", Verdict).value is False  # type: ignore[union-attr]
    assert store.get(stages.PANEL_VERDICT, f"doc1|{RESPONSE_KEY}|c2", Verdict) is None
    assert "2 / 3" in client.get("/panel").text
    assert panel.queue(store, "doc2")[0].graded == 0
    entry = audit.entries(store.connection(), action="panel_verdicts")[0]
    assert entry.actor == "doc1" and entry.detail == {"criteria": {"c1": True, "c3": False}}
    bad = client.post(
        f"/panel/{quote(RESPONSE_KEY)}", data={"csrf_token": csrf, "verdict:c2": "maybe"}
    )
    assert bad.status_code == 400
