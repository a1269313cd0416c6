"""De-id verification through medrealmm.corpus.review and MCCP validation through
medrealmm.mccp.validation, driven from the app."""

from __future__ import annotations

from fastapi.testclient import TestClient

from medrealmm.corpus.review import decisions, status
from medrealmm.mccp.validation import summarize_validation, validation_sample
from medrealmm.review import audit
from medrealmm.review.deid_queue import queue_for
from medrealmm.store import RunStore, stages

from .conftest import CASE_ID, login

PII = f"{CASE_ID}|pii|primary"
UTILITY = f"{CASE_ID}|utility|primary"
INSTANCE_ID = f"{CASE_ID}-t4"


def decide(client: TestClient, csrf: str, key: str, verdict: str, note: str = "") -> int:
    data = {"csrf_token": csrf, "verdict": verdict, "note": note}
    return client.post(f"/deid/{key}", data=data, follow_redirects=False).status_code


def test_two_passes_then_an_audit_by_a_second_annotator(
    store: RunStore, client: TestClient
) -> None:
    csrf = login(client, "rev1")
    queue = client.get("/deid").text
    assert PII in queue and UTILITY in queue
    task = client.get(f"/deid/{PII}")
    assert task.status_code == 200 and '<mark class="masked">[NAME]</mark>' in task.text
    assert "残留隐私" in task.text and "对照脱敏前原文" not in task.text
    utility = client.get(f"/deid/{UTILITY}").text
    assert f"/consultations/{stages.CORPUS_SAMPLED}/{CASE_ID}" in utility
    original = client.get(f"/consultations/{stages.CORPUS_SAMPLED}/{CASE_ID}")
    assert original.status_code == 200 and "朱秀英" in original.text

    assert decide(client, csrf, PII, "reject") == 400  # a rejection needs its reason
    assert decide(client, csrf, PII, "approve") == 303
    assert decide(client, csrf, UTILITY, "approve") == 303
    # all primary tasks decided: the audit is planned (1 approved case -> ceil(10%) = 1)
    assert status(store).audit_planned == 1
    audit_keys = {f"{CASE_ID}|pii|audit", f"{CASE_ID}|utility|audit"}
    assert not {r.task.key for r in queue_for(store, "rev1")} & audit_keys
    assert {r.task.key for r in queue_for(store, "rev2")} == audit_keys
    own = client.get(f"/deid/{CASE_ID}|pii|audit")
    assert "另一位审核员" in own.text and 'name="verdict"' not in own.text
    assert decide(client, csrf, f"{CASE_ID}|pii|audit", "approve") == 400
    assert store.count(stages.CORPUS_FINAL) == 0

    other = TestClient(client.app, base_url="http://127.0.0.1")
    csrf2 = login(other, "rev2")
    for key in sorted(audit_keys):
        assert decide(other, csrf2, key, "approve") == 303
    assert decisions(store)[f"{CASE_ID}|pii|audit"].reviewer == "rev2"
    assert store.keys(stages.CORPUS_FINAL) == {CASE_ID}
    entries = audit.entries(store.connection(), action="deid_decision")
    assert [(e.actor, e.target) for e in entries][-1] == ("rev1", PII)
    assert entries[0].detail == {"pass": "utility", "round": "audit", "verdict": "approve"}


def test_mccp_validation_sample_and_decision(store: RunStore, client: TestClient) -> None:
    csrf = login(client, "doc1")
    assert "抽样" in client.get("/mccp").text
    drawn = client.post("/mccp", data={"csrf_token": csrf, "n": "200", "seed": "3"})
    assert drawn.status_code == 200 and validation_sample(store) == [INSTANCE_ID]
    again = client.post("/mccp", data={"csrf_token": csrf, "n": "5"}, follow_redirects=False)
    assert again.status_code == 409

    page = client.get(f"/mccp/{INSTANCE_ID}")
    assert page.status_code == 200 and "下一轮医生回复" in page.text
    bad = client.post(f"/mccp/{INSTANCE_ID}", data={"csrf_token": csrf, "decision": "maybe"})
    assert bad.status_code == 400
    done = client.post(
        f"/mccp/{INSTANCE_ID}",
        data={"csrf_token": csrf, "decision": "reject", "note": "图片非必要"},
    )
    assert done.status_code == 200
    summary = summarize_validation(store)
    assert (summary.decided, summary.accepted, summary.undecided) == (1, 0, 0)
    assert summary.by_reviewer == {"doc1": (0, 1)}
    assert "0/1" in client.get("/mccp").text
    entry = audit.entries(store.connection(), action="mccp_validation")[0]
    assert (entry.actor, entry.target, entry.detail) == (
        "doc1",
        INSTANCE_ID,
        {"decision": "reject"},
    )


def test_mccp_sample_defaults_to_every_instance_when_fewer_than_200(
    store: RunStore, client: TestClient
) -> None:
    csrf = login(client, "doc1")
    form = client.get("/mccp").text
    assert 'name="n" min="1" value="1"' in form  # the seeded run holds one instance
    client.post("/mccp", data={"csrf_token": csrf, "seed": "0"})  # n left empty
    assert validation_sample(store) == [INSTANCE_ID]
    assert store.get_meta(stages.MCCP_SAMPLE_META)["n"] == 1  # type: ignore[index]


def test_status_lines_and_refusals_are_chinese(store: RunStore, client: TestClient) -> None:
    csrf = login(client, "doc1")
    client.post("/mccp", data={"csrf_token": csrf, "n": "1"})
    page = client.get("/mccp").text
    assert "接受率：0/0 例" in page and "acceptance" not in page
    again = client.post("/mccp", data={"csrf_token": csrf, "n": "1"})
    assert again.status_code == 409 and "验证样本已抽取" in again.text
    assert "您的角色无权使用此页面" in client.get("/deid").text
