"""Rubric review in the app: structured feedback stored through medrealmm.rubric, the Refiner
consuming it in the background, approval as empty feedback."""

from __future__ import annotations

import pytest

pytest.importorskip("medrealmm.rubric", reason="medrealmm.rubric lands separately")
from fastapi.testclient import TestClient

from medrealmm.review import audit
from medrealmm.review.rubric_form import FormError, parse_feedback_form
from medrealmm.rubric import FeedbackType, final_rubric, load_feedback, round_history
from medrealmm.store import RunStore, stages

from .conftest import CASE_ID, demo_rubric, login

INSTANCE_ID = f"{CASE_ID}-t4"
URL = f"/rubric/{INSTANCE_ID}"


def test_untouched_form_is_no_feedback() -> None:
    rubric = demo_rubric(INSTANCE_ID)
    form = {f"weight:{c.id}": str(c.weight) for c in rubric.criteria}
    assert parse_feedback_form(rubric, form) == []


def test_form_fields_become_typed_feedback_items() -> None:
    rubric = demo_rubric(INSTANCE_ID)
    form = {
        "weight:c1": "10",
        "comment:c1": "诊断更重要",
        "action:c2": "split",
        "part:c2:1:text": "疗程至少四周",
        "part:c2:1:weight": "5",
        "part:c2:2:text": "保持足部干燥等日常护理",
        "part:c2:2:weight": "3",
        "weight:c3": "-12",  # ignored: c3 is removed
        "action:c3": "remove",
        "new:1:type": "unsafe_omission",
        "new:1:text": "提醒糖尿病患者足部感染风险",
        "new:1:weight": "4",
    }
    items = parse_feedback_form(rubric, form)
    assert [(i.type, i.criterion_id) for i in items] == [
        (FeedbackType.WRONG_WEIGHT, "c1"),
        (FeedbackType.SPLIT_CRITERION, "c2"),
        (FeedbackType.REMOVE_CRITERION, "c3"),
        (FeedbackType.UNSAFE_OMISSION, None),
    ]
    assert items[0].weight == 10 and items[0].comment == "诊断更重要"
    assert [(p.text, p.weight) for p in items[1].parts] == [
        ("疗程至少四周", 5),
        ("保持足部干燥等日常护理", 3),
    ]


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"weight:c1": "ten"}, "weight:c1"),
        ({"weight:c1": "0"}, "weight:c1"),
        ({"weight:c1": "21"}, "weight:c1"),
        (
            {"action:c2": "split", "part:c2:1:text": "只有一部分", "part:c2:1:weight": "5"},
            "part:c2:1:text",
        ),
        ({"action:c2": "split", "part:c2:1:text": "缺权重"}, "part:c2:1:text"),
        ({"action:c2": "explode"}, "action:c2"),
        ({"new:1:text": "新标准"}, "new:1:weight"),
    ],
)
def test_bad_form_fields_are_named(form: dict[str, str], field: str) -> None:
    with pytest.raises(FormError) as caught:
        parse_feedback_form(demo_rubric(INSTANCE_ID), form)
    assert caught.value.field == field


def test_feedback_round_trip_to_approval(client: TestClient, store: RunStore) -> None:
    csrf = login(client, "doc1")
    page = client.get(URL)
    assert page.status_code == 200 and 'data-state="awaiting_review"' in page.text
    assert "线上医生回复" in page.text  # y_orig shown to the rubric reviewer

    response = client.post(
        f"{URL}/feedback",
        data={
            "csrf_token": csrf,
            "round": "0",
            "action:c2": "split",
            "part:c2:1:text": "说明抗真菌治疗疗程至少四周",
            "part:c2:1:weight": "5",
            "part:c2:2:text": "给出保持足部干燥等日常护理建议",
            "part:c2:2:weight": "3",
        },
    )
    assert response.status_code == 200
    feedback = load_feedback(store, INSTANCE_ID, 0)
    assert feedback is not None and feedback.reviewer == "doc1"
    assert [i.type for i in feedback.items] == [FeedbackType.SPLIT_CRITERION]

    # the Refiner (offline baseline here) consumed the feedback: round 1 has 5 + 3 for c2
    rounds = round_history(store, INSTANCE_ID)
    assert [r.round for r in rounds] == [0, 1]
    weights = sorted(c.weight for c in rounds[1].criteria if c.id != "c1" and c.weight > 0)
    assert weights == [3, 5]
    assert all(c.id != "c2" for c in rounds[1].criteria)
    page = client.get(URL)
    assert "第 1 轮" in page.text and 'data-state="awaiting_review"' in page.text

    stale = client.post(f"{URL}/approve", data={"csrf_token": csrf, "round": "0"})
    assert stale.status_code == 400 and final_rubric(store, INSTANCE_ID) is None

    approved = client.post(f"{URL}/approve", data={"csrf_token": csrf, "round": "1"})
    assert approved.status_code == 200 and 'data-state="approved"' in approved.text
    final = final_rubric(store, INSTANCE_ID)
    assert final is not None and final.approved and final.round == 1
    assert load_feedback(store, INSTANCE_ID, 1).approves  # type: ignore[union-attr]
    actions = [e.action for e in audit.entries(store.connection()) if "view_" not in e.action]
    assert actions[:2] == ["rubric_approved", "rubric_feedback"]


def test_unchanged_feedback_form_is_refused_not_approved(
    client: TestClient, store: RunStore
) -> None:
    csrf = login(client, "doc1")
    response = client.post(
        f"{URL}/feedback", data={"csrf_token": csrf, "round": "0", "weight:c1": "8"}
    )
    assert response.status_code == 400 and "批准" in response.text
    assert load_feedback(store, INSTANCE_ID, 0) is None


def test_invalid_feedback_keeps_what_the_physician_typed(client: TestClient) -> None:
    csrf = login(client, "doc1")
    response = client.post(
        f"{URL}/feedback",
        data={"csrf_token": csrf, "round": "0", "weight:c1": "30", "comment:c1": "太低了"},
    )
    assert response.status_code == 400
    assert "weight:c1" in response.text and 'value="太低了"' in response.text


def test_rubric_size_outside_3_to_19_is_a_warning_on_the_page(
    client: TestClient, store: RunStore
) -> None:
    login(client, "doc1")
    assert "data-size-warning" not in client.get(URL).text
    small = demo_rubric(INSTANCE_ID)
    small = small.model_copy(update={"criteria": small.criteria[:2]})
    store.put(stages.RUBRIC_ROUND, f"{INSTANCE_ID}#00", small)
    page = client.get(URL)
    assert page.status_code == 200 and "data-size-warning" in page.text
    assert "2 条标准" in page.text and 'id="feedback"' in page.text  # still reviewable
