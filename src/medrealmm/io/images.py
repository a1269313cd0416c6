"""Images are referenced by path relative to a dataset root; this resolves and encodes them."""

from __future__ import annotations

import base64
import hashlib
import io
import mimetypes
import os
from pathlib import Path

from medrealmm.schema import ImageRef


class MissingImageError(FileNotFoundError):
    pass


def contained_path(root: Path | str, relative: str) -> Path | None:
    """``root/relative`` when it stays inside ``root`` as written, else None.

    The containment rule for reading: ``..`` and absolute paths are refused; symbolic links
    are not followed here (``check_image``, which every ingest runs, refuses a link that leads
    outside the dataset folder).
    """
    root = Path(os.path.abspath(root))
    path = Path(os.path.normpath(root / relative))
    return path if root in path.parents else None


def resolve_image(root: Path | str, ref: ImageRef) -> Path:
    path = contained_path(root, ref.path)
    if path is None:
        raise MissingImageError(f"image path escapes the dataset folder: {ref.path}")
    if not path.is_file():
        raise MissingImageError(f"image not found: {ref.path} (dataset root {root})")
    return path


def image_data_url(path: Path | str) -> str:
    """A base64 data URL, the form OpenAI-compatible multimodal messages accept."""
    path = Path(path)
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    payload = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:{mime};base64,{payload}"


def data_url_size(url: str) -> tuple[int, int]:
    """(width, height) of a base64 data URL's image, read from its header: Pillow's ``open``
    parses the header only, so no pixels are decoded."""
    from PIL import Image

    payload = url.partition(",")[2]
    with Image.open(io.BytesIO(base64.b64decode(payload))) as image:
        width, height = image.size
    return int(width), int(height)


def file_sha256(path: Path | str) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: Bytes at the end of a JPEG searched for its end-of-image marker (some cameras append data).
JPEG_TAIL_BYTES = 64 * 1024


def check_image(root: Path | str, relative: str, max_pixels: int) -> str | None:
    """Why the image at ``relative`` cannot be used, or None. Containment is checked on the
    path as written and again where its symbolic links lead: an image, or an ``images/``
    folder, that links outside the dataset folder is refused (its bytes are not the dataset's
    and would ship in a release). The pixel cap is checked from the header, before any
    decoding, so a decompression bomb costs nothing; a JPEG cut short (no end-of-image marker
    after its last scan) is refused here, not hours later in de-identification. The file is
    opened once."""
    from PIL import Image, UnidentifiedImageError

    path = contained_path(root, relative)
    if path is None:
        return f"image path escapes the dataset folder: {relative}"
    if not path.is_file():
        return f"image not found: {relative}"
    if _links_outside(root, relative, path):
        return (
            f"image {relative} is a symbolic link (or lies in a linked folder) that leads "
            "outside the dataset folder; copy the images into it"
        )
    try:
        with path.open("rb") as handle, Image.open(handle) as image:
            width, height = image.size
            if width * height > max_pixels:
                return (
                    f"image {relative} is {width}x{height} = {width * height / 1e6:.0f} Mpx, "
                    f"over the {max_pixels / 1e6:.0f} Mpx cap (MEDREALMM_MAX_PIXELS)"
                )
            image.verify()
            if image.format == "JPEG" and not _jpeg_ends(handle):
                return f"image {relative} is truncated: no JPEG end-of-image marker"
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        return f"image {relative} cannot be decoded: {type(exc).__name__}"
    except Image.DecompressionBombError:
        return f"image {relative} is over Pillow's decompression-bomb limit"
    return None


def _links_outside(root: Path | str, relative: str, path: Path) -> bool:
    """Whether a symbolic link on the way from ``root`` down to ``path`` leads outside
    ``root``. Only the components below ``root`` are looked at (an lstat each), and the whole
    path is resolved only when one of them is a link: most datasets have none."""
    current = os.path.abspath(root)
    for part in os.path.normpath(relative).split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current):
            return Path(os.path.realpath(root)) not in Path(os.path.realpath(path)).parents
    return False


def _jpeg_ends(handle: io.BufferedReader) -> bool:
    """Whether an end-of-image marker (FF D9) follows the last start-of-scan (FF DA) in the
    file's tail: entropy-coded data never holds either (an FF there is followed by 00 or a
    restart marker), and an embedded thumbnail's marker comes before the main scan."""
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - JPEG_TAIL_BYTES))
    tail = handle.read()
    return tail.rfind(b"\xff\xd9") > tail.rfind(b"\xff\xda")
