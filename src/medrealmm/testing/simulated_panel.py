"""A simulated physician panel: criterion labels with a documented, deterministic noise model.

For the demo's meta-evaluation section and for tests; never present its numbers as evidence
about a grader. The noise model, per (reply, LLM-graded criterion) of one evaluated condition:

1. a latent consensus ("what a careful physician would say") is the primary grader's verdict,
   flipped with probability ``GRADER_ERROR[polarity]`` (the grader's own error);
2. each physician's label is the consensus, flipped with that physician's ``flip`` rate.

Every coin is ``sha256(seed|what|reply|criterion)`` read as a number in [0, 1), so the labels
depend on nothing but the store's contents and the seed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from medrealmm.evaluate.results import load_results
from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.schema import CriterionKind, Verdict
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ResponseKey, VerdictKey

#: physician -> probability of flipping the consensus
PHYSICIANS = {"医生甲": 0.05, "医生乙": 0.08, "医生丙": 0.12}
#: the grader's error against the consensus, by the criterion weight's sign
GRADER_ERROR = {"positive": 0.15, "negative": 0.08}


def coin(seed: int, *parts: str) -> float:
    digest = hashlib.sha256("|".join((str(seed), *parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def simulate_panel_labels(
    store: RunStore, *, model: str | None = None, images: bool = True, seed: int = 0
) -> list[dict[str, Any]]:
    """Label-file lines (see ``medrealmm.evaluate.meta_eval``) for the sample-0 replies of
    ``model`` (default: the first non-Online model the primary grader scored with images)."""
    results = load_results(store)
    grader = results.grader
    if model is None:
        models = sorted({r.model for r in results.headline if r.images == images})
        model = next((m for m in models if m != "online"), None)
    rubrics = evaluation_rubrics(store)
    verdicts = {
        (VerdictKey.parse(k).response, v.criterion_id): v.value
        for k, v in store.items(stages.EVAL_VERDICT, Verdict)
        if k.startswith(f"{grader}|") and v.value is not None
    }
    lines = []
    for instance_id, rubric in sorted(rubrics.items()):
        response = ResponseKey(model or "", images, instance_id, 0).format()
        for criterion in rubric.criteria:
            graded = verdicts.get((response, criterion.id))
            if criterion.kind is CriterionKind.RULE or graded is None:
                continue
            polarity = "positive" if criterion.weight > 0 else "negative"
            consensus = graded
            if coin(seed, "grader", response, criterion.id) < GRADER_ERROR[polarity]:
                consensus = not consensus
            for physician, flip in PHYSICIANS.items():
                met = consensus
                if coin(seed, physician, response, criterion.id) < flip:
                    met = not met
                lines.append(
                    {
                        "instance_id": instance_id,
                        "model": model,
                        "images": images,
                        "sample": 0,
                        "criterion_id": criterion.id,
                        "physician": physician,
                        "met": met,
                    }
                )
    return lines


def write_panel_labels(store_path: Path | str, out: Path | str, *, seed: int = 0) -> int:
    import json

    with RunStore(store_path, create=False) as store:
        lines = simulate_panel_labels(store, seed=seed)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    Path(out).write_text(text, encoding="utf-8")
    return len(lines)
