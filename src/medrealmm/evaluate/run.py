"""Resumable evaluation runs: respond, grade every criterion, score. Every unit is a store row.

A rerun skips finished rows (``store.keys``) and answers finished calls from the store's LLM
cache, so ``kill -9`` and rerun completes with no finished call repeated. Calls that never came
back are stored as failed and retried on the next run; grader output that stays malformed
after its retries is a finished, failed verdict that leaves its case incomplete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from medrealmm.evaluate.cases import EvalCase, image_root, load_cases
from medrealmm.evaluate.grader import grade, grader_request
from medrealmm.evaluate.respond import respond_request
from medrealmm.evaluate.rules import grade_rule
from medrealmm.evaluate.scoring import score_case
from medrealmm.io import MissingImageError
from medrealmm.llm import LLMClient, LLMError, build_client, dialogue_parts, resolve_spec
from medrealmm.llm.types import Part
from medrealmm.runner import RunStats, run_units
from medrealmm.schema import CaseScore, CriterionKind, Instance, Response, Verdict, VerdictStatus
from medrealmm.store import DONE, FAILED, RunStore, stages

ONLINE = "online"


def verdict_key(grader: str, response_key: str, criterion_id: str) -> str:
    return f"{grader}|{response_key}|{criterion_id}"


def score_key(grader: str, response_key: str) -> str:
    return f"{grader}|{response_key}"


@dataclass(frozen=True)
class EvalSettings:
    """One evaluation: ``model`` ('online' scores the original physician reply)."""

    model: str
    images: bool = True
    k: int = 1
    grader: str = "offline"
    models_config: Path | None = None
    grader_images: bool = True
    attempts: int = 3
    limit: int | None = None
    retry_failed: bool = False  # ask again for empty replies and still-malformed verdicts


@dataclass
class EvalOutcome:
    model: str
    grader: str
    images: bool
    cases: int
    no_rubric: list[str]
    responses: RunStats
    verdicts: RunStats
    scores: list[CaseScore] = field(default_factory=list)

    @property
    def incomplete(self) -> int:
        return sum(not s.complete for s in self.scores)


class _Dialogues:
    """Dialogue parts per (instance, images), encoded once and shared by all its calls."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._memo: dict[tuple[str, bool], list[Part]] = {}

    def parts(self, instance: Instance, with_images: bool) -> list[Part]:
        key = (instance.id, with_images)
        if key not in self._memo:
            self._memo[key] = dialogue_parts(
                instance.context, image_root=self.root, with_images=with_images
            )
        return self._memo[key]


def _require_image_root(cases: Sequence[EvalCase], root: Path | None) -> None:
    if root is None and any(c.instance.image_count for c in cases):
        raise ValueError(
            f"the run store has no image root for {stages.MCCP_INSTANCE} "
            f"(meta {stages.image_root_key(stages.MCCP_INSTANCE)!r}); "
            "run with images off or record where the instance images live"
        )


def _finished(store: RunStore, stage: str, keys: Sequence[str], retry_failed: bool) -> set[str]:
    """Keys done in ``stage``; with ``retry_failed``, minus those done with a failed payload."""
    done = store.keys(stage) & set(keys)
    if not retry_failed:
        return done
    return {
        key
        for key in done
        if (store.get_raw(stage, key) or {}).get("status", VerdictStatus.OK) == VerdictStatus.OK
    }


async def _close(client: LLMClient) -> None:
    inner = getattr(client, "inner", client)
    closer = getattr(inner, "aclose", None)
    if closer is not None:
        await closer()


