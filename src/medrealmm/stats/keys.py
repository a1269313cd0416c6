"""Parse the run-store keys that evaluation and the panel write (see store/stages.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResponseKey:
    model: str
    images: bool
    instance_id: str
    sample: int


def parse_response_key(key: str) -> ResponseKey:
    """Inverse of ``stages.response_key``; model names may contain '|', the rest may not."""
    parts = key.rsplit("|", 3)
    if len(parts) != 4 or parts[1] not in ("img", "txt") or not parts[3].isdigit():
        raise ValueError(f"not a response key (model|img/txt|instance|sample): {key!r}")
    model, mode, instance_id, sample = parts
    return ResponseKey(model, mode == "img", instance_id, int(sample))


def split_scored_key(key: str) -> tuple[str, str]:
    """``grader|response key`` -> (grader, response key)."""
    rater, sep, response = key.partition("|")
    if not sep or not rater:
        raise ValueError(f"not a '<rater>|<response key>' key: {key!r}")
    return rater, response


def split_verdict_key(key: str) -> tuple[str, str, str]:
    """``rater|response key|criterion id`` -> (rater, response key, criterion id)."""
    head, sep, criterion = key.rpartition("|")
    if not sep or not criterion:
        raise ValueError(f"not a '<rater>|<response key>|<criterion>' key: {key!r}")
    rater, response = split_scored_key(head)
    return rater, response, criterion
