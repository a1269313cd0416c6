"""Images are referenced by path relative to a dataset root; this resolves and encodes them."""

from __future__ import annotations

import base64
import hashlib
import mimetypes
from pathlib import Path

from medrealmm.schema import ImageRef


class MissingImageError(FileNotFoundError):
    pass


def resolve_image(root: Path | str, ref: ImageRef) -> Path:
    root = Path(root).resolve()
    path = (root / ref.path).resolve()
    if root not in path.parents:
        raise MissingImageError(f"image path escapes the dataset root: {ref.path}")
    if not path.is_file():
        raise MissingImageError(f"image not found: {ref.path} (dataset root {root})")
    return path


def image_data_url(path: Path | str) -> str:
    """A base64 data URL, the form OpenAI-compatible multimodal messages accept."""
    path = Path(path)
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    payload = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:{mime};base64,{payload}"


def file_sha256(path: Path | str) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
