"""``eval run --dry-run``: the calls a run would make, read from the store, nothing written.

Each pending request is built as the run would build it and handed to a ``DryRunClient``
(``medrealmm.llm.dryrun``), which counts it (or finds it in the cache) and answers offline.
Requests come from ``CaseRequests`` as in the run, images included where the run sends them
(read and encoded, never decoded); a reply not generated yet is graded as empty in the estimate.
"""

from __future__ import annotations

from dataclasses import replace

from medrealmm.evaluate.cases import load_eval_cases, pixel_root
from medrealmm.evaluate.provenance import GROUPED, rater_name
from medrealmm.evaluate.requests import CaseRequests
from medrealmm.evaluate.results import verdict_key
from medrealmm.evaluate.run import ONLINE, EvalSettings, kept_settings
from medrealmm.llm import resolve_spec
from medrealmm.llm.config import build_client
from medrealmm.llm.dryrun import DryRunClient
from medrealmm.llm.probe import with_capabilities
from medrealmm.runner import run_async
from medrealmm.schema import CriterionKind, Response
from medrealmm.store import RunStore, stages


def plan_evaluation(store: RunStore, settings: EvalSettings) -> tuple[list[DryRunClient], int]:
    """(one DryRunClient per model that would be called, units already stored); a panel
    plans each member's calls, the replies once."""
    if settings.panel is None:
        return run_async(_plan(store, settings))
    clients: list[DryRunClient] = []
    resumed = 0
    for i, member in enumerate(settings.panel.members):
        planned, done = run_async(_plan(store, replace(settings, grader=member, panel=None)))
        clients.extend(planned if i == 0 else planned[-1:])  # the grader is the last client
        resumed += done
    return clients, resumed


async def _plan(store: RunStore, settings: EvalSettings) -> tuple[list[DryRunClient], int]:
    cases, _ = load_eval_cases(store)
    cases = cases[: settings.limit] if settings.limit is not None else cases
    imported = settings.replies is not None
    online = settings.model == ONLINE and not imported
    respondent = (
        None if online or imported else resolve_spec(settings.model, settings.models_config)
    )
    judge = resolve_spec(settings.grader, settings.models_config)
    # A dry run makes no call: only capabilities an earlier run's probe kept are applied.
    judge = with_capabilities(judge, store, ask=False)
    if respondent is not None:
        respondent = with_capabilities(respondent, store, ask=False)
    images = online or settings.images
    model = settings.model if respondent is None else respondent.name
    # As the run would: recorded settings kept, a conflicting one refused before any estimate.
    settings = kept_settings(store, settings, model, images, judge, respondent)
    grader_images, k = bool(settings.grader_images), settings.k or 1
    root = pixel_root(store, cases, (images and not online) or grader_images)
    seed = None if respondent is None else respondent.params.seed
    responder = (
        DryRunClient(build_client(respondent), respondent, store.cache) if respondent else None
    )
    grader = DryRunClient(build_client(judge), judge, store.cache)
    rater = rater_name(judge.name, settings.grading)
    stored_replies = store.keys(stages.EVAL_RESPONSE)
    stored_verdicts = store.keys(stages.EVAL_VERDICT)
    resumed = 0
    try:
        for case in cases:
            instance = case.instance
            requests = CaseRequests(instance, root)
            for sample in range(k):
                rkey = stages.response_key(model, images, instance.id, sample)
                reply = ""
                if rkey in stored_replies:
                    stored = store.get(stages.EVAL_RESPONSE, rkey, Response)
                    reply = (stored.text if stored else None) or ""
                    resumed += responder is not None
                elif responder is not None:
                    request = requests.respond(with_images=images, sample=sample, base_seed=seed)
                    reply = (await responder.complete(request)).text
                pending = []
                for criterion in case.rubric.criteria:
                    if criterion.kind is not CriterionKind.LLM:
                        continue
                    if verdict_key(rater, rkey, criterion.id) in stored_verdicts:
                        resumed += 1
                        continue
                    pending.append(criterion)
                if settings.grading == GROUPED:
                    if pending:
                        request = requests.grouped(pending, reply, with_images=grader_images)
                        await grader.complete(request)
                    continue
                for criterion in pending:
                    request = requests.grader(criterion, reply, with_images=grader_images)
                    await grader.complete(request)
    finally:
        for client in (responder, grader):
            if client is not None:
                await client.aclose()
    return [c for c in (responder, grader) if c is not None], resumed
