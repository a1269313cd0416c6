"""The one way a consultation enters a prompt: dialogue lines with images inline.

Every agent renders its template with the dialogue in one slot (``{{ dialogue }}``) and
``dialogue_messages`` drops the parts there, so each image lands right after its numbered
marker. Whether pixels go at all is decided by one rule, ``send_pixels``; without them each
marker says the picture is not shown. The with/without-image comparison therefore differs in
exactly one thing: whether pixels are sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from medrealmm.io.images import image_data_url, resolve_image
from medrealmm.llm.prompts import render, system_messages
from medrealmm.llm.types import ImagePart, Message, Part, TextPart
from medrealmm.schema import Event, ImageKind, ImageOrigin, ImageRef, Sender

SENDER_LABEL = {Sender.PATIENT: "患者", Sender.PHYSICIAN: "医生"}
ORIGIN_LABEL = {
    ImageOrigin.PATIENT: "患者",
    ImageOrigin.PHYSICIAN: "医生",
    ImageOrigin.PLATFORM: "平台",
}
WITHHELD_IMAGE = "图片内容未提供"
NON_MEDICAL_IMAGE = "[表情/贴图]"
DIALOGUE_SLOT = "dialogue"
_MARK = "\u0000DIALOGUE\u0000"
#: How ``image_reference`` URLs start; never a data URL, so no server mistakes it for pixels.
IMAGE_REFERENCE = "medrealmm-image:"


class ReadsImages(Protocol):
    """A client or a model spec: both say whether the model reads image parts."""

    vision: bool


def send_pixels(model: ReadsImages, wanted: bool) -> bool:
    """The one rule for attaching pixels: the caller wants them and the model reads images.

    A model that cannot read them gets the text-only dialogue, whose markers say so.
    """
    return wanted and model.vision


def _marker(number: int, ref: ImageRef) -> str:
    return f"图片{number}（{ORIGIN_LABEL[ref.origin]}上传）"


def _turns(events: Sequence[Event]) -> Iterator[tuple[str, list[tuple[ImageRef, int] | None]]]:
    """Each turn's line and its pictures: (medical image, number), or None for a sticker."""
    number = 0
    for index, event in enumerate(events, start=1):
        images: list[tuple[ImageRef, int] | None] = []
        for ref in event.images:
            if ref.kind is ImageKind.MEDICAL:
                number += 1
                images.append((ref, number))
            else:
                images.append(None)
        yield f"[{index}] {SENDER_LABEL[event.sender]}：{event.content.strip()}", images


def dialogue_text(events: Sequence[Event]) -> str:
    """Transcript for people (review pages, exports): numbered image markers, no pixels."""
    lines = []
    for line, images in _turns(events):
        markers = [NON_MEDICAL_IMAGE if i is None else f"[{_marker(i[1], i[0])}]" for i in images]
        lines.append(" ".join([line, *markers]).strip())
    return "\n".join(lines)


def dialogue_parts(
    events: Sequence[Event], *, image_root: Path | str | None, pixels: bool = True
) -> list[Part]:
    """The dialogue for a prompt: with ``image_root`` each medical image's pixels follow its
    marker; without, the marker says the picture is not shown. ``pixels=False`` (a client that
    never reads them, ``LLMClient.reads_pixels``) keeps the shown markers and image parts but
    each part names its file (``image_reference``) instead of inlining it: nothing is read."""
    parts: list[Part] = []
    buffer: list[str] = []
    for line, images in _turns(events):
        buffer.append(line)
        for image in images:
            if image is None:
                buffer.append(NON_MEDICAL_IMAGE)
                continue
            ref, number = image
            if image_root is None:
                buffer.append(f"[{_marker(number, ref)}：{WITHHELD_IMAGE}]")
                continue
            buffer.append(f"[{_marker(number, ref)}]")
            parts.append(TextPart(text="\n".join(buffer)))
            buffer.clear()
            url = image_data_url(resolve_image(image_root, ref)) if pixels else image_reference(ref)
            parts.append(ImagePart(url=url))
    if buffer:
        parts.append(TextPart(text="\n".join(buffer)))
    return parts


def image_reference(ref: ImageRef) -> str:
    """An image part's stand-in for its pixels: the dataset-relative path, which the
    validator has already checked, for a client whose answer never depends on the bytes."""
    return f"{IMAGE_REFERENCE}{ref.path}"


def _merge_text(head: str, dialogue: list[Part], tail: str) -> list[Part]:
    """``head``, the dialogue and ``tail`` with each run of adjacent text joined into one part
    and empty text dropped; a part is made per run (the message goes out with every call)."""
    merged: list[Part] = []
    run = [head]
    for part in dialogue:
        if isinstance(part, TextPart):
            run.append(part.text)
            continue
        _flush(run, merged)
        merged.append(part)
    run.append(tail)
    _flush(run, merged)
    return merged


def _flush(run: list[str], merged: list[Part]) -> None:
    text = "".join(run)
    run.clear()
    if text:
        merged.append(TextPart(text=text))


