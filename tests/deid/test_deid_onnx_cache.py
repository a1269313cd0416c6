"""Edited ONNX models are kept on disk: a later process reads the same bytes back, a damaged
file is made again, and a cache that is off or cannot be written changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.deid.onnx_cache import CACHE_ENV, cache_dir, edited

CALLS: list[bytes] = []


def reverse(model: bytes) -> bytes:
    """A stand-in edit that counts its calls."""
    CALLS.append(model)
    return model[::-1]


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    CALLS.clear()


def test_an_edit_is_made_once_and_read_back_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert edited(b"model-a", reverse) == b"a-ledom"
    assert edited(b"model-a", reverse) == b"a-ledom"
    assert len(CALLS) == 1
    assert len(list(tmp_path.glob("*.onnx"))) == 1
    assert edited(b"model-b", reverse) == b"b-ledom"  # another model: another entry
    assert len(CALLS) == 2


def test_a_damaged_file_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    edited(b"model-a", reverse)
    (stored,) = tmp_path.glob("*.onnx")
    stored.write_bytes(b"a-led")  # cut short
    assert edited(b"model-a", reverse) == b"a-ledom"
    assert len(CALLS) == 2
    assert [p.read_bytes() for p in tmp_path.glob("*.onnx")] == [b"a-ledom"]


def test_off_or_unwritable_leaves_the_edit_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_dir() is None
    assert edited(b"model-a", reverse) == b"a-ledom"
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocked / "models"))
    assert edited(b"model-a", reverse) == b"a-ledom"
    assert len(CALLS) == 2
    assert not list(tmp_path.rglob("*.tmp"))
