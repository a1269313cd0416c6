"""Ed25519 signatures of a release's manifest: who built it, checkable by anyone.

The manifest's checksums catch a changed file, but anyone can re-hash a tampered release.
``sign_release`` signs ``manifest.json`` as it lies on disk with the builder's private key
(``manifest.json.sig``, base64) after putting the public key in the dataset card and the
manifest; ``verify_signature`` checks it against a key the consumer got from the builder (the
dataset card they published, or their ``.pub`` file), not the one the release carries.
Keys: ``generate_key`` (``medrealmm release keygen``); no openssl needed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from medrealmm.release import layout
from medrealmm.release.loader import ReleaseIntegrityError, read_manifest, verify_release

SIGNATURE = layout.SIGNATURE
KEY_PREFIX = "ed25519:"
#: Where the card's signature section starts; a new signature replaces everything after it.
_CARD_MARK = "<!-- medrealmm: release signature -->"


class SignatureError(ReleaseIntegrityError):
    """The signature is missing, malformed, or not made by the given key."""


def generate_key(path: Path | str) -> str:
    """Write a new private key to ``path`` (PEM, readable by its owner only) and the public
    key to ``path.pub``; refuses to overwrite either. Returns the public key's text."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(path)
    public_path = _public_path(path)
    for target in (path, public_path):
        if target.exists():
            raise FileExistsError(f"{target} exists: a key is never overwritten; pick a new name")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    public = _public_text(key.public_key())
    public_path.write_text(public + "\n", encoding="utf-8")
    return public


def sign_release(root: Path | str, key_path: Path | str) -> str:
    """Sign a release that matches its manifest; returns the public key's text.

    The card gets a section with the public key and the manifest records it (its card
    checksum updated), then the manifest is signed. Each file is written beside itself and
    renamed, card, manifest, signature in turn, so no file is ever half written."""
    root = Path(root)
    verify_release(root)
    key = _private_key(Path(key_path))
    public = _public_text(key.public_key())
    manifest = read_manifest(root)
    card = (root / layout.CARD).read_text(encoding="utf-8").split(_CARD_MARK)[0].rstrip("\n")
    card += "\n\n" + _card_section(public)
    card_bytes = card.encode("utf-8")
    manifest["signing_key"] = public
    manifest["files"][layout.CARD] = hashlib.sha256(card_bytes).hexdigest()
    manifest_bytes = (
        json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    ).encode("utf-8")
    signature = base64.b64encode(key.sign(manifest_bytes)) + b"\n"
    staged = [
        (root / layout.CARD, card_bytes),
        (root / layout.MANIFEST, manifest_bytes),
        (root / SIGNATURE, signature),
    ]
    temps = [_stage(path, data) for path, data in staged]
    for temp, (path, _) in zip(temps, staged, strict=True):
        os.replace(temp, path)
    return public


def verify_signature(root: Path | str, key: str | Path) -> dict[str, Any]:
    """Every file against the manifest, and the manifest against ``key``'s signature.

    ``key``: the public key's text (``ed25519:...``, as the card shows it), a ``.pub`` file,
    or the private key file."""
    from cryptography.exceptions import InvalidSignature

    root = Path(root)
    manifest = verify_release(root)
    public = _public_key(key)
    signature_path = root / SIGNATURE
    if not signature_path.is_file():
        raise SignatureError(f"{root}: the release is not signed (no {SIGNATURE})")
    try:
        signature = base64.b64decode(signature_path.read_bytes().strip(), validate=True)
    except binascii.Error:
        raise SignatureError(f"{signature_path}: not a base64 signature") from None
    try:
        public.verify(signature, (root / layout.MANIFEST).read_bytes())
    except InvalidSignature:
        raise SignatureError(
            f"{root}: {layout.MANIFEST} is not signed by key {_public_text(public)}: the "
            "release was changed after signing, or signed by someone else"
        ) from None
    return manifest


def _card_section(public: str) -> str:
    return (
        f"{_CARD_MARK}\n## Signature\n\n"
        f"`{layout.MANIFEST}` is signed with Ed25519 (`{SIGNATURE}`). The builder's public key:\n\n"
        f"    {public}\n\n"
        "Check a copy with `medrealmm release verify RELEASE --key KEY`, where KEY is this key "
        "as the builder published it (not as a copy's card shows it).\n"
    )


def _stage(path: Path, data: bytes) -> str:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return temp


def _public_path(path: Path) -> Path:
    return path.with_name(path.name + ".pub")


def _public_text(public: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return KEY_PREFIX + base64.b64encode(raw).decode("ascii")


def _private_key(path: Path) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not path.is_file():
        raise FileNotFoundError(f"signing key {path} not found (make one: release keygen)")
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError):
        raise ValueError(f"{path}: not an unencrypted PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path}: not an Ed25519 key (make one: release keygen)")
    return key


def _public_key(key: str | Path) -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    text = str(key).strip()
    path = Path(text)
    if not text.startswith(KEY_PREFIX) and path.is_file():
        content = path.read_text(encoding="utf-8").strip()
        if "PRIVATE KEY" in content:
            return _private_key(path).public_key()
        text = content
    if not text.startswith(KEY_PREFIX):
        raise ValueError(f"key {text[:60]!r}: give ed25519:BASE64 (the card's line) or a key file")
    try:
        raw = base64.b64decode(text.removeprefix(KEY_PREFIX), validate=True)
        return Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError):
        raise ValueError(f"key {text[:60]!r}: not a 32-byte Ed25519 public key") from None
