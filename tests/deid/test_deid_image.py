from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from PIL.PngImagePlugin import PngInfo

from medrealmm.deid.image import (
    barcode_like_boxes,
    code_boxes,
    encode_clean,
    face_backend,
    load_without_metadata,
    mask_image,
)
from medrealmm.deid.metrics import covered
from medrealmm.deid.stage import mask_image_file
from medrealmm.fonts import require_cjk_font
from medrealmm.testing.demo_corpus import drawing

Box = tuple[int, int, int, int]


def write(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, fill: str = "black") -> Box:
    font = ImageFont.truetype(str(require_cjk_font()), 24)
    draw.text(xy, text, font=font, fill=fill)
    return draw.textbbox(xy, text, font=font)


def test_exif_is_gone_after_reencoding(demo_dir: Path, tmp_path: Path) -> None:
    source = demo_dir / "images/demo-000/01_skin.jpg"
    with Image.open(source) as original:
        assert original.getexif()  # the demo plants an Artist tag
    (tmp_path / "out.jpg").write_bytes(encode_clean(load_without_metadata(source), ".jpg"))
    with Image.open(tmp_path / "out.jpg") as masked:
        assert not masked.getexif()
        assert "exif" not in masked.info


@pytest.mark.slow
def test_stage_writer_strips_exif_too(demo_dir: Path, tmp_path: Path) -> None:
    source = demo_dir / "images/demo-000/01_skin.jpg"
    record = mask_image_file(source, tmp_path / "out.jpg", "01_skin.jpg")
    with Image.open(tmp_path / "out.jpg") as masked:
        assert not masked.getexif()
    assert record.metadata_stripped and record.width == 640


def test_png_text_chunks_are_gone(tmp_path: Path) -> None:
    info = PngInfo()
    info.add_text("Author", "patient name")
    Image.new("RGB", (120, 80), "white").save(tmp_path / "in.png", pnginfo=info)
    rgb = load_without_metadata(tmp_path / "in.png")
    (tmp_path / "out.png").write_bytes(encode_clean(rgb, ".png"))
    with Image.open(tmp_path / "out.png") as masked:
        assert "Author" not in masked.info


def test_flagged_ocr_text_is_covered_and_clinical_values_survive() -> None:
    img = Image.new("RGB", (640, 200), (250, 250, 247))
    draw = ImageDraw.Draw(img)
    write(draw, (20, 20), "姓名：")
    name = write(draw, (100, 20), "朱秀英")
    write(draw, (20, 80), "电话：")
    phone = write(draw, (100, 80), "13812345678")
    value = write(draw, (20, 140), "空腹血糖 7.8 mmol/L")
    result = mask_image(np.array(img))
    assert covered(result.image, name) and covered(result.image, phone)
    x0, y0, x1, y1 = value
    assert (result.image[y0:y1, x0:x1] == np.array(img)[y0:y1, x0:x1]).all()
    labels = {b.label for b in result.boxes if b.kind == "text"}
    assert labels == {"NAME", "PHONE"}


def test_ocr_text_left_that_a_veto_dropped_is_a_near_miss_and_stays_visible() -> None:
    img = Image.new("RGB", (640, 200), (250, 250, 247))
    draw = ImageDraw.Draw(img)
    write(draw, (20, 20), "姓名：")
    name = write(draw, (100, 20), "朱秀英")
    brand = write(draw, (20, 80), "舒眠宁吃完两盒还是睡不着")
    write(draw, (20, 140), "空腹血糖 7.8 mmol/L")
    result = mask_image(np.array(img))
    assert [(b.kind, b.label) for b in result.near_misses] == [
        ("near_miss", "used_like_a_medicine")
    ]
    box = result.near_misses[0].box
    assert box[1] < brand[3] and brand[1] < box[3]  # on the brand's line, not the name's
    x0, y0, x1, y1 = brand
    assert (result.image[y0:y1, x0:x1] == np.array(img)[y0:y1, x0:x1]).all()  # outlined only
    assert covered(result.image, name)
    assert all(b.kind != "near_miss" for b in result.boxes)


@pytest.mark.slow
def test_boxes_are_solid_black_never_blurred() -> None:
    img = Image.new("RGB", (640, 120), (250, 250, 247))
    write(ImageDraw.Draw(img), (20, 40), "身份证号：11010519491231002X")
    result = mask_image(np.array(img))
    assert result.boxes
    for item in result.boxes:
        x0, y0, x1, y1 = item.box
        assert (result.image[y0:y1, x0:x1] == 0).all()


