from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from medrealmm.review import audit
from medrealmm.review.accounts import (
    AccountError,
    Role,
    authenticate,
    create_user,
    get_user,
)
from medrealmm.review.guards import LOGIN_COOKIE, SESSION_COOKIE
from medrealmm.store import RunStore

from .conftest import PASSWORD, csrf_of, login


def test_passwords_are_stored_as_argon2_hashes_only(store: RunStore) -> None:
    rows = store.connection().execute("SELECT password_hash FROM review_users").fetchall()
    assert rows and all(h.startswith("$argon2id$") for (h,) in rows)
    assert all(PASSWORD not in h for (h,) in rows)
    assert authenticate(store.connection(), "doc1", PASSWORD) is not None
    assert authenticate(store.connection(), "doc1", PASSWORD + "x") is None
    assert authenticate(store.connection(), "nobody", PASSWORD) is None


def test_account_rules(store: RunStore) -> None:
    db = store.connection()
    with pytest.raises(AccountError, match="already exists"):
        create_user(db, "doc1", PASSWORD, frozenset({Role.PHYSICIAN}))
    with pytest.raises(AccountError, match="at least 8"):
        create_user(db, "short", "1234567", frozenset({Role.PHYSICIAN}))
    with pytest.raises(AccountError, match="username"):
        create_user(db, "bad name!", PASSWORD, frozenset({Role.PHYSICIAN}))
    create_user(db, "doc1", "a new password", frozenset({Role.REVIEWER}), replace=True)
    user = get_user(db, "doc1")
    assert user is not None and user.roles == {Role.REVIEWER}


def test_login_sets_httponly_samesite_cookie_and_logout_ends_the_session(
    client: TestClient, store: RunStore
) -> None:
    page = client.get("/login")
    login_cookie = page.headers["set-cookie"]
    assert LOGIN_COOKIE in login_cookie and "HttpOnly" in login_cookie
    response = client.post(
        "/login",
        data={"username": "doc1", "password": PASSWORD, "csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert response.status_code == 303
    session_cookie = next(
        v for v in response.headers.get_list("set-cookie") if v.startswith(SESSION_COOKIE)
    )
    assert "HttpOnly" in session_cookie and "SameSite=lax" in session_cookie
    stolen = client.cookies.get(SESSION_COOKIE)
    home = client.get("/")
    assert home.status_code == 200 and "doc1" in home.text

    assert client.post("/logout", data={"csrf_token": csrf_of(home.text)}).status_code == 200
    # the copied cookie no longer opens a session
    replay = TestClient(client.app, base_url="http://127.0.0.1", cookies={SESSION_COOKIE: stolen})
    assert replay.get("/", follow_redirects=False).status_code == 303
    actions = [e.action for e in audit.entries(store.connection())]
    assert actions[:2] == ["logout", "login"]


def test_wrong_password_is_refused_and_audited(client: TestClient, store: RunStore) -> None:
    page = client.get("/login")
    response = client.post(
        "/login",
        data={"username": "doc1", "password": "wrong-password", "csrf_token": csrf_of(page.text)},
    )
    assert response.status_code == 401
    assert SESSION_COOKIE not in client.cookies
    assert audit.entries(store.connection())[0].action == "login_failed"
    assert "wrong-password" not in str(audit.entries(store.connection())[0])


def test_login_form_without_its_csrf_token_is_refused(client: TestClient) -> None:
    client.get("/login")
    response = client.post("/login", data={"username": "doc1", "password": PASSWORD})
    assert response.status_code == 403
    assert SESSION_COOKIE not in client.cookies


def test_forged_or_tampered_session_cookie_is_anonymous(client: TestClient) -> None:
    login(client, "doc1")
    cookie = client.cookies.get(SESSION_COOKIE)
    assert cookie
    tampered = ("A" if cookie[0] != "A" else "B") + cookie[1:]
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, tampered)
    assert client.get("/", follow_redirects=False).status_code == 303
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, cookie)
    assert client.get("/", follow_redirects=False).status_code == 200


def test_login_redirects_back_but_never_off_site(client: TestClient) -> None:
    assert (
        client.get("/panel", follow_redirects=False)
        .headers["location"]
        .endswith("/login?next=%2Fpanel")
    )
    page = client.get("/login?next=//evil.example/x")
    assert 'value="/"' in page.text
    response = client.post(
        "/login",
        data={
            "username": "doc1",
            "password": PASSWORD,
            "csrf_token": csrf_of(page.text),
            "next": "https://evil.example/",
        },
        follow_redirects=False,
    )
    assert response.headers["location"] == "/"


def test_pages_forbid_caching_and_framing(client: TestClient) -> None:
    login(client, "doc1")
    response = client.get("/")
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


def test_admin_adds_a_user_who_can_then_log_in(client: TestClient, store: RunStore) -> None:
    csrf = login(client, "admin1")
    response = client.post(
        "/admin/users",
        data={
            "username": "doc9",
            "password": "a long password",
            "roles": ["physician"],
            "csrf_token": csrf,
        },
    )
    assert response.status_code == 200 and "doc9" in response.text
    bad = client.post(
        "/admin/users",
        data={"username": "doc10", "password": "short", "roles": ["physician"], "csrf_token": csrf},
    )
    assert bad.status_code == 400 and "at least 8" in bad.text
    entry = audit.entries(store.connection(), action="user_added")[0]
    assert (entry.actor, entry.target, entry.detail) == ("admin1", "doc9", {"roles": ["physician"]})
    fresh = TestClient(client.app, base_url="http://127.0.0.1")
    login(fresh, "doc9", "a long password")
    assert fresh.get("/panel").status_code == 200


def test_repeated_failures_lock_the_account_for_a_while(
    client: TestClient, store: RunStore
) -> None:
    def attempt(password: str) -> int:
        page = client.get("/login")
        data = {"username": "doc2", "password": password, "csrf_token": csrf_of(page.text)}
        return client.post("/login", data=data, follow_redirects=False).status_code

    assert [attempt("wrong-password") for _ in range(5)] == [401] * 5
    assert attempt(PASSWORD) == 429  # locked even with the right password
    assert audit.entries(store.connection())[0].action == "login_locked"
    login(client, "doc1")  # other accounts are unaffected


def test_a_stranger_cannot_lock_someone_elses_account(client: TestClient) -> None:
    stranger = TestClient(client.app, base_url="http://127.0.0.1", client=("203.0.113.9", 5000))
    codes = []
    for _ in range(6):
        page = stranger.get("/login")
        data = {"username": "doc2", "password": "guess", "csrf_token": csrf_of(page.text)}
        codes.append(stranger.post("/login", data=data, follow_redirects=False).status_code)
    assert codes == [401] * 5 + [429]
    login(client, "doc2")  # the owner, from their own client, still gets in


def test_one_client_guessing_across_accounts_is_throttled(client: TestClient) -> None:
    def attempt(username: str) -> int:
        page = client.get("/login")
        data = {"username": username, "password": "guess", "csrf_token": csrf_of(page.text)}
        return client.post("/login", data=data, follow_redirects=False).status_code

    codes = [attempt(f"user{n}") for n in range(21)]
    assert codes[:20] == [401] * 20 and codes[20] == 429