def _around_dialogue(package: str, agent: str, variables: dict[str, Any]) -> tuple[str, str]:
    """The rendered user template's text before and after its ``{{ dialogue }}`` slot."""
    variables[DIALOGUE_SLOT] = _MARK
    text = render(package, agent, "user", **variables)
    if text.count(_MARK) != 1:
        raise ValueError(f"template {package}/{agent}.user.j2 must use {{{{ dialogue }}}} once")
    head, tail = text.split(_MARK)
    return head, tail


def dialogue_messages(
    package: str, agent: str, dialogue: list[Part], **variables: Any
) -> list[Message]:
    """Render ``<package>/prompts/<agent>.*.j2`` with ``dialogue`` (from ``dialogue_parts``)
    in the user template's ``{{ dialogue }}`` slot, images inline where the slot is."""
    key = _render_key(package, agent, variables)
    rendered = _RENDERED.get(key) if key is not None else None
    if rendered is None:
        head, tail = _around_dialogue(package, agent, variables)
        system = [(m.role, m.content) for m in system_messages(package, agent, **variables)]
        rendered = (system, head, tail)
        if key is not None:
            if len(_RENDERED) >= _RENDERED_CAP:
                _RENDERED.clear()
            _RENDERED[key] = rendered
    system, head, tail = rendered
    content = _merge_text(head, dialogue, tail)
    return [
        *(Message(role=role, content=list(parts)) for role, parts in system),
        Message(role="user", content=content),
    ]


#: The rendered system parts, head and tail of recent (package, agent, variables): an agent
#: called once per case with a few short values (a department, image categories) renders
#: its templates once per distinct value, not once per case.
_RENDERED: dict[tuple[object, ...], tuple[list[tuple[Any, list[Part]]], str, str]] = {}
_RENDERED_CAP = 1024
#: Longest text (all values together) whose rendering is remembered.
_RENDERED_TEXT = 512


def _render_key(package: str, agent: str, variables: dict[str, Any]) -> tuple[object, ...] | None:
    """A memo key when every value is plain text or a list of it (rendered by content alone;
    a subclass such as an enum may render otherwise) and short; else None: rendered afresh."""
    items: list[tuple[str, object]] = []
    size = 0
    for name, value in variables.items():
        if type(value) is str:
            size += len(value)
        elif type(value) in (list, tuple) and all(type(v) is str for v in value):
            size += sum(len(v) for v in value)
            value = (type(value).__name__, *value)
        else:
            return None
        items.append((name, value))
    if size > _RENDERED_TEXT:
        return None
    return (package, agent, *sorted(items))


def slot_marker(name: str) -> str:
    """What a ``PresetMessages`` slot's stand-in must render as."""
    return f"\u0000slot:{name}\u0000"


_SLOT = re.compile("\u0000slot:([^\u0000]*)\u0000")


class PresetMessages:
    """``dialogue_messages`` for many calls that differ only in a few variables (a grader's
    criterion): the template is rendered once, each slot holding a stand-in that renders as
    ``slot_marker(name)``, and each call joins the pieces with its values (``str(value)``,
    as the template prints them), byte for byte what a full render gives. The stand-ins must
    lead the template down the branches every value would take; the caller vouches for that.
    """

    def __init__(
        self,
        package: str,
        agent: str,
        constants: Mapping[str, Any],
        stand_ins: Mapping[str, Any],
    ) -> None:
        self._package, self._agent = package, agent
        self._constants = dict(constants)
        # A NUL in a constant could fake a marker: such rare calls take the full render.
        self._exact = not any("\u0000" in str(v) for v in self._constants.values())
        head, tail = _around_dialogue(package, agent, {**self._constants, **stand_ins})
        system = system_messages(package, agent, **self._constants, **stand_ins)
        if any(_SLOT.search(m.plain_text) for m in system):
            raise ValueError(f"{package}/{agent}: a slot may only be in the user template")
        self._system_parts = [m.content for m in system]
        self._system_roles = [m.role for m in system]
        # Text around the markers and, at odd places, slot names (``re.split`` keeps groups).
        self._head = _SLOT.split(head)
        self._tail = _SLOT.split(tail)

    def messages(self, dialogue: list[Part], **values: Any) -> list[Message]:
        shown = {name: str(value) for name, value in values.items()}
        if not self._exact or any(_MARK in text for text in shown.values()):
            # What the full render does, error included (a value holding the dialogue mark).
            return dialogue_messages(
                self._package, self._agent, dialogue, **self._constants, **values
            )
        # The full render strips its whole text; the dialogue mark between head and tail is
        # not blank, so that is stripping the head's start and the tail's end, after filling.
        head = _fill(self._head, shown).lstrip()
        tail = _fill(self._tail, shown).rstrip()
        system = [
            Message(role=role, content=list(content))
            for role, content in zip(self._system_roles, self._system_parts, strict=True)
        ]
        return [*system, Message(role="user", content=_merge_text(head, dialogue, tail))]


def _fill(pieces: list[str], shown: Mapping[str, str]) -> str:
    if len(pieces) == 1:
        return pieces[0]
    return "".join(shown[p] if i % 2 else p for i, p in enumerate(pieces))
