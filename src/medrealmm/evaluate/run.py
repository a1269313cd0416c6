"""Resumable evaluation runs: respond, grade every criterion, score. Every unit is a store row.

A rerun skips finished rows (``store.keys``) and answers finished calls from the store's LLM
cache, so ``kill -9`` and rerun completes with no finished call repeated. Calls that never came
back are stored as failed and retried on the next run; grader output that stays malformed
after its retries is a finished, failed verdict that leaves its case incomplete.

A verdict given to a criterion whose text, weight or rule has since changed is not finished:
after a rubric is refined, a rerun grades only the changed criteria and rescores every case
against the applicable rubric. Each evaluation is one ``EvalSpec`` row (provenance.py).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from medrealmm.evaluate.canary import check_canary
from medrealmm.evaluate.cases import EvalCase, load_eval_cases, pixel_root
from medrealmm.evaluate.grader import grade, grade_grouped
from medrealmm.evaluate.panel import Panel, panel_verdict
from medrealmm.evaluate.provenance import (
    GROUPED,
    PER_CRITERION,
    EvalSpec,
    GradingMode,
    ModelRef,
    UsageTotals,
    benchmark_of,
    load_specs,
    open_spec,
    prompt_hashes,
    rater_name,
    recorded_settings,
    save_spec,
)
from medrealmm.evaluate.requests import CaseRequests
from medrealmm.evaluate.results import record_prices, score_key, verdict_key
from medrealmm.evaluate.scoring import DEFAULT_ABSTAIN, AbstainPolicy, refusal_score, score_case
from medrealmm.io import MissingImageError
from medrealmm.llm import (
    Completion,
    LLMClient,
    LLMError,
    ModelSpec,
    build_client,
    display_name,
    resolve_spec,
    send_pixels,
)
from medrealmm.llm.egress import guard_unmasked
from medrealmm.llm.probe import with_capabilities
from medrealmm.llm.reach import check_endpoint
from medrealmm.mccp import unmasked_instances
from medrealmm.release.layout import canary
from medrealmm.rubric.rules import grade_rule
from medrealmm.runner import RunStats, run_async, run_units, units_ahead
from medrealmm.schema import (
    CaseScore,
    Criterion,
    CriterionKind,
    Instance,
    ReplyLatency,
    Response,
    Verdict,
    VerdictStatus,
)
from medrealmm.stats.cases import PRIMARY_GRADER_META
from medrealmm.store import DONE, FAILED, RunStore, stages
from medrealmm.store.keys import SEP, ResponseKey, VerdictKey, usage_label

ONLINE = "online"


@dataclass(frozen=True)
class EvalSettings:
    """One evaluation: ``model`` ('online' scores the original physician reply)."""

    model: str
    images: bool = True
    #: k, grader_images and abstain: None (left out) takes what the evaluation's spec
    #: recorded on an earlier run, else the default (provenance.RECORDED_SETTINGS).
    k: int | None = None
    grader: str = "offline"
    models_config: Path | None = None
    grader_images: bool | None = None
    attempts: int = 3
    limit: int | None = None
    retry_failed: bool = False  # ask again for permanent failures and still-malformed verdicts
    # Replies made elsewhere (instance id -> text) scored as row ``model``; see imported.py.
    replies: Mapping[str, str] | None = None
    replies_sha256: str | None = None
    abstain: AbstainPolicy | None = None
    grading: GradingMode = PER_CRITERION
    #: Several graders whose verdicts make one derived panel verdict (evaluate.panel).
    panel: Panel | None = None


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
    eval_id: str = ""
    members: list[EvalOutcome] = field(default_factory=list)  # a panel's graders
    abstain: AbstainPolicy = DEFAULT_ABSTAIN  # the policy the scores were made with

    @property
    def incomplete(self) -> int:
        return sum(not s.complete for s in self.scores)

    @property
    def refusals(self) -> int:
        """Replies in which the model declined; each is scored 0."""
        return sum(s.refused for s in self.scores)


class _Requests:
    """``CaseRequests`` per instance, shared by all its calls (k replies, every criterion),
    so each image is encoded and hashed once per case (evaluate.requests).

    Bounded: units run in case order, so the most recent cases are the ones still in use,
    and a long run does not hold every case's images in memory.
    """

    def __init__(self, root: Path | None, keep: int = 64) -> None:
        self.root = root
        self.keep = keep
        self._memo: OrderedDict[str, CaseRequests] = OrderedDict()

    def of(self, instance: Instance) -> CaseRequests:
        found = self._memo.get(instance.id)
        if found is not None:
            self._memo.move_to_end(instance.id)
            return found
        found = self._memo[instance.id] = CaseRequests(instance, self.root)
        if len(self._memo) > self.keep:
            self._memo.popitem(last=False)
        return found


@dataclass
class _Plan:
    """Everything the three steps share, resolved once from the settings."""

    store: RunStore
    settings: EvalSettings
    respondent: ModelSpec | None  # None: the online reply
    judge: ModelSpec
    model: str
    images: bool
    grader_images: bool
    requests: _Requests
    targets: dict[str, tuple[EvalCase, int]]  # response key -> (case, sample)
    spec: EvalSpec
    #: The name its verdicts and scores are stored under: the grader's, marked when grouped.
    rater: str
    #: (rubric version, criterion versions by id) by id of the case: the digests hash the
    #: criteria, so a case's grading computes them once, from one dump, not once per verdict.
    versions: dict[int, tuple[str, dict[str, str]]] = field(default_factory=dict)

    def versions_of(self, case: EvalCase, criterion: Criterion) -> tuple[str, str]:
        """(rubric version, criterion version) of a criterion of ``case.rubric``."""
        found = self.versions.get(id(case))
        if found is None:
            found = self.versions[id(case)] = case.rubric.versions()
        return found[0], found[1][criterion.id]

    def usage_name(self, stage: str, client: LLMClient) -> str:
        """Whom a call's usage is counted under: a grader's calls by grading mode (grouped
        calls are a measurement of their own, ``NAME[grouped]``), never summed together."""
        if stage == stages.EVAL_VERDICT:
            return rater_name(client.name, self.settings.grading)
        return client.name

    def record(self, stage: str, client: LLMClient, completion: Completion) -> None:
        self.store.record_calls(usage_label(stage), self.usage_name(stage, client), [completion])
        self.spec.record(stage, completion, respondent=stage == stages.EVAL_RESPONSE)


def kept_settings(
    store: RunStore,
    settings: EvalSettings,
    model: str,
    images: bool,
    judge: ModelSpec,
    respondent: ModelSpec | None,
) -> EvalSettings:
    """``settings`` with k, grader images and abstain policy as this evaluation recorded them
    (``recorded_settings``: one asked for that differs is refused). What is compared is what
    takes effect: pixels a text-only grader would not get are not asked for, and a reply
    not generated here (online, imported) has one sample."""
    generated = settings.replies is None and model != ONLINE
    asked = {
        "grader_images": None
        if settings.grader_images is None
        else send_pixels(judge, settings.grader_images),
        "k": settings.k if generated else 1,
        "abstain": None if settings.abstain is None else AbstainPolicy(settings.abstain),
        "model.params": None if respondent is None else ModelRef.from_spec(respondent).params,
        "grader.params": ModelRef.from_spec(judge).params,
    }
    if asked["k"] is not None and asked["k"] < 1:
        raise ValueError("k must be at least 1")
    kept = recorded_settings(store, model, images, judge.name, settings.grading, asked)
    return replace(
        settings,
        k=kept["k"],
        grader_images=send_pixels(judge, kept["grader_images"]),
        abstain=kept["abstain"],
    )


def _plan(store: RunStore, settings: EvalSettings, cases: Sequence[EvalCase]) -> _Plan:
    imported = settings.replies is not None
    online = settings.model == ONLINE and not imported
    respondent = (
        None if online or imported else resolve_spec(settings.model, settings.models_config)
    )
    judge = resolve_spec(settings.grader, settings.models_config)
    images = online or settings.images  # the physician saw the images
    model = settings.model if respondent is None else respondent.name
    # Before anything is written or asked: a setting this evaluation recorded is kept, and
    # one that conflicts with it is refused (capabilities as an earlier probe stored them).
    settings = kept_settings(
        store, settings, model, images, with_capabilities(judge, store, ask=False), respondent
    )
    record_prices(store, (respondent, judge))
    for role, spec in (("respondent", respondent), ("grader", judge)):
        unmasked = unmasked_instances(store, f"eval {role}")
        if spec is not None and unmasked is not None:
            guard_unmasked(spec, unmasked)
    for spec in (respondent, judge):
        if spec is not None:
            check_endpoint(spec)
    # What each server can do, probed once per endpoint and run store: a text-only grader
    # gets no image parts, and the structured mode that works is used from the first call.
    judge = with_capabilities(judge, store)
    respondent = None if respondent is None else with_capabilities(respondent, store)
    if respondent is not None and images and not send_pixels(respondent, images):
        # The images condition is what is measured: a text-only model must not stand in.
        raise ValueError(f"model {respondent.name!r} is text-only (vision: false); use images off")
    grader_images, k = send_pixels(judge, bool(settings.grader_images)), settings.k or 1
    root = pixel_root(store, cases, (images and not online) or grader_images)
    targets = {
        stages.response_key(model, images, case.instance.id, sample): (case, sample)
        for case in cases
        for sample in range(k)
    }
    spec = open_spec(
        store,
        kind="imported" if imported else "online" if online else "generated",
        label=model,
        model=None if respondent is None else ModelRef.from_spec(respondent),
        grader=ModelRef.from_spec(judge),
        images=images,
        grader_images=grader_images,
        k=k,
        prompts=prompt_hashes(),
        benchmark=benchmark_of(store),
        imported_from=settings.replies_sha256,
        abstain=settings.abstain or DEFAULT_ABSTAIN,
        grading=settings.grading,
    )
    return _Plan(
        store,
        settings,
        respondent,
        judge,
        model,
        images,
        grader_images,
        _Requests(root),
        targets,
        spec,
        rater_name(judge.name, settings.grading),
    )


def _finished(store: RunStore, stage: str, keys: Sequence[str], retry_failed: bool) -> set[str]:
    """Keys done in ``stage``; with ``retry_failed``, minus those done with a failed payload."""
    done = store.keys(stage) & set(keys)
    if not retry_failed:
        return done
    return {
        key
        for key in done
        if (store.get_raw(stage, key) or {}).get("status", VerdictStatus.OK)
        != VerdictStatus.FAILED  # "cannot assess" is an answer, not a failure to ask again
    }


def _from_instances(replies: Sequence[tuple[str, Response]]) -> dict[str, list[tuple[str, str]]]:
    """Lineage: a reply is made from its instance (a changed instance drops it)."""
    return {key: [(stages.MCCP_INSTANCE, reply.instance_id)] for key, reply in replies}


def _from_response(key: str) -> list[tuple[str, str]]:
    """Lineage: a verdict goes with the instance of the reply it grades (not with the reply's
    row, which a new evaluation restamps without changing what was graded)."""
    response = ResponseKey.parse(VerdictKey.parse(key).response)
    return [(stages.MCCP_INSTANCE, response.instance_id)]


def _store_online_replies(plan: _Plan, pending: list[str]) -> RunStats:
    replies = []
    for key in pending:
        instance = plan.targets[key][0].instance
        reply = Response(
            instance_id=instance.id,
            model=ONLINE,
            text=instance.target_reply,
            eval_id=plan.spec.eval_id,
        )
        replies.append((key, reply))
    plan.store.put_many(stages.EVAL_RESPONSE, replies, sources=_from_instances(replies))
    return RunStats(done=len(pending), skipped=len(plan.targets) - len(pending))


def _store_imported_replies(plan: _Plan, replies: Mapping[str, str]) -> RunStats:
    """Replies from a file; one whose text changed since the last import loses its verdicts,
    and an instance the file leaves out is a failed reply (its case shows as incomplete)."""
    store, changed, kept = plan.store, [], 0
    for key, (case, _) in plan.targets.items():
        text = replies.get(case.instance.id)
        stored = store.get_raw(stages.EVAL_RESPONSE, key) or {}
        if stored.get("text") == text and stored.get("eval_id") == plan.spec.eval_id:
            kept += 1
            continue
        reply = Response(
            instance_id=case.instance.id,
            model=plan.model,
            images=plan.images,
            text=text,
            status=VerdictStatus.OK if text else VerdictStatus.FAILED,
            error=None if text else "no reply for this instance in the imported file",
            eval_id=plan.spec.eval_id,
        )
        changed.append((key, reply))
        if stored.get("text") != text:
            for criterion in case.rubric.criteria:
                store.delete(stages.EVAL_VERDICT, verdict_key(plan.rater, key, criterion.id))
    store.put_many(stages.EVAL_RESPONSE, changed, sources=_from_instances(changed))
    missing = sum(1 for case, _ in plan.targets.values() if case.instance.id not in replies)
    return RunStats(done=len(changed), skipped=kept, failed=missing)


async def _respond(plan: _Plan) -> RunStats:
    """Step 1: one reply per (instance, sample)."""
    store = plan.store
    done = _finished(store, stages.EVAL_RESPONSE, list(plan.targets), plan.settings.retry_failed)
    pending = [key for key in plan.targets if key not in done]
    if plan.settings.replies is not None:
        return _store_imported_replies(plan, plan.settings.replies)
    spec = plan.respondent
    if spec is None:
        return _store_online_replies(plan, pending)
    client = build_client(spec, cache=store.cache)

    async def respond(key: str) -> None:
        case, sample = plan.targets[key]
        instance = case.instance
        base = Response(
            instance_id=instance.id,
            model=plan.model,
            images=plan.images,
            sample=sample,
            eval_id=plan.spec.eval_id,
        )
        try:
            request = plan.requests.of(instance).respond(
                with_images=plan.images, sample=sample, base_seed=spec.params.seed
            )
            completion = await client.complete(request)
        except (LLMError, MissingImageError) as exc:
            failed = base.model_copy(update={"status": VerdictStatus.FAILED, "error": str(exc)})
            # A permanent failure (4xx, unsupported, context length) is finished: a plain rerun
            # would only get the same answer; --retry-failed asks again.
            status = DONE if getattr(exc, "permanent", False) else FAILED
            store.put(stages.EVAL_RESPONSE, key, failed, status=status, error=str(exc))
            if isinstance(exc, LLMError):
                store.record_calls(
                    usage_label(stages.EVAL_RESPONSE), client.name, failed_attempts=exc.attempts
                )
            raise
        plan.record(stages.EVAL_RESPONSE, client, completion)
        # An empty reply is the model's reply: graded (it meets no positive criterion), never
        # dropped from the mean. A cut reply is graded as written, flagged. A refusal (the
        # server says the model declined) is kept as such and scored 0 without grading.
        text = completion.text.strip() or (completion.refusal or "").strip()
        response = base.model_copy(
            update={
                "text": text,
                "is_baseline": client.is_baseline,
                "truncated": completion.truncated,
                "latency": ReplyLatency(
                    total_s=completion.latency_s,
                    first_token_s=completion.first_token_s,
                    first_token_note=_first_token_note(completion),
                    output_tokens=completion.usage.completion_tokens,
                    endpoint=urlsplit(spec.base_url).netloc if spec.base_url else "",
                    concurrency=spec.concurrency,
                ),
                "refused": completion.refused,
            }
        )
        store.put(
            stages.EVAL_RESPONSE, key, response, sources=_from_instances([(key, response)])[key]
        )

    try:
        return await run_units(
            pending,
            respond,
            description=f"respond {plan.model} ({'img' if plan.images else 'txt'})",
            concurrency=spec.concurrency,
            ahead=units_ahead(spec.concurrency),
            already_done=len(plan.targets) - len(pending),
        )
    finally:
        await client.aclose()


def _first_token_note(completion: Completion) -> str | None:
    """Why a reply has no time to first token; a reply never lacks one silently (a cached
    reply from before replies streamed carries no note of its own)."""
    if completion.first_token_s is not None:
        return None
    return completion.first_token_note or "not streamed: no time to first token was measured"


def _stamped(plan: _Plan, case: EvalCase, criterion: Criterion, verdict: Verdict) -> Verdict:
    rubric_version, criterion_version = plan.versions_of(case, criterion)
    return verdict.model_copy(
        update={
            "eval_id": plan.spec.eval_id,
            "rubric_version": rubric_version,
            "criterion_version": criterion_version,
            "grader_images": plan.grader_images if criterion.kind is CriterionKind.LLM else None,
        }
    )


def _graded(plan: _Plan, units: dict[str, tuple[EvalCase, str, Criterion]]) -> set[str]:
    """Verdict keys already finished for the criterion as it stands now. A verdict of the
    same criterion under an older rubric version (or from an earlier evaluation of the same
    replies) keeps its value and is restamped with the current version and evaluation."""
    store = plan.store
    done = _finished(store, stages.EVAL_VERDICT, list(units), plan.settings.retry_failed)
    fresh = set()
    for key in done:
        case, _, criterion = units[key]
        raw = store.get_raw(stages.EVAL_VERDICT, key) or {}
        rubric_version, criterion_version = plan.versions_of(case, criterion)
        if raw.get("criterion_version") != criterion_version:
            continue
        seen = raw.get("grader_images")
        if criterion.kind is CriterionKind.LLM and seen is not None and seen != plan.grader_images:
            continue  # graded with the other image condition: a different measurement
        stamp = (raw.get("rubric_version"), raw.get("eval_id"))
        if stamp != (rubric_version, plan.spec.eval_id):
            verdict = Verdict.model_validate(raw)
            restamped = _stamped(plan, case, criterion, verdict)
            store.put(stages.EVAL_VERDICT, key, restamped, sources=_from_response(key))
        fresh.add(key)
    return fresh


async def _grade(plan: _Plan) -> RunStats:
    """Step 2: one verdict per criterion of every reply (rule criteria in code)."""
    store, grader = plan.store, plan.rater
    units = {}
    for rkey, (case, _) in plan.targets.items():
        response = store.get(stages.EVAL_RESPONSE, rkey, Response)
        if response is None or response.text is None or response.refused:
            continue  # nothing to grade; a refusal scores 0 in _score
        for criterion in case.rubric.criteria:
            units[verdict_key(grader, rkey, criterion.id)] = (case, response.text, criterion)
    done = _graded(plan, units)
    pending = [key for key in units if key not in done]
    client = build_client(plan.judge, cache=store.cache)
    if plan.settings.grading == GROUPED:
        try:
            return await _grade_grouped(plan, client, units, pending)
        finally:
            await client.aclose()

    async def assess(key: str) -> None:
        case, reply, criterion = units[key]
        if criterion.kind is CriterionKind.RULE:
            verdict = _stamped(plan, case, criterion, grade_rule(criterion, reply))
            store.put(stages.EVAL_VERDICT, key, verdict, sources=_from_response(key))
            return
        request = plan.requests.of(case.instance).grader(
            criterion, reply, with_images=plan.grader_images
        )
        verdict, completions, retryable, failed_attempts = await grade(
            client, request, criterion, attempts=plan.settings.attempts
        )
        for completion in completions:
            plan.record(stages.EVAL_VERDICT, client, completion)
        if failed_attempts:
            store.record_calls(
                usage_label(stages.EVAL_VERDICT),
                plan.usage_name(stages.EVAL_VERDICT, client),
                failed_attempts=failed_attempts,
            )
        status = FAILED if retryable else DONE
        verdict = _stamped(plan, case, criterion, verdict)
        store.put(
            stages.EVAL_VERDICT,
            key,
            verdict,
            status=status,
            error=verdict.error,
            sources=_from_response(key),
        )
        if verdict.status is VerdictStatus.FAILED:
            raise RuntimeError(f"criterion {criterion.id} not graded: {verdict.error}")

    try:
        return await run_units(
            pending,
            assess,
            description=f"grade {plan.model} with {grader}",
            concurrency=plan.judge.concurrency,
            ahead=units_ahead(plan.judge.concurrency),
            already_done=len(units) - len(pending),
        )
    finally:
        await client.aclose()


def _refused(plan: _Plan) -> set[str]:
    """Response keys whose reply is a refusal (one read of the condition's replies)."""
    prefix = SEP.join((plan.model, "img" if plan.images else "txt")) + SEP
    rows = plan.store.raw_rows(stages.EVAL_RESPONSE, prefix=prefix)
    return {
        key
        for key in plan.targets
        if '"refused":true' in rows.get(key, "") and json.loads(rows[key]).get("refused")
    }


def _put_verdict(plan: _Plan, key: str, verdict: Verdict, *, retryable: bool = False) -> None:
    plan.store.put(
        stages.EVAL_VERDICT,
        key,
        verdict,
        status=FAILED if retryable else DONE,
        error=verdict.error,
        sources=_from_response(key),
    )


async def _grade_grouped(
    plan: _Plan,
    client: LLMClient,
    units: dict[str, tuple[EvalCase, str, Criterion]],
    pending: list[str],
) -> RunStats:
    """Step 2 with ``--grading grouped``: one call per reply for its pending LLM criteria
    (after a rubric change, only the changed ones); rule criteria in code, as always."""
    groups: dict[str, list[str]] = {}
    for key in pending:
        case, reply, criterion = units[key]
        if criterion.kind is CriterionKind.RULE:
            _put_verdict(plan, key, _stamped(plan, case, criterion, grade_rule(criterion, reply)))
            continue
        groups.setdefault(VerdictKey.parse(key).response, []).append(key)

    async def assess(rkey: str) -> None:
        keys = groups[rkey]
        case, reply, _ = units[keys[0]]
        criteria = [units[key][2] for key in keys]
        request = plan.requests.of(case.instance).grouped(
            criteria, reply, with_images=plan.grader_images
        )
        verdicts, completions, retryable, failed_attempts = await grade_grouped(
            client, request, criteria, plan.rater, attempts=plan.settings.attempts
        )
        for completion in completions:
            plan.record(stages.EVAL_VERDICT, client, completion)
        if failed_attempts:
            store_label = usage_label(stages.EVAL_VERDICT)
            plan.store.record_calls(
                store_label,
                plan.usage_name(stages.EVAL_VERDICT, client),
                failed_attempts=failed_attempts,
            )
        failed = []
        for key, criterion in zip(keys, criteria, strict=True):
            verdict = _stamped(plan, case, criterion, verdicts[criterion.id])
            _put_verdict(plan, key, verdict, retryable=retryable)
            if verdict.status is VerdictStatus.FAILED:
                failed.append(criterion.id)
        if failed:
            raise RuntimeError(f"criteria {failed} not graded: {verdicts[failed[0]].error}")

    done = len({VerdictKey.parse(k).response for k in units}) - len(groups)
    return await run_units(
        list(groups),
        assess,
        description=f"grade {plan.model} with {plan.rater}",
        concurrency=plan.judge.concurrency,
        ahead=units_ahead(plan.judge.concurrency),
        already_done=max(done, 0),
    )


def _score(plan: _Plan) -> list[CaseScore]:
    """Step 3: a case score per reply, from whatever verdicts exist (pure but for reads)."""
    grader = plan.rater
    scores: list[tuple[str, CaseScore]] = []
    # One read of this grader's verdicts, not one per verdict (keys start with the grader).
    stored = plan.store.raw_rows(stages.EVAL_VERDICT, prefix=grader + SEP)
    refused = _refused(plan)
    for rkey, (case, sample) in plan.targets.items():
        if rkey in refused:
            score = refusal_score(
                instance_id=case.instance.id,
                model=plan.model,
                images=plan.images,
                sample=sample,
                criteria=case.rubric.criteria,
                rubric_approved=case.approved,
                eval_id=plan.spec.eval_id,
                rubric_version=case.rubric.version,
            )
            scores.append((score_key(grader, rkey), score))
            continue
        verdicts: dict[str, Verdict] = {}
        for criterion in case.rubric.criteria:
            raw = stored.get(verdict_key(grader, rkey, criterion.id))
            if raw is not None:
                verdicts[criterion.id] = Verdict.model_validate_json(raw)
        score = score_case(
            instance_id=case.instance.id,
            model=plan.model,
            images=plan.images,
            sample=sample,
            criteria=case.rubric.criteria,
            verdicts=verdicts,
            rubric_approved=case.approved,
            eval_id=plan.spec.eval_id,
            rubric_version=case.rubric.version,
            abstain=plan.settings.abstain,
        )
        scores.append((score_key(grader, rkey), score))
    links = {key: [(stages.MCCP_INSTANCE, score.instance_id)] for key, score in scores}
    plan.store.put_many(stages.EVAL_SCORE, scores, sources=links)
    return [score for _, score in scores]


async def run_eval(store: RunStore, settings: EvalSettings) -> EvalOutcome:
    if settings.panel is not None:
        return await _run_panel(store, settings, settings.panel)
    cases, missing = load_eval_cases(store)
    if settings.limit is not None:
        cases = cases[: settings.limit]
    plan = _plan(store, settings, cases)
    save_spec(store, plan.spec)
    try:
        await _check_contamination(plan)
        responses = await _respond(plan)
        verdicts = await _grade(plan)
    finally:
        save_spec(store, plan.spec)  # usage so far, even when interrupted
    scores = _score(plan)
    save_spec(store, plan.spec, finished=True)
    _elect_primary_grader(store, plan.rater, baseline=plan.judge.backend == "offline")
    return EvalOutcome(
        model=plan.model,
        grader=plan.rater,
        abstain=plan.settings.abstain or DEFAULT_ABSTAIN,
        images=plan.images,
        cases=len(cases),
        no_rubric=missing,
        responses=responses,
        verdicts=verdicts,
        scores=scores,
        eval_id=plan.spec.eval_id,
    )


async def _check_contamination(plan: _Plan) -> None:
    """Once per evaluation of a release by a model: can it complete the release's canary?"""
    spec = plan.respondent
    if spec is None or plan.spec.benchmark.kind != "release" or plan.spec.contamination:
        return
    client = build_client(spec, cache=plan.store.cache)
    try:
        plan.spec.contamination = await check_canary(client, canary(plan.spec.benchmark.name))
    finally:
        await client.aclose()


async def _run_panel(store: RunStore, settings: EvalSettings, panel: Panel) -> EvalOutcome:
    """Each member grades as a grader of its own (its rows, its spec, its calls), one after
    the other on the same replies; then the panel's verdicts and scores are derived."""
    members = []
    for member in panel.members:
        alone = replace(settings, grader=member, panel=None)
        members.append(await run_eval(store, alone))
    cases, missing = load_eval_cases(store)
    if settings.limit is not None:
        cases = cases[: settings.limit]
    plan = _plan(store, replace(settings, grader=panel.members[0], panel=None), cases)
    member_specs = load_specs(store)
    plan.spec = open_spec(
        store,
        kind=plan.spec.kind,
        label=plan.model,
        model=plan.spec.model,
        grader=ModelRef(name=panel.name, backend="panel"),
        images=plan.images,
        grader_images=plan.grader_images,
        k=plan.spec.k,
        prompts=plan.spec.prompts,
        benchmark=plan.spec.benchmark,
        imported_from=plan.spec.imported_from,
        abstain=plan.settings.abstain,
        grading=settings.grading,
        panel=panel.ref(),
    )
    plan.spec.usage = {}  # the panel's calls are its members': summed anew from their specs
    for outcome in members:
        for stage, used in member_specs[outcome.eval_id].usage.items():
            plan.spec.usage.setdefault(stage, UsageTotals()).merge(used)
    plan.rater = panel.name
    _derive_panel_verdicts(plan, panel, [m.grader for m in members])
    scores = _score(plan)
    save_spec(store, plan.spec, finished=True)
    _elect_primary_grader(store, panel.name, members=[m.grader for m in members])
    first = members[0]
    return EvalOutcome(
        model=plan.model,
        grader=panel.name,
        abstain=plan.settings.abstain or DEFAULT_ABSTAIN,
        images=plan.images,
        cases=len(cases),
        no_rubric=missing,
        responses=first.responses,
        verdicts=_merged([m.verdicts for m in members]),
        scores=scores,
        eval_id=plan.spec.eval_id,
        members=members,
    )


def _merged(stats: Sequence[RunStats]) -> RunStats:
    merged = RunStats()
    for one in stats:
        merged.done += one.done
        merged.failed += one.failed
        merged.skipped += one.skipped
        merged.errors.update(one.errors)
    return merged


def _derive_panel_verdicts(plan: _Plan, panel: Panel, raters: Sequence[str]) -> None:
    """The panel's verdict rows from its members' (no call); a criterion some member has no
    finished verdict for gets none, and any older panel row for it is removed."""
    store = plan.store
    rows = {r: store.raw_rows(stages.EVAL_VERDICT, prefix=r + SEP) for r in raters}
    derived: list[tuple[str, Verdict]] = []
    for rkey, (case, _) in plan.targets.items():
        for criterion in case.rubric.criteria:
            votes = {}
            for member, rater in zip(panel.members, raters, strict=True):
                raw = rows[rater].get(verdict_key(rater, rkey, criterion.id))
                if raw is not None:
                    vote = Verdict.model_validate_json(raw)
                    if vote.criterion_version == plan.versions_of(case, criterion)[1]:
                        votes[member] = vote
            key = verdict_key(panel.name, rkey, criterion.id)
            verdict = panel_verdict(panel, criterion, votes)
            if verdict is None:
                store.delete(stages.EVAL_VERDICT, key)
                continue
            derived.append((key, _stamped(plan, case, criterion, verdict)))
    sources = {key: _from_response(key) for key, _ in derived}
    store.put_many(stages.EVAL_VERDICT, derived, sources=sources)


def _elect_primary_grader(
    store: RunStore, rater: str, *, baseline: bool = False, members: Sequence[str] = ()
) -> None:
    """The first grader to score a run is its primary, until a real model grades it: the
    offline baseline never outranks a model grader, and a panel outranks its own members.
    ``--grader`` picks another for a view."""
    current = store.get_meta(PRIMARY_GRADER_META)
    if (
        current is None
        or current in members
        or (not baseline and current == display_name("offline"))
    ):
        store.set_meta(PRIMARY_GRADER_META, rater)


def run_evaluation(store: RunStore, settings: EvalSettings) -> EvalOutcome:
    return run_async(run_eval(store, settings))
