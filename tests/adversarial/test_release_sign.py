"""A release's manifest is signed with the builder's Ed25519 key: re-hashing a tampered release
makes its checksums agree again, but not its signature against the builder's public key."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.demo import CORPUS_FILE
from medrealmm.io import iter_jsonl
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture()
def release(demo_dir: Path, tmp_path: Path) -> Path:
    cases = [c for c in iter_jsonl(demo_dir / CORPUS_FILE, Consultation)][:3]
    with RunStore(tmp_path / "run") as store:
        store.put_many(stages.CORPUS_FINAL, ((c.id, c) for c in cases))
        store.set_meta(stages.image_root_key(stages.CORPUS_FINAL), str(demo_dir))
    out = tmp_path / "release"
    dua = tmp_path / "DUA.md"
    dua.write_text("# 测试数据使用协议\n\n仅用于本测试。\n", encoding="utf-8")
    built = _invoke(
        "release", "build", str(tmp_path / "run"), str(out), "--version", "1.0", "--dua", str(dua)
    )
    assert built[0] == 0, built[1]
    return out


@pytest.fixture()
def key(tmp_path: Path) -> Path:
    path = tmp_path / "keys" / "builder.key"
    code, output = _invoke("release", "keygen", str(path))
    assert code == 0, output
    assert path.stat().st_mode & 0o077 == 0  # the private key is its owner's alone
    return path


def _public(key: Path) -> str:
    return key.with_name(key.name + ".pub").read_text(encoding="utf-8").strip()


def _rehash(release: Path, name: str) -> None:
    """What an attacker does after editing a file: make the manifest agree again."""
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    data = (release / name).read_bytes()
    manifest["files"][name] = hashlib.sha256(data).hexdigest()
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def test_a_signed_release_verifies_against_its_builders_key(release: Path, key: Path) -> None:
    code, output = _invoke("release", "sign", str(release), "--key", str(key))
    assert code == 0, output
    public = _public(key)
    assert public.startswith("ed25519:") and public in (release / "README.md").read_text("utf-8")
    assert _invoke("release", "verify", str(release))[0] == 0
    code, output = _invoke("release", "verify", str(release), "--key", public)
    assert code == 0 and "signed by" in output, output
    pub_file = str(key.with_name(key.name + ".pub"))
    assert _invoke("release", "verify", str(release), "--key", pub_file)[0] == 0


def test_tampering_then_rehashing_fails_the_signature(release: Path, key: Path) -> None:
    assert _invoke("release", "sign", str(release), "--key", str(key))[0] == 0
    changelog = release / "CHANGELOG.md"
    changelog.write_text(changelog.read_text("utf-8") + "\n- nothing was withdrawn\n", "utf-8")
    _rehash(release, "CHANGELOG.md")
    assert _invoke("release", "verify", str(release))[0] == 0  # the checksums agree again
    code, output = _invoke("release", "verify", str(release), "--key", _public(key))
    assert code == 2 and "not signed by key" in output, output


def test_another_key_or_no_signature_is_refused(release: Path, key: Path, tmp_path: Path) -> None:
    code, output = _invoke("release", "verify", str(release), "--key", _public(key))
    assert code == 2 and "not signed" in output, output
    assert _invoke("release", "sign", str(release), "--key", str(key))[0] == 0
    other = tmp_path / "other.key"
    assert _invoke("release", "keygen", str(other))[0] == 0
    code, output = _invoke("release", "verify", str(release), "--key", _public(other))
    assert code == 2 and "not signed by key" in output, output


def test_keygen_never_overwrites_a_key(key: Path) -> None:
    before = key.read_bytes()
    code, output = _invoke("release", "keygen", str(key))
    assert code == 2 and "never overwritten" in output
    assert key.read_bytes() == before


def test_signing_refuses_a_release_that_does_not_match(release: Path, key: Path) -> None:
    (release / "CHANGELOG.md").write_text("edited\n", encoding="utf-8")
    code, output = _invoke("release", "sign", str(release), "--key", str(key))
    assert code == 2 and "does not match its manifest" in output
    assert not (release / "manifest.json.sig").exists()
