"""Row keys of the run store: one typed key per stage, each with ``format`` and ``parse``.

Every module that writes or reads a composite key goes through here, so a key's layout is
decided once and a malformed key fails loudly where it is read. Stage and meta names live in
``store/stages.py``; which key each stage uses is noted there.

Separators: ``|`` between fields and ``#`` before a rubric round. Model names may contain
``|`` (response keys split from the right); raters, reviewers and ids may not.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Self

SEP = "|"


def _fields(key: str, n: int, shape: str) -> list[str]:
    parts = key.split(SEP)
    if len(parts) != n or not all(parts):
        raise ValueError(f"not a {shape} key: {key!r}")
    return parts


def _plain(value: str, what: str) -> str:
    if not value or SEP in value:
        raise ValueError(f"{what} must be non-empty and contain no {SEP!r}: {value!r}")
    return value


@dataclass(frozen=True)
class InstanceKey:
    """``<consultation id>-t<t*>``: the MCCP instance cut at turn t* (``mccp.instance``)."""

    consultation_id: str
    t_star: int

    def format(self) -> str:
        return f"{self.consultation_id}-t{self.t_star}"

    @classmethod
    def parse(cls, key: str) -> Self:
        consultation_id, sep, t = key.rpartition("-t")
        if not sep or not consultation_id or not t.isdigit():
            raise ValueError(f"not an instance id (<consultation>-t<turn>): {key!r}")
        return cls(consultation_id, int(t))


@dataclass(frozen=True)
class ReviewTaskKey:
    """``<consultation>|<pass>|<round>``: one Φ_rev task (``corpus.review.task``/``decision``)."""

    consultation_id: str
    review_pass: str
    round: str

    def format(self) -> str:
        return SEP.join((self.consultation_id, self.review_pass, self.round))

    @classmethod
    def parse(cls, key: str) -> Self:
        return cls(*_fields(key, 3, "review task (<consultation>|<pass>|<round>)"))


@dataclass(frozen=True)
class ValidationKey:
    """``<reviewer>|<instance id>``: one physician's MCCP accept/reject (``mccp.validation``)."""

    reviewer: str
    instance_id: str

    def format(self) -> str:
        return f"{_plain(self.reviewer, 'reviewer')}{SEP}{self.instance_id}"

    @classmethod
    def parse(cls, key: str) -> Self:
        return cls(*_fields(key, 2, "validation (<reviewer>|<instance>)"))


@dataclass(frozen=True)
class RoundKey:
    """``<instance id>#<round:02d>``: one rubric round and its feedback (``rubric.round``)."""

    instance_id: str
    round: int

    def format(self) -> str:
        return f"{self.instance_id}#{self.round:02d}"

    @classmethod
    def parse(cls, key: str) -> Self:
        instance_id, sep, number = key.rpartition("#")
        if not sep or not instance_id or not number.isdigit():
            raise ValueError(f"not a rubric round key (<instance>#<round>): {key!r}")
        return cls(instance_id, int(number))


@dataclass(frozen=True)
class ResponseKey:
    """``<model>|img/txt|<instance id>|<sample>``: one reply (``eval.response``)."""

    model: str
    images: bool
    instance_id: str
    sample: int

    def format(self) -> str:
        mode = "img" if self.images else "txt"
        return SEP.join((self.model, mode, self.instance_id, str(self.sample)))

    @classmethod
    def parse(cls, key: str) -> Self:
        """Parsed once per key and remembered: a report asks again for every criterion."""
        return _parse_response(cls, key)  # type: ignore[return-value]

    @staticmethod
    def split(key: str) -> tuple[str, bool, str, int]:
        """``parse``'s fields (model, images, instance id, sample) or its error, neither
        remembered nor built: a report splits every scored reply's key once."""
        model, mode, instance_id, sample = _response_parts(key)
        return model, mode == "img", instance_id, int(sample)


def _response_parts(key: str) -> list[str]:
    parts = key.rsplit(SEP, 3)
    if len(parts) != 4 or parts[1] not in ("img", "txt") or not parts[3].isdigit():
        raise ValueError(f"not a response key (model|img/txt|instance|sample): {key!r}")
    return parts


@functools.lru_cache(maxsize=1 << 17)
def _parse_response(cls: type[ResponseKey], key: str) -> ResponseKey:
    model, mode, instance_id, sample = _response_parts(key)
    return cls(model, mode == "img", instance_id, int(sample))


@dataclass(frozen=True)
class ScoreKey:
    """``<rater>|<response key>``: one case score (``eval.score``)."""

    rater: str
    response: str

    def format(self) -> str:
        return f"{_plain(self.rater, 'rater')}{SEP}{self.response}"

    @classmethod
    def parse(cls, key: str) -> Self:
        rater, sep, response = key.partition(SEP)
        if not sep or not rater or not response:
            raise ValueError(f"not a '<rater>|<response key>' key: {key!r}")
        return cls(rater, response)


@dataclass(frozen=True)
class VerdictKey:
    """``<rater>|<response key>|<criterion id>``: one criterion verdict by an LLM judge
    (``eval.verdict``) or a physician (``panel.verdict``)."""

    rater: str
    response: str
    criterion_id: str

    def format(self) -> str:
        return SEP.join((_plain(self.rater, "rater"), self.response, self.criterion_id))

    @classmethod
    def parse(cls, key: str) -> Self:
        head, sep, criterion = key.rpartition(SEP)
        if not sep or not criterion:
            raise ValueError(f"not a '<rater>|<response key>|<criterion>' key: {key!r}")
        scored = ScoreKey.parse(head)
        return cls(scored.rater, scored.response, criterion)


def usage_label(stage: str) -> str:
    """The one rule for LLM usage rows: calls are counted under the stage their results are
    written to (``corpus.privacy``, ``deid.record``, ``mccp.instance``, ``rubric.round``,
    ``eval.response``, ``eval.verdict``), so cost reads straight off the stage table."""
    return stage
