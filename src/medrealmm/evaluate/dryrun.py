"""``eval run --dry-run``: the calls a run would make, read from the store, nothing written."""

from __future__ import annotations

from medrealmm.evaluate.cases import load_eval_cases
from medrealmm.evaluate.grader import grader_request
from medrealmm.evaluate.respond import respond_request
from medrealmm.evaluate.results import verdict_key
from medrealmm.evaluate.run import ONLINE, EvalSettings
from medrealmm.llm import resolve_spec
from medrealmm.llm.dialogue import dialogue_parts
from medrealmm.llm.estimate import TOKENS_PER_IMAGE, CallEstimate
from medrealmm.schema import CriterionKind, Response
from medrealmm.store import RunStore, stages


def plan_evaluation(store: RunStore, settings: EvalSettings) -> list[CallEstimate]:
    """Respondent and grader calls still to make (and those already stored), with prompt
    tokens estimated on the text and image count the calls would carry. A reply not yet
    generated is graded with an empty reply in the estimate, plus its max_tokens bound."""
    cases, _ = load_eval_cases(store)
    cases = cases[: settings.limit] if settings.limit is not None else cases
    imported = settings.replies is not None
    online = settings.model == ONLINE and not imported
    respondent = (
        None if online or imported else resolve_spec(settings.model, settings.models_config)
    )
    judge = resolve_spec(settings.grader, settings.models_config)
    images = online or settings.images
    model = settings.model if respondent is None else respondent.name
    k = 1 if respondent is None else settings.k
    responses = CallEstimate.of("respondent", respondent) if respondent else None
    verdicts = CallEstimate.of("grader", judge)
    stored_replies = store.keys(stages.EVAL_RESPONSE)
    stored_verdicts = store.keys(stages.EVAL_VERDICT)
    for case in cases:
        instance = case.instance
        # Text only: images are counted by number (instance.image_count), never decoded here.
        parts = dialogue_parts(instance.context, image_root=None)
        for sample in range(k):
            rkey = stages.response_key(model, images, instance.id, sample)
            reply = ""
            if rkey in stored_replies:
                stored = store.get(stages.EVAL_RESPONSE, rkey, Response)
                reply = (stored.text if stored else None) or ""
                if responses is not None:
                    responses.done += 1
            elif responses is not None:
                request = respond_request(
                    department=instance.department,
                    context=instance.context,
                    parts=parts,
                    with_images=images,
                    sample=sample,
                )
                responses.add(respondent, request)  # type: ignore[arg-type]
                if images and respondent is not None and respondent.vision:
                    responses.prompt_tokens += _image_tokens(instance.image_count)
            for criterion in case.rubric.criteria:
                if criterion.kind is not CriterionKind.LLM:
                    continue
                if verdict_key(judge.name, rkey, criterion.id) in stored_verdicts:
                    verdicts.done += 1
                    continue
                request = grader_request(
                    department=instance.department,
                    context=instance.context,
                    parts=parts,
                    criterion=criterion,
                    reply=reply,
                )
                verdicts.add(judge, request)
                if not reply and responses is not None:
                    verdicts.prompt_tokens += responses.max_completion_tokens // max(
                        responses.todo, 1
                    )
                if settings.grader_images and judge.vision:
                    verdicts.prompt_tokens += _image_tokens(instance.image_count)
    return [e for e in (responses, verdicts) if e is not None]


def _image_tokens(count: int) -> int:
    return count * TOKENS_PER_IMAGE
