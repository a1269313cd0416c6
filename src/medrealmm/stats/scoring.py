"""The rubric score of paper 3.4, for raters whose verdicts were not scored by evaluation.

Used for the physician panel in the agreement table: evaluation scores grader verdicts, but
nobody else turns panel verdicts into a score.
"""

from __future__ import annotations

from collections.abc import Mapping


def rubric_score(weights: Mapping[str, int], verdicts: Mapping[str, bool]) -> float | None:
    """S = clip(sum w_j v_j / sum max(w_j, 0), 0, 1); None unless every criterion has a verdict.

    A rubric of penalties only scores 1 when none is triggered, as evaluation scores it.
    """
    if not weights or set(weights) - set(verdicts):
        return None
    positive = sum(max(w, 0) for w in weights.values())
    if positive <= 0:  # only penalties to avoid: 1 when none is triggered, else 0
        return 0.0 if any(verdicts[cid] for cid in weights) else 1.0
    raw = sum(w for cid, w in weights.items() if verdicts[cid]) / positive
    return min(max(raw, 0.0), 1.0)
