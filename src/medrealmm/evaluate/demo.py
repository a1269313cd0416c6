"""The evaluation step of the offline demo: baseline (images on and off) and the online reply."""

from __future__ import annotations

from medrealmm.evaluate.cases import load_eval_cases
from medrealmm.evaluate.results import load_results
from medrealmm.evaluate.run import ONLINE, EvalSettings, run_evaluation
from medrealmm.store import RunStore


def evaluate_demo(store: RunStore) -> list[str]:
    """Score every instance that has a rubric with the offline grader; one summary line."""
    cases, missing = load_eval_cases(store)
    if not cases:
        return [f"evaluate: no instances with a rubric yet ({len(missing)} without)"]
    runs = [
        EvalSettings(model="offline", images=True),
        EvalSettings(model="offline", images=False),
        EvalSettings(model=ONLINE),
    ]
    outcomes = [run_evaluation(store, settings) for settings in runs]
    first = outcomes[0]
    rows = load_results(store, first.grader).summary()
    parts = []
    for row in rows:
        label = f"{row.model}{'' if row.model == ONLINE else ' img' if row.images else ' txt'}"
        shown = "incomplete" if row.score is None else f"{100 * row.score:.1f}"
        parts.append(f"{label} {shown}")
    unapproved = max(row.unapproved_rubrics for row in rows)
    return [
        f"evaluate (grader {first.grader}, baseline): {first.cases} instances, "
        + ", ".join(parts)
        + f"; {unapproved} rubrics unapproved"
    ]
