"""Generated bad inputs: each a dataset folder (consultations.jsonl + images/) that some check
must refuse with one line naming the file and, where there is one, the line."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image


@dataclass(frozen=True)
class BadInput:
    name: str
    build: Callable[[Path], None]  # writes the dataset into the given folder
    expect: str  # a fragment of the one-line error


def _event(sender: str, minute: int, content: str, images: list[dict] | None = None) -> dict:
    return {
        "sender": sender,
        "timestamp": f"2025-06-01T09:{minute:02d}:00",
        "content": content,
        "images": images or [],
    }


def good_record(case_id: str = "c1", image: str = "images/c1/01.png") -> dict:
    picture = {"path": image, "origin": "patient", "kind": "medical", "category": "skin"}
    return {
        "id": case_id,
        "department": "皮肤科",
        "events": [
            _event("patient", 1, "脚趾缝痒两周", [picture]),
            _event("physician", 2, "您好，有渗液吗？"),
            _event("patient", 3, "没有渗液"),
            _event("physician", 4, "考虑足癣，建议外用抗真菌药"),
            _event("patient", 5, "好的谢谢"),
            _event("physician", 6, "不客气"),
        ],
    }


def write_image(folder: Path, relative: str = "images/c1/01.png", size=(64, 48)) -> None:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (200, 120, 100)).save(path)


def write_dataset(folder: Path, lines: list[bytes], *, image: bool = True) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "consultations.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    if image:
        write_image(folder)


def _line(record: dict) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _mutated(mutate: Callable[[dict], object]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        record = good_record()
        mutate(record)
        write_dataset(folder, [_line(good_record("c0")), _line(record)])

    return build


def _raw(*lines: bytes, image: bool = True) -> Callable[[Path], None]:
    return lambda folder: write_dataset(folder, list(lines), image=image)


def _set(path: str, value: object) -> Callable[[dict], None]:
    def mutate(record: dict) -> None:
        target = record
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[int(key)] if isinstance(target, list) else target[key]
        last = keys[-1]
        if value is _DELETE:
            del target[int(last) if isinstance(target, list) else last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return mutate


_DELETE = object()


def _with_image(make: Callable[[Path], None], mutate: Callable[[dict], None] | None = None):
    def build(folder: Path) -> None:
        record = good_record("c1")
        if mutate:
            mutate(record)
        write_dataset(folder, [_line(record)], image=False)
        make(folder)

    return build


def _broken_image(folder: Path) -> None:
    path = folder / "images/c1/01.png"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n not really a png")


def _bomb(folder: Path) -> None:
    path = folder / "images/c1/01.png"
    path.parent.mkdir(parents=True)
    Image.new("1", (8000, 7000)).save(path)  # 56 Mpx, a few kB on disk


def _cases() -> list[BadInput]:
    good = _line(good_record("c0"))
    cases = [
        BadInput("empty-line-garbage", _raw(good, b"not json"), "not valid JSON"),
        BadInput("truncated-json", _raw(good, good[:-10]), "not valid JSON"),
        BadInput("trailing-comma", _raw(good[:-1] + b",}"), "not valid JSON"),
        BadInput("json-array", _raw(b"[1, 2]"), ":1:"),
        BadInput("json-string", _raw(b'"hello"'), ":1:"),
        BadInput("json-number", _raw(b"42"), ":1:"),
        BadInput("json-null", _raw(b"null"), ":1:"),
        BadInput("latin1-bytes", _raw(good, '{"id": "é"}'.encode("latin-1")), "not UTF-8"),
        BadInput("utf16", _raw(_line(good_record()).decode().encode("utf-16")), "not UTF-8"),
        BadInput("lone-surrogate-bytes", _raw(b'{"id": "\xed\xa0\x80"}'), "not UTF-8"),
        BadInput("nul-byte", _raw(b"\x00" + good), "not valid JSON"),
        BadInput("deep-list", _raw(b"[" * 100_000 + b"]" * 100_000), "nested too deeply"),
        BadInput("deep-object", _raw(b'{"a":' * 100_000 + b"1" + b"}" * 100_000), "too deeply"),
        BadInput("bom-mid-file", _raw(good, b"\xef\xbb\xbf" + good), ":2:"),
        BadInput("duplicate-id", _raw(good, good), "duplicate id 'c0'"),
        BadInput("missing-id", _mutated(_set("id", _DELETE)), "id"),
        BadInput("empty-id", _mutated(_set("id", "")), "id"),
        BadInput("id-number", _mutated(_set("id", 7)), "id"),
        BadInput("missing-department", _mutated(_set("department", _DELETE)), "department"),
        BadInput("department-list", _mutated(_set("department", ["a"])), "department"),
        BadInput("markup-department", _mutated(_set("department", ["[bold]x[/"])), "department"),
        BadInput("no-events", _mutated(_set("events", [])), "events"),
        BadInput("events-dict", _mutated(_set("events", {"a": 1})), "events"),
        BadInput("events-null", _mutated(_set("events", None)), "events"),
        BadInput("bad-sender", _mutated(_set("events.1.sender", "robot")), "sender"),
        BadInput("missing-sender", _mutated(_set("events.1.sender", _DELETE)), "sender"),
        BadInput("bad-timestamp", _mutated(_set("events.1.timestamp", "yesterday")), "timestamp"),
        BadInput("timestamp-number", _mutated(_set("events.1.timestamp", [1])), "timestamp"),
        BadInput(
            "timestamp-out-of-order",
            _mutated(_set("events.2.timestamp", "2025-06-01T08:00:00")),
            "timestamp",
        ),
        BadInput("content-number", _mutated(_set("events.1.content", {"x": 1})), "content"),
        BadInput("content-null", _mutated(_set("events.1.content", None)), "content"),
        BadInput("images-not-list", _mutated(_set("events.0.images", "a.png")), "images"),
        BadInput("image-no-path", _mutated(_set("events.0.images.0.path", _DELETE)), "path"),
        BadInput("image-empty-path", _mutated(_set("events.0.images.0.path", "")), "path"),
        BadInput("image-absolute", _mutated(_set("events.0.images.0.path", "/etc/passwd")), "path"),
        BadInput("image-dotdot", _mutated(_set("events.0.images.0.path", "../x.png")), "path"),
        BadInput("image-bad-origin", _mutated(_set("events.0.images.0.origin", "alien")), "origin"),
        BadInput("image-bad-kind", _mutated(_set("events.0.images.0.kind", "meme")), "kind"),
        BadInput("image-missing", _with_image(lambda folder: None), "image not found"),
        BadInput("image-corrupt", _with_image(_broken_image), "cannot be decoded"),
        BadInput("image-bomb", _with_image(_bomb), "Mpx"),
        BadInput(
            "image-is-folder",
            _with_image(lambda folder: (folder / "images/c1/01.png").mkdir(parents=True)),
            "image not found",
        ),
        BadInput(
            "image-text-file",
            _with_image(
                lambda folder: (
                    (folder / "images/c1").mkdir(parents=True),
                    (folder / "images/c1/01.png").write_text("hello"),
                )
            ),
            "cannot be decoded",
        ),
        BadInput("events-item-string", _mutated(_set("events.1", "hi")), "events"),
        BadInput("events-item-null", _mutated(_set("events.1", None)), "events"),
        BadInput("sender-number", _mutated(_set("events.1.sender", 3)), "sender"),
        BadInput("timestamp-null", _mutated(_set("events.1.timestamp", None)), "timestamp"),
        BadInput("timestamp-empty", _mutated(_set("events.1.timestamp", "")), "timestamp"),
        BadInput(
            "timestamp-month-13",
            _mutated(_set("events.1.timestamp", "2025-13-01T09:00:00")),
            "timestamp",
        ),
        BadInput("image-path-number", _mutated(_set("events.0.images.0.path", 5)), "path"),
        BadInput("image-path-null", _mutated(_set("events.0.images.0.path", None)), "path"),
        BadInput("image-item-string", _mutated(_set("events.0.images.0", "x.png")), "images"),
        BadInput(
            "image-dotdot-nested",
            _mutated(_set("events.0.images.0.path", "images/../../x.png")),
            "path",
        ),
        BadInput("id-null", _mutated(_set("id", None)), "id"),
        BadInput("department-null", _mutated(_set("department", None)), "department"),
        BadInput("empty-object", _raw(b"{}"), ":1:"),
        BadInput("json-true", _raw(b"true"), ":1:"),
        BadInput("lone-brace", _raw(good, b"{"), "not valid JSON"),
        BadInput("unclosed-string", _raw(b'{"id": "c0'), "not valid JSON"),
        BadInput("duplicate-id-apart", _raw(good, _line(good_record("c1")), good), "duplicate id"),
    ]
    return cases


CASES = _cases()
