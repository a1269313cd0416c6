"""The rubric score of paper 3.4 for raters whose verdicts evaluation did not score.

Used for the physician panel in the agreement table: evaluation scores grader verdicts, but
nobody else turns panel verdicts into a score. The formula itself is evaluation's.
"""

from __future__ import annotations

from collections.abc import Mapping

from medrealmm.evaluate.scoring import rubric_score as weighted_score


def rubric_score(weights: Mapping[str, int], verdicts: Mapping[str, bool]) -> float | None:
    """S for one response, or None unless every criterion of the rubric has a verdict."""
    if not weights or set(weights) - set(verdicts):
        return None
    return weighted_score([(weight, verdicts[cid]) for cid, weight in weights.items()])