def test_qr_codes_are_found_by_decoding() -> None:
    qrcode = pytest.importorskip("qrcode")
    code = qrcode.make("https://health.example.cn/report/1").get_image().convert("RGB")
    page = Image.new("RGB", (500, 500), "white")
    page.paste(code.resize((200, 200)), (150, 150))
    boxes = code_boxes(np.array(page))
    assert [b.kind for b in boxes] == ["qr"]
    masked = np.array(page)
    x0, y0, x1, y1 = boxes[0].box
    masked[y0:y1, x0:x1] = 0
    # The symbol inside the 4-module quiet zone (about 28 px here) must be covered.
    assert covered(masked, (180, 180, 320, 320))


def test_undecodable_barcodes_are_found_by_their_strokes() -> None:
    page = Image.new("RGB", (500, 300), (250, 250, 247))
    page.paste(drawing._barcode(random.Random(3), 220, 60), (40, 200))
    found = barcode_like_boxes(np.array(page.convert("L")), [])
    assert any(
        b.box[0] <= 40 and b.box[1] <= 200 and b.box[2] >= 260 and b.box[3] >= 260 for b in found
    )


@pytest.mark.slow
def test_burnt_in_overlay_text_on_film_is_all_covered() -> None:
    img = Image.new("RGB", (600, 600), (8, 8, 8))
    draw = ImageDraw.Draw(img)
    draw.ellipse((150, 150, 450, 450), fill=(90, 90, 90))
    top = write(draw, (16, 12), "PATIENT^4821", fill="white")
    bottom = write(draw, (16, 560), "2025-06-01", fill="white")
    result = mask_image(np.array(img))
    assert covered(result.image, top) and covered(result.image, bottom)
    assert {b.kind for b in result.boxes} == {"overlay"}


def test_photos_without_a_face_detector_are_flagged_for_review() -> None:
    rgb = np.full((200, 200, 3), 150, dtype=np.uint8)
    result = mask_image(rgb)
    name, _ = face_backend()
    assert result.face_detector == name
    if name == "unavailable":
        assert result.needs_review == ["faces not checked: no face detector available"]


@pytest.mark.slow
def test_every_planted_box_on_demo_documents_is_covered(demo_dir: Path, tmp_path: Path) -> None:
    truth = json.loads((demo_dir / "truth.json").read_text(encoding="utf-8"))
    wanted = ("images/demo-002/01_lab_report.png", "images/demo-007/01_ct_film.png")
    boxes = {
        rel: kinds for case in truth.values() for rel, kinds in case["image_pii_boxes"].items()
    }
    for rel in [*wanted, next(r for r in boxes if "prescription" in r)]:
        mask_image_file(demo_dir / rel, tmp_path / "out.png", rel)
        masked = np.array(Image.open(tmp_path / "out.png").convert("RGB"))
        for kind, kind_boxes in boxes[rel].items():
            for box in kind_boxes:
                assert covered(masked, tuple(box)), (rel, kind)


def test_an_image_over_the_pixel_cap_is_refused_undecoded_with_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from medrealmm.deid.image import ImageTooLargeError

    monkeypatch.setattr("medrealmm.io.dataset.DEFAULT_MAX_PIXELS", 100 * 100)
    source = tmp_path / "big.png"
    Image.new("RGB", (200, 120), "white").save(source)
    with pytest.raises(ImageTooLargeError, match=r"big\.png is 200x120 .* cap"):
        mask_image_file(source, tmp_path / "out" / "big.png", "big.png")
    assert not (tmp_path / "out").exists()  # never an unmasked copy
    assert load_without_metadata(source, max_pixels=200 * 120).shape == (120, 200, 3)


async def test_an_over_cap_image_fails_its_case_only_and_says_why(
    demo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from medrealmm.deid.stage import run_deid_stage
    from medrealmm.io import iter_jsonl
    from medrealmm.schema import Consultation
    from medrealmm.store import RunStore, stages

    monkeypatch.setattr("medrealmm.io.dataset.DEFAULT_MAX_PIXELS", 100 * 100)
    case = next(
        c for c in iter_jsonl(demo_dir / "consultations.jsonl", Consultation) if c.id == "demo-001"
    )
    with RunStore(tmp_path / "run") as store:
        store.set_meta(stages.image_root_key(stages.CORPUS_SAMPLED), str(demo_dir))
        store.put(stages.CORPUS_SAMPLED, case.id, case)
        stats = await run_deid_stage(store, tmp_path / "run", None)
        assert stats.failed == 1 and "over the" in stats.errors[case.id]
        assert store.count(stages.CORPUS_DEID) == 0
        assert case.id in store.failures(stages.DEID_RECORD)
    assert not any(p.is_file() for p in (tmp_path / "run" / "deid").rglob("*"))
