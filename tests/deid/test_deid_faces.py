"""Faces are found by the Haar cascade OpenCV 4 ships, and covered in solid black."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter

from medrealmm.deid.image import box_coverage, face_backend, mask_image


def _drawn_face(size: int = 200) -> np.ndarray:
    """A blurred frontal face: dark eyes and brows over lighter cheeks, as Haar features expect."""
    img = Image.new("RGB", (size * 2, size * 2), (90, 110, 140))
    draw = ImageDraw.Draw(img)
    cx = cy = size
    w, h = int(size * 0.45), int(size * 0.6)
    draw.ellipse((cx - w, cy - h, cx + w, cy + h), fill=(225, 190, 160))
    ey = cy - int(h * 0.2)
    for side in (-1, 1):
        ex = cx + side * int(w * 0.4)
        draw.ellipse(
            (ex - int(w * 0.22), ey - int(h * 0.07), ex + int(w * 0.22), ey + int(h * 0.07)),
            fill=(60, 40, 30),
        )
        draw.rectangle(
            (ex - int(w * 0.28), ey - int(h * 0.2), ex + int(w * 0.28), ey - int(h * 0.14)),
            fill=(70, 50, 40),
        )
    nose = [
        (cx, ey + 10),
        (cx - int(w * 0.12), cy + int(h * 0.2)),
        (cx + int(w * 0.12), cy + int(h * 0.2)),
    ]
    draw.polygon(nose, fill=(200, 160, 130))
    mouth = (cx - int(w * 0.35), cy + int(h * 0.38), cx + int(w * 0.35), cy + int(h * 0.5))
    draw.ellipse(mouth, fill=(150, 70, 70))
    return np.asarray(img.filter(ImageFilter.GaussianBlur(6)))


def test_a_face_detector_ships_with_the_install() -> None:
    assert face_backend()[0] == "opencv-haar"


def test_faces_are_blacked_out_and_flagged_for_stage_4a() -> None:
    rgb = _drawn_face()
    result = mask_image(rgb)
    faces = [b for b in result.boxes if b.kind == "face"]
    assert result.face_detector == "opencv-haar"
    assert len(faces) == 1
    eyes = (150, 160, 250, 200)  # the eye band of the drawn face
    assert box_coverage(result.image, eyes) == 1.0
    assert any("4a" in note for note in result.needs_review)


def test_skin_photos_keep_their_clinical_signal(demo_dir) -> None:  # type: ignore[no-untyped-def]
    """Bright skin is not paper: no 'logo' box may swallow a clinical photo."""
    from medrealmm.deid.image import load_without_metadata

    photos = sorted(demo_dir.glob("images/*/*_skin.jpg"))[:6]
    assert photos
    for path in photos:
        result = mask_image(load_without_metadata(path))
        blacked = float(np.mean((result.image == 0).all(axis=2)))
        assert blacked < 0.05, f"{path.name}: {blacked:.0%} of a skin photo blacked out"


def test_threads_borrow_a_detector_instead_of_loading_one_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An executor's new threads reuse the detectors already loaded (~0.08 CPU-s each)."""
    from medrealmm.deid import image

    made: list[int] = []
    load = image._new_face_backend
    monkeypatch.setattr(image, "_IDLE_FACES", [])
    monkeypatch.setattr(image, "_new_face_backend", lambda: made.append(1) or load())
    rgb = np.full((120, 160, 3), 128, np.uint8)
    for _ in range(3):  # one after another, each on a thread of its own
        worker = threading.Thread(target=image.face_boxes, args=(rgb,))
        worker.start()
        worker.join()
    assert len(made) == 1


def _report_with_a_photo() -> np.ndarray:
    """A printed report (lines OCR reads) with a patient photo pinned beside its text."""
    from PIL import ImageFont

    from medrealmm.fonts import require_cjk_font

    page = Image.new("RGB", (720, 900), (250, 250, 247))
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(str(require_cjk_font()), 24)
    rows = ["检验报告单", "标本类型：静脉血", "白细胞计数 6.2", "红细胞计数 4.5", "血红蛋白 135"]
    for i, row in enumerate(rows):
        draw.text((40, 60 + 60 * i), row, font=font, fill="black")
    page.paste(Image.fromarray(_drawn_face(100)), (480, 560))
    return np.asarray(page)


def test_a_photo_pinned_to_a_report_is_still_found() -> None:
    """The cascade skips the report's read lines, not the photo pinned beside them."""
    from medrealmm.deid.image import image_kind, read_page

    rgb = _report_with_a_photo()
    lines = read_page(rgb).lines
    gray = rgb.mean(axis=2).astype(np.uint8)
    assert image_kind(gray, rgb, lines) in ("document", "screenshot")  # a page, painted
    result = mask_image(rgb)
    assert [b.kind for b in result.boxes].count("face") == 1
    assert box_coverage(result.image, (555, 635, 605, 655)) == 1.0  # the photo's eye band


def test_the_cascade_is_shown_a_page_without_its_legible_text_and_codes() -> None:
    from medrealmm.deid.image import _unread
    from medrealmm.deid.ocr import OcrLine
    from medrealmm.deid.record import ImageBox

    rgb = np.full((100, 200, 3), 240, np.uint8)
    rgb[10:20, 10:90] = rgb[40:50, 10:30] = rgb[70:90, 150:170] = 0
    read = OcrLine((10, 10, 90, 20), "白细胞计数", 0.95, ((10, 10), (90, 10), (90, 20), (10, 20)))
    glyph = OcrLine((10, 40, 30, 50), "口", 0.95, ((10, 40), (30, 40), (30, 50), (10, 50)))
    code = ImageBox(kind="qr", box=(150, 70, 170, 90))
    shown = _unread(rgb, [read, glyph], [code])
    assert (shown[10:20, 10:90] == 240).all() and (shown[70:90, 150:170] == 240).all()
    assert (shown[40:50, 10:30] == 0).all()  # a lone glyph may be a misread face: kept
    assert (rgb[10:20, 10:90] == 0).all()  # the page itself is untouched
