"""Turn the rubric review form into structured feedback items (``medrealmm.rubric``'s types).

Per criterion ``c``: ``weight:c`` (edited weight), ``action:c`` (keep / remove /
reference_specific / split), ``text:c`` (suggested rewording), ``part:c:N:text`` and
``part:c:N:weight`` (split parts), ``comment:c``. New criteria: ``new:N:type|text|weight|comment``.
A form with nothing changed yields no items; approval is its own button, never an accident.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from medrealmm.rubric import FeedbackItem, FeedbackType, SplitPart
from medrealmm.schema import Rubric

SPLIT_SLOTS = 3
NEW_SLOTS = 2
ACTIONS = {
    "": None,
    "remove": FeedbackType.REMOVE_CRITERION,
    "reference_specific": FeedbackType.REFERENCE_SPECIFIC,
    "split": FeedbackType.SPLIT_CRITERION,
}
NEW_TYPES = {
    "missing_criterion": FeedbackType.MISSING_CRITERION,
    "unsafe_omission": FeedbackType.UNSAFE_OMISSION,
}


class FormError(ValueError):
    """A form field that cannot become feedback; ``field`` is the input's name."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


def _text(form: Mapping[str, str], name: str) -> str:
    return (form.get(name) or "").strip()


def _int(form: Mapping[str, str], name: str) -> int | None:
    raw = _text(form, name)
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise FormError(name, f"weight must be a whole number, not {raw!r}") from None


def _item(field: str, **values: object) -> FeedbackItem:
    try:
        return FeedbackItem.model_validate(values)
    except ValidationError as exc:
        raise FormError(field, exc.errors()[0]["msg"]) from None


def parse_feedback_form(rubric: Rubric, form: Mapping[str, str]) -> list[FeedbackItem]:
    items: list[FeedbackItem] = []
    for criterion in rubric.criteria:
        cid = criterion.id
        action_name = _text(form, f"action:{cid}")
        if action_name not in ACTIONS:
            raise FormError(f"action:{cid}", f"unknown action {action_name!r}")
        action = ACTIONS[action_name]
        comment = _text(form, f"comment:{cid}")
        weight = _int(form, f"weight:{cid}")
        if action is FeedbackType.SPLIT_CRITERION:
            items.append(
                _item(
                    f"action:{cid}",
                    type=action,
                    criterion_id=cid,
                    parts=_split_parts(form, cid),
                    comment=comment,
                )
            )
            continue
        if action is FeedbackType.REMOVE_CRITERION:
            items.append(_item(f"action:{cid}", type=action, criterion_id=cid, comment=comment))
            continue
        if weight is not None and weight != criterion.weight:
            items.append(
                _item(
                    f"weight:{cid}",
                    type=FeedbackType.WRONG_WEIGHT,
                    criterion_id=cid,
                    weight=weight,
                    comment=comment if action is None else "",
                )
            )
        if action is FeedbackType.REFERENCE_SPECIFIC:
            items.append(
                _item(
                    f"action:{cid}",
                    type=action,
                    criterion_id=cid,
                    text=_text(form, f"text:{cid}") or None,
                    comment=comment,
                )
            )
    for slot in range(1, NEW_SLOTS + 1):
        text = _text(form, f"new:{slot}:text")
        if not text:
            continue
        kind = NEW_TYPES.get(_text(form, f"new:{slot}:type") or "missing_criterion")
        if kind is None:
            raise FormError(f"new:{slot}:type", "choose missing criterion or unsafe omission")
        items.append(
            _item(
                f"new:{slot}:weight",
                type=kind,
                text=text,
                weight=_int(form, f"new:{slot}:weight"),
                comment=_text(form, f"new:{slot}:comment"),
            )
        )
    return items


def _split_parts(form: Mapping[str, str], cid: str) -> list[SplitPart]:
    parts: list[SplitPart] = []
    for slot in range(1, SPLIT_SLOTS + 1):
        text = _text(form, f"part:{cid}:{slot}:text")
        weight = _int(form, f"part:{cid}:{slot}:weight")
        if not text and weight is None:
            continue
        if not text or weight is None:
            raise FormError(f"part:{cid}:{slot}:text", "a split part needs both text and weight")
        try:
            parts.append(SplitPart(text=text, weight=weight))
        except ValidationError as exc:
            raise FormError(f"part:{cid}:{slot}:weight", exc.errors()[0]["msg"]) from None
    if len(parts) < 2:
        raise FormError(f"part:{cid}:1:text", "a split needs at least two parts")
    return parts
