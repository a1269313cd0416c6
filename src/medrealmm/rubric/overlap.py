"""Flag criteria worded too closely to y_orig, so physicians generalise or drop them
(paper 3.3: the online reply initialises criteria, it must not become a reference answer)."""

from __future__ import annotations

import re

from medrealmm.rubric.settings import RubricSettings
from medrealmm.schema import Criterion, CriterionKind, Rubric

OVERLAP_TAG = "reference_overlap"
_NOISE = re.compile(r"[\s\W_]+", re.UNICODE)


def char_ngrams(text: str, n: int) -> set[str]:
    compact = _NOISE.sub("", text)
    if len(compact) < n:
        return {compact} if compact else set()
    return {compact[i : i + n] for i in range(len(compact) - n + 1)}


def reference_overlap(criterion_text: str, reference: str, n: int) -> float:
    """Share of the criterion's character n-grams that also occur in the reference reply."""
    grams = char_ngrams(criterion_text, n)
    if not grams:
        return 0.0
    return len(grams & char_ngrams(reference, n)) / len(grams)


def overlap_scores(rubric: Rubric, reference: str, settings: RubricSettings) -> dict[str, float]:
    return {
        c.id: round(reference_overlap(c.text, reference, settings.overlap_n), 3)
        for c in rubric.criteria
        if c.kind is CriterionKind.LLM
    }


def flag_reference_overlap(rubric: Rubric, reference: str, settings: RubricSettings) -> Rubric:
    """The rubric with ``reference_overlap`` tags set exactly on the over-threshold criteria."""
    scores = overlap_scores(rubric, reference, settings)
    criteria: list[Criterion] = []
    for criterion in rubric.criteria:
        tags = [t for t in criterion.tags if t != OVERLAP_TAG]
        if scores.get(criterion.id, 0.0) >= settings.overlap_threshold:
            tags.append(OVERLAP_TAG)
        criteria.append(criterion.model_copy(update={"tags": tags}))
    return rubric.model_copy(update={"criteria": criteria})
