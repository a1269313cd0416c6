"""The grader's prompt, rendered once per reply and filled per criterion, is byte for byte the
full jinja render of its template, for every weight and for awkward text."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from medrealmm.evaluate.grader import GraderPrompt, grader_request, images_withheld
from medrealmm.evaluate.respond import PACKAGE
from medrealmm.llm import dialogue_messages, dialogue_parts
from medrealmm.llm.dialogue import PresetMessages, slot_marker
from medrealmm.llm.types import Part
from medrealmm.schema import Criterion, Event, ImageOrigin, ImageRef, Sender
from medrealmm.schema.rubric import MAX_WEIGHT, MIN_WEIGHT

AWKWARD = [
    "",
    " ",
    "询问病史",
    "  前后有空白\n",
    '{{ weight }} {% if x %}"引号"\\n<b>&amp;</b>',
    "\u0000slot:weight\u0000 与 \u0000slot:criterion\u0000",
    "换行\n\n第二段\t",
]


def _dialogues(root: Path) -> list[list[Part]]:
    (root / "a.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    t = datetime(2025, 1, 1)
    plain = [Event(sender=Sender.PATIENT, timestamp=t, content="脚痒两周 {{ x }}")]
    pictured = [
        Event(sender=Sender.PATIENT, timestamp=t, content="脚痒"),
        Event(
            sender=Sender.PATIENT,
            timestamp=t,
            content="照片",
            images=[ImageRef(path="a.png", origin=ImageOrigin.PATIENT)],
        ),
    ]
    return [
        [],
        dialogue_parts(plain, image_root=None),
        dialogue_parts(pictured, image_root=None),
        dialogue_parts(pictured, image_root=root),
    ]


def _full(department: str, reply: str, parts: list[Part], criterion: Criterion) -> list:
    """The messages of the full render, as one-off callers get them."""
    return grader_request(
        department=department, context=[], parts=parts, criterion=criterion, reply=reply
    ).messages


@pytest.mark.parametrize("department", ["皮肤科", "", "儿科 {{ }}\n"])
@pytest.mark.parametrize("reply", ["您好，考虑湿疹。", "", '  "回复" {% raw %}\n'])
def test_filled_prompt_is_the_full_render(tmp_path: Path, department: str, reply: str) -> None:
    prompt = GraderPrompt(department, reply)
    weights = [w for w in range(MIN_WEIGHT, MAX_WEIGHT + 1) if w != 0]
    for parts in _dialogues(tmp_path):
        for i, text in enumerate(AWKWARD):
            for weight in weights[i::3]:
                # model_construct: an empty text too, which the schema refuses
                criterion = Criterion.model_construct(id="c", text=text, weight=weight)
                request = prompt.request(parts, criterion)
                assert request.messages == _full(department, reply, parts, criterion)
                assert [m.model_dump_json() for m in request.messages] == [
                    m.model_dump_json() for m in _full(department, reply, parts, criterion)
                ]
                withheld = images_withheld(parts)
                assert request.inputs == {
                    "criterion": text,
                    "weight": weight,
                    "reply": reply,
                    "images_withheld": withheld,
                }
                one = grader_request(
                    department=department, context=[], parts=parts, criterion=criterion, reply=reply
                )
                assert one.model_dump() == request.model_dump() and one.inputs == request.inputs


def test_a_nul_in_a_constant_takes_the_full_render(tmp_path: Path) -> None:
    department = "科\u0000slot:criterion\u0000室"
    prompt = GraderPrompt(department, "回复")
    criterion = Criterion(id="c", text="准则", weight=2)
    (parts, *_) = _dialogues(tmp_path)[1:]
    assert prompt.request(parts, criterion).messages == _full(department, "回复", parts, criterion)


def test_a_value_with_the_dialogue_mark_fails_as_the_full_render_does() -> None:
    criterion = Criterion(id="c", text="\u0000DIALOGUE\u0000", weight=1)
    with pytest.raises(ValueError, match="dialogue"):
        _full("科", "回复", [], criterion)
    with pytest.raises(ValueError, match="dialogue"):
        GraderPrompt("科", "回复").request([], criterion)


def test_a_slot_in_the_system_template_is_refused() -> None:
    # The respond agent's templates have no such slot: the check is on the system text, so
    # a stand-in for a variable the user template lacks is simply unused.
    preset = PresetMessages(PACKAGE, "respond", {"department": "科"}, {"x": slot_marker("x")})
    assert preset.messages([], x="unused") == dialogue_messages(
        PACKAGE, "respond", [], department="科"
    )
