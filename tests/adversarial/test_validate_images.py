"""``validate`` (and so every command that ingests) refuses an image that links outside the
dataset folder, an ``images/`` folder linked from outside, and a JPEG cut short; each in one
line naming the file, the line and the field."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cases import good_record, write_image
from PIL import Image
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.io.dataset import check_dataset
from medrealmm.io.errors import DataError

FIELD = "events.0.images.0.path"


def _dataset(folder: Path, image: str = "images/c1/01.png") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    record = json.dumps(good_record("c1", image), ensure_ascii=False)
    (folder / "consultations.jsonl").write_text(record + "\n", encoding="utf-8")
    return folder


def _jpeg_bytes() -> bytes:
    buffer = io.BytesIO()
    picture = Image.new("RGB", (320, 240))
    picture.putdata([(x % 256, (x // 7) % 256, 90) for x in range(320 * 240)])
    picture.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def _validate(folder: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["validate", str(folder / "consultations.jsonl")])
    return result.exit_code, " ".join(result.output.split())


def _refused(folder: Path, fragment: str) -> None:
    with pytest.raises(DataError) as caught:
        check_dataset(folder)
    assert (caught.value.line, caught.value.field) == (1, FIELD)
    assert fragment in caught.value.message
    code, output = _validate(folder)
    assert code == 2 and fragment in output and "Traceback" not in output, output


def test_an_image_linking_outside_is_refused(tmp_path: Path) -> None:
    write_image(tmp_path / "elsewhere", "photo.png")
    folder = _dataset(tmp_path / "data")
    (folder / "images/c1").mkdir(parents=True)
    (folder / "images/c1/01.png").symlink_to(tmp_path / "elsewhere/photo.png")
    _refused(folder, "outside the dataset folder")


def test_a_linked_images_folder_from_outside_is_refused(tmp_path: Path) -> None:
    write_image(tmp_path / "elsewhere")
    folder = _dataset(tmp_path / "data")
    (folder / "images").symlink_to(tmp_path / "elsewhere/images")
    _refused(folder, "outside the dataset folder")


def test_a_link_inside_the_dataset_folder_is_fine(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "data")
    write_image(folder, "photos/c1/01.png")
    (folder / "images").symlink_to(folder / "photos")
    assert check_dataset(folder).images == 1


def test_a_truncated_jpeg_is_refused(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "data", "images/c1/01.jpg")
    (folder / "images/c1").mkdir(parents=True)
    whole = _jpeg_bytes()
    (folder / "images/c1/01.jpg").write_bytes(whole[: len(whole) * 2 // 3])
    _refused(folder, "truncated")


def test_a_whole_jpeg_passes(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "data", "images/c1/01.jpg")
    (folder / "images/c1").mkdir(parents=True)
    (folder / "images/c1/01.jpg").write_bytes(_jpeg_bytes())
    assert check_dataset(folder).images == 1
    assert _validate(folder)[0] == 0


def test_a_truncated_png_is_refused(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "data")
    write_image(folder, size=(320, 240))
    path = folder / "images/c1/01.png"
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(DataError) as caught:
        check_dataset(folder)
    assert caught.value.field == FIELD
