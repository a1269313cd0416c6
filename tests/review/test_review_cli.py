from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.llm.egress import is_loopback
from medrealmm.review import Role, audit
from medrealmm.review.accounts import authenticate
from medrealmm.store import RunStore

runner = CliRunner()


def test_add_user_reads_the_password_from_stdin(tmp_path: Path) -> None:
    RunStore(tmp_path).close()  # accounts live in an existing run's store
    args = ["review", "add-user", "doc7", "--store", str(tmp_path), "--role", "physician"]
    result = runner.invoke(
        app, [*args, "--role", "reviewer", "--password-stdin"], input="s3cret-pass\n"
    )
    assert result.exit_code == 0, result.output
    with RunStore(tmp_path) as store:
        user = authenticate(store.connection(), "doc7", "s3cret-pass")
        assert user is not None and user.roles == {Role.PHYSICIAN, Role.REVIEWER}
        assert audit.entries(store.connection())[0].action == "user_added"
    again = runner.invoke(app, [*args, "--password-stdin"], input="s3cret-pass\n")
    assert again.exit_code == 2 and "already exists" in again.output


def test_add_user_rejects_unknown_roles_and_short_passwords(tmp_path: Path) -> None:
    RunStore(tmp_path).close()
    base = ["review", "add-user", "x1", "--store", str(tmp_path), "--password-stdin"]
    bad_role = runner.invoke(app, [*base, "--role", "nurse"], input="long-enough\n")
    assert bad_role.exit_code == 2 and "unknown role" in bad_role.output
    short = runner.invoke(app, [*base, "--role", "admin"], input="short\n")
    assert short.exit_code == 2 and "at least 8" in short.output


def test_add_user_to_a_mistyped_run_folder_creates_nothing(tmp_path: Path) -> None:
    args = ["review", "add-user", "doc7", "--store", str(tmp_path / "typo"), "--role", "admin"]
    result = runner.invoke(app, [*args, "--password-stdin"], input="s3cret-pass\n")
    assert result.exit_code == 2 and "no run store" in result.output
    assert not (tmp_path / "typo").exists()


def test_serve_help_and_missing_store(tmp_path: Path) -> None:
    result = runner.invoke(app, ["review", "serve", "--help"])
    assert result.exit_code == 0 and "--store" in result.output and "127.0.0.1" in result.output
    missing = runner.invoke(app, ["review", "serve", "--store", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no run store" in missing.output


def test_loopback_detection() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
