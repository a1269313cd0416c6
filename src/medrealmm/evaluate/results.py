"""Reading an evaluation's results back from the run store."""

from __future__ import annotations

from medrealmm.schema import CaseScore, Response
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ScoreKey, VerdictKey


def verdict_key(grader: str, response_key: str, criterion_id: str) -> str:
    return VerdictKey(grader, response_key, criterion_id).format()


def score_key(grader: str, response_key: str) -> str:
    return ScoreKey(grader, response_key).format()


def graders(store: RunStore) -> list[str]:
    return sorted({ScoreKey.parse(key).rater for key in store.keys(stages.EVAL_SCORE)})


def load_scores(store: RunStore, grader: str) -> list[CaseScore]:
    prefix = f"{grader}|"
    keys = sorted(k for k in store.keys(stages.EVAL_SCORE) if k.startswith(prefix))
    found = (store.get(stages.EVAL_SCORE, key, CaseScore) for key in keys)
    return [score for score in found if score is not None]


def baseline_models(store: RunStore) -> set[str]:
    return {r.model for r in store.iter(stages.EVAL_RESPONSE, Response) if r.is_baseline}
