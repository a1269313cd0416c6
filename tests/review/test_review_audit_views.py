"""Every route that shows a case's text (or its images) writes a view row to the audit log.

The routes are walked from the routers the app mounts, so a new page showing a case is
checked without anyone remembering to add it here.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from medrealmm.review import Role, audit, create_app
from medrealmm.store import RunStore

from .conftest import login
from .test_review_access import EXPECTED, USER_OF, declared_routes

CASE_TEXT = "脚趾缝又痒又脱皮"  # the first patient turn of the seeded case


def view_rows(store: RunStore) -> int:
    return sum(e.action.startswith("view_") for e in audit.entries(store.connection(), limit=10**6))


def test_every_route_showing_case_text_logs_a_view(store: RunStore) -> None:
    app = create_app(store)
    clients: dict[Role, TestClient] = {}
    showing: list[str] = []
    try:
        for role, username in USER_OF.items():
            clients[role] = TestClient(app, base_url="http://127.0.0.1").__enter__()
            login(clients[role], username)
        for path in sorted(p for m, p in declared_routes() if m == "GET" and p != "/login"):
            allowed, url, _ = EXPECTED[("GET", path)]
            for role in sorted(allowed):
                before = view_rows(store)
                response = clients[role].get(url)
                assert response.status_code == 200, (path, role, response.status_code)
                shows_case = CASE_TEXT in response.text or path.startswith("/images/")
                if shows_case:
                    showing.append(path)
                    entries = audit.entries(store.connection(), limit=1)
                    assert view_rows(store) == before + 1, f"GET {path} as {role} logged no view"
                    assert entries[0].actor == USER_OF[role]
                else:
                    assert view_rows(store) == before, f"GET {path} logged a view of nothing"
    finally:
        for client in clients.values():
            client.__exit__(None, None, None)
    # the walk found the pages known to show a whole consultation (so the marker works)
    assert {
        "/consultations/{stage}/{key}",
        "/instances/{instance_id}",
        "/deid/{key}",
        "/mccp/{instance_id}",
        "/rubric/{instance_id}",
        "/panel/{response_key:path}",
        "/images/{stage}/{key}/{event}/{image}",
    } <= set(showing)
