"""Physicians see de-identified stages only; every page and image view is audited; bad form
and query values are a 4xx, never a 500."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from medrealmm.review import audit
from medrealmm.store import RunStore, stages

from .conftest import CASE_ID, login


def test_physicians_never_see_unmasked_stages(client: TestClient) -> None:
    login(client, "doc1")
    assert client.get(f"/consultations/{stages.CORPUS_SAMPLED}/{CASE_ID}").status_code == 403
    assert client.get(f"/images/{stages.CORPUS_SAMPLED}/{CASE_ID}/4/0").status_code == 403
    assert client.get(f"/consultations/{stages.CORPUS_DEID}/{CASE_ID}").status_code == 200


def test_page_and_image_views_are_audited(client: TestClient, store: RunStore) -> None:
    login(client, "rev1")
    client.get(f"/consultations/{stages.CORPUS_DEID}/{CASE_ID}")
    client.get(f"/images/{stages.CORPUS_DEID}/{CASE_ID}/4/0")
    client.get(f"/instances/{CASE_ID}-t4")
    db = store.connection()
    seen = {(e.actor, e.action, e.target) for e in audit.entries(db)}
    assert ("rev1", "view_consultation", f"{stages.CORPUS_DEID}/{CASE_ID}") in seen
    assert ("rev1", "view_image", f"{stages.CORPUS_DEID}/{CASE_ID}/4/0") in seen
    assert ("rev1", "view_instance", f"{CASE_ID}-t4") in seen


@pytest.mark.parametrize(
    "path",
    [
        f"/images/{stages.CORPUS_DEID}/{CASE_ID}/-1/0",
        f"/images/{stages.CORPUS_DEID}/{CASE_ID}/x/0",
        f"/images/{stages.CORPUS_DEID}/{CASE_ID}/4/99999999999999999999",
        f"/consultations/{stages.CORPUS_DEID}/..%2F..%2Fetc",
        "/instances/%00",
        f"/rubric/{CASE_ID}-t4?round=-1",
    ],
)
def test_bad_query_values_are_client_errors(client: TestClient, path: str) -> None:
    login(client, "rev1")
    status = client.get(path).status_code
    assert status < 500
    login(client, "doc1")
    assert client.get(path).status_code < 500


@pytest.mark.parametrize("value", ["-1", "", "abc", "1e9", "99999999999999999999"])
def test_bad_round_in_a_form_is_a_client_error(client: TestClient, value: str) -> None:
    csrf = login(client, "doc1")
    for action in ("feedback", "approve", "refine"):
        response = client.post(
            f"/rubric/{CASE_ID}-t4/{action}",
            data={"round": value, "csrf_token": csrf},
            follow_redirects=False,
        )
        assert response.status_code < 500, (action, value)


def test_host_header_must_be_a_configured_host(client: TestClient) -> None:
    assert client.get("/login").status_code == 200
    rebinding = client.get("/login", headers={"host": "evil.example:8000"})
    assert rebinding.status_code == 400
    for served in ("[::1]:8000", "[::1]", "localhost:8000", "127.0.0.1"):
        assert client.get("/login", headers={"host": served}).status_code == 200, served
    for refused in ("[::2]:8000", "127.0.0.1.evil.example", ""):
        assert client.get("/login", headers={"host": refused}).status_code == 400, refused