async def run_eval(store: RunStore, settings: EvalSettings) -> EvalOutcome:
    if settings.k < 1:
        raise ValueError("k must be at least 1")
    cases, missing = load_cases(store)
    if settings.limit is not None:
        cases = cases[: settings.limit]
    online = settings.model == ONLINE
    images = True if online else settings.images
    k = 1 if online else settings.k
    grader_spec = resolve_spec(settings.grader, settings.models_config)
    grader_images = settings.grader_images and grader_spec.vision
    spec = None if online else resolve_spec(settings.model, settings.models_config)
    if spec is not None and images and not spec.vision:
        raise ValueError(f"model {spec.name!r} is text-only (vision: false); use images off")
    model = ONLINE if spec is None else spec.name
    if (images and not online) or grader_images:
        _require_image_root(cases, image_root(store))
    dialogues = _Dialogues(image_root(store))
    targets = {
        stages.response_key(model, images, case.instance.id, sample): (case, sample)
        for case in cases
        for sample in range(k)
    }

    # -- 1. responses ---------------------------------------------------------------------
    done = _finished(store, stages.EVAL_RESPONSE, list(targets), settings.retry_failed)
    pending = [key for key in targets if key not in done]
    if spec is None:
        store.put_many(
            stages.EVAL_RESPONSE,
            (
                (
                    key,
                    Response(
                        instance_id=targets[key][0].instance.id,
                        model=ONLINE,
                        images=True,
                        text=targets[key][0].instance.target_reply,
                    ),
                )
                for key in pending
            ),
        )
        respond_stats = RunStats(done=len(pending), skipped=len(targets) - len(pending))
    else:
        respondent = build_client(spec, cache=store.cache)

        async def respond(key: str) -> None:
            case, sample = targets[key]
            instance = case.instance
            base = Response(instance_id=instance.id, model=model, images=images, sample=sample)
            try:
                request = respond_request(
                    department=instance.department,
                    context=instance.context,
                    parts=dialogues.parts(instance, images),
                    with_images=images,
                    sample=sample,
                    base_seed=spec.params.seed,
                )
                completion = await respondent.complete(request)
            except (LLMError, MissingImageError) as exc:
                failed = base.model_copy(update={"status": VerdictStatus.FAILED, "error": str(exc)})
                store.put(stages.EVAL_RESPONSE, key, failed, status=FAILED, error=str(exc))
                raise
            store.record_usage(stages.EVAL_RESPONSE, respondent.name, completion)
            text = completion.text.strip() or None
            forget = getattr(respondent, "forget", None)
            if text is None and forget is not None:
                forget(request)  # an empty reply is kept as a failure, not as a cached answer
            response = base.model_copy(
                update={
                    "text": text,
                    "is_baseline": respondent.is_baseline,
                    "status": VerdictStatus.OK if text else VerdictStatus.FAILED,
                    "error": None if text else "empty reply",
                }
            )
            store.put(stages.EVAL_RESPONSE, key, response)

        try:
            respond_stats = await run_units(
                pending,
                respond,
                description=f"respond {model} ({'img' if images else 'txt'})",
                concurrency=spec.concurrency,
                already_done=len(targets) - len(pending),
            )
        finally:
            await _close(respondent)

    # -- 2. verdicts ----------------------------------------------------------------------
    grader = grader_spec.name
    units = {}
    for rkey, (case, _) in targets.items():
        response = store.get(stages.EVAL_RESPONSE, rkey, Response)
        if response is None or response.text is None:
            continue
        for criterion in case.rubric.criteria:
            units[verdict_key(grader, rkey, criterion.id)] = (case, response.text, criterion)
    done = _finished(store, stages.EVAL_VERDICT, list(units), settings.retry_failed)
    pending = [key for key in units if key not in done]
    judge = build_client(grader_spec, cache=store.cache)

    async def assess(key: str) -> None:
        case, reply, criterion = units[key]
        if criterion.kind is CriterionKind.RULE:
            store.put(stages.EVAL_VERDICT, key, grade_rule(criterion, reply))
            return
        request = grader_request(
            department=case.instance.department,
            context=case.instance.context,
            parts=dialogues.parts(case.instance, grader_images),
            criterion=criterion,
            reply=reply,
        )
        verdict, completions, retryable = await grade(
            judge, request, criterion, attempts=settings.attempts
        )
        for completion in completions:
            store.record_usage(stages.EVAL_VERDICT, judge.name, completion)
        status = FAILED if retryable else DONE
        store.put(stages.EVAL_VERDICT, key, verdict, status=status, error=verdict.error)
        if verdict.status is VerdictStatus.FAILED:
            raise RuntimeError(f"criterion {criterion.id} not graded: {verdict.error}")

    try:
        verdict_stats = await run_units(
            pending,
            assess,
            description=f"grade {model} with {grader}",
            concurrency=grader_spec.concurrency,
            already_done=len(units) - len(pending),
        )
    finally:
        await _close(judge)

    # -- 3. scores ------------------------------------------------------------------------
    scores: list[tuple[str, CaseScore]] = []
    for rkey, (case, sample) in targets.items():
        verdicts: dict[str, Verdict] = {}
        for criterion in case.rubric.criteria:
            raw = store.get_raw(stages.EVAL_VERDICT, verdict_key(grader, rkey, criterion.id))
            if raw is not None:
                verdicts[criterion.id] = Verdict.model_validate(raw)
        scores.append(
            (
                score_key(grader, rkey),
                score_case(
                    instance_id=case.instance.id,
                    model=model,
                    images=images,
                    sample=sample,
                    criteria=case.rubric.criteria,
                    verdicts=verdicts,
                    rubric_approved=case.approved,
                ),
            )
        )
    store.put_many(stages.EVAL_SCORE, scores)
    return EvalOutcome(
        model=model,
        grader=grader,
        images=images,
        cases=len(cases),
        no_rubric=missing,
        responses=respond_stats,
        verdicts=verdict_stats,
        scores=[score for _, score in scores],
    )


def run_evaluation(store: RunStore, settings: EvalSettings) -> EvalOutcome:
    return asyncio.run(run_eval(store, settings))


# -- reading results back ---------------------------------------------------------------------
def graders(store: RunStore) -> list[str]:
    return sorted({key.split("|", 1)[0] for key in store.keys(stages.EVAL_SCORE)})


def load_scores(store: RunStore, grader: str) -> list[CaseScore]:
    prefix = f"{grader}|"
    keys = sorted(k for k in store.keys(stages.EVAL_SCORE) if k.startswith(prefix))
    found = (store.get(stages.EVAL_SCORE, key, CaseScore) for key in keys)
    return [score for score in found if score is not None]


def baseline_models(store: RunStore) -> set[str]:
    return {r.model for r in store.iter(stages.EVAL_RESPONSE, Response) if r.is_baseline}
