"""The benchmark as an inspect_ai task (optional extra: ``pip install medrealmm[inspect]``).

``inspect eval`` users get a release with inspect's model providers and log viewer:

    inspect eval medrealmm/medrealmm -T release=path/to/release --model openai/gpt-4o

The dataset is the release (DUA and checksums checked, as ``medrealmm eval run`` does), the
solver sends the same prompt, and the scorer is the same per-criterion grader and clipped
score, so the mean equals ``medrealmm eval``'s Score on the same replies and verdicts. A case
with a criterion left ungraded raises: inspect records it as a sample error, never a 0.

It behaves as a task should: with images on, the model is first sent one 8x8 PNG (the
vision probe ``medrealmm eval`` uses; ``MEDREALMM_PROBE=off`` skips it) and a model that
refuses it fails each sample with one line saying to pass ``-T images=false``; calls are
retried a bounded number of times; and when every sample errored the log's status is
``error`` (``inspect eval`` exits non-zero), never a success with no scores.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from medrealmm.evaluate.grader import grade
from medrealmm.evaluate.requests import CaseRequests
from medrealmm.evaluate.scoring import score_case
from medrealmm.evaluate.source import read_release
from medrealmm.llm import (
    ImagePart,
    LLMClient,
    Message,
    build_client,
    resolve_spec,
    send_pixels,
)
from medrealmm.llm.probe import probe_enabled, tiny_png
from medrealmm.rubric.rules import grade_rule
from medrealmm.schema import CriterionKind, Instance, Rubric, Verdict


def _inspect_messages(messages: list[Message]) -> list[ChatMessage]:
    converted: list[ChatMessage] = []
    for message in messages:
        content: list[Content] = [
            ContentImage(image=part.url)
            if isinstance(part, ImagePart)
            else ContentText(text=part.text)
            for part in message.content
        ]
        if message.role == "system":
            converted.append(ChatMessageSystem(content=message.plain_text))
        elif all(isinstance(part, ContentText) for part in content):
            # text alone goes as one string: chat templates of llama.cpp-style servers
            # concatenate the content and fail on a list of parts
            converted.append(ChatMessageUser(content=message.plain_text))
        else:
            converted.append(ChatMessageUser(content=content))
    return converted


def to_sample(instance: Instance, rubric: Rubric, image_root: Path | None, images: bool) -> Sample:
    """The instance as ``medrealmm eval`` would send it; the rubric rides in the metadata."""
    request = CaseRequests(instance, image_root).respond(with_images=images)
    return Sample(
        id=instance.id,
        input=_inspect_messages(request.messages),
        metadata={
            "instance": instance.model_dump(mode="json"),
            "rubric": rubric.model_dump(mode="json"),
            "rubric_version": rubric.version,
            "department": instance.department,
            "images": images,
        },
    )


async def grade_reply(
    client: LLMClient,
    instance: Instance,
    rubric: Rubric,
    reply: str,
    requests: CaseRequests,
    *,
    model: str,
    images: bool,
    grader_images: bool,
) -> Any:
    """Every criterion graded (rules in code) and the case scored: medrealmm's own path."""

    async def one(criterion: Any) -> Verdict:
        if criterion.kind is CriterionKind.RULE:
            return grade_rule(criterion, reply)
        request = requests.grader(criterion, reply, with_images=grader_images)
        verdict, _, _, _ = await grade(client, request, criterion)
        return verdict

    verdicts = await asyncio.gather(*(one(c) for c in rubric.criteria))
    return score_case(
        instance_id=instance.id,
        model=model,
        images=images,
        sample=0,
        criteria=rubric.criteria,
        verdicts={v.criterion_id: v for v in verdicts},
        rubric_approved=rubric.approved,
        rubric_version=rubric.version,
    )


#: Model calls inspect retries before a sample errors (a bound, not inspect's open default).
MAX_RETRIES = 3
#: Seconds one model call may take (medrealmm's own default per call).
ATTEMPT_TIMEOUT_S = 120
#: ``fail_on_error`` as a fraction: the run fails once every sample errored (errors >= this
#: share of the samples), and only then: one bad case stays one error sample.
ALL_ERRORED = 1 - 1e-9


async def takes_images(model: Model) -> bool:
    """One 8x8 PNG, as medrealmm's own vision probe sends it: any error means no vision."""
    probe = ContentImage(image=tiny_png()), ContentText(text="颜色？")
    try:
        output = await model.generate(
            [ChatMessageUser(content=list(probe))],
            config=GenerateConfig(max_tokens=8, max_retries=1),
        )
    except Exception:  # the server refused the image part: no vision
        return False
    return not output.error


@solver
def respond(images: bool) -> Solver:
    """``generate``, after the vision probe (once per model of the task) when images are
    sent: a text-only model fails fast with the fix, not with a server error per case."""
    answers: dict[str, bool] = {}
    lock = asyncio.Lock()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if images and probe_enabled():
            model = get_model()
            async with lock:
                if str(model) not in answers:
                    answers[str(model)] = await takes_images(model)
            if not answers[str(model)]:
                raise RuntimeError(
                    f"{model} did not accept an image (an 8x8 PNG): for a text-only model "
                    "run with -T images=false"
                )
        return await generate(state)

    return solve


@scorer(metrics=[mean(), stderr()])
def rubric_score(
    image_root: str | None,
    grader: str = "offline",
    models_config: str | None = None,
    grader_images: bool = True,
) -> Scorer:
    """S = clip(sum w v / sum max(w, 0), 0, 1) from the per-criterion grader (paper 3.4)."""
    spec = resolve_spec(grader, models_config)
    client = build_client(spec)
    with_pixels = send_pixels(spec, grader_images)
    root = Path(image_root) if image_root else None

    async def score(state: TaskState, target: Target) -> Score:
        instance = Instance.model_validate(state.metadata["instance"])
        rubric = Rubric.model_validate(state.metadata["rubric"])
        reply = state.output.completion.strip()
        if not reply:
            raise RuntimeError(f"{instance.id}: the model returned an empty reply")
        case = await grade_reply(
            client,
            instance,
            rubric,
            reply,
            CaseRequests(instance, root),  # one encoding shared by every criterion
            model=str(state.model),
            images=bool(state.metadata["images"]),
            grader_images=with_pixels,
        )
        if case.score is None:
            raise RuntimeError(
                f"{instance.id}: criteria {case.failed_criteria} not graded; the case is "
                "incomplete, not 0"
            )
        return Score(
            value=case.score,
            answer=reply,
            explanation=f"+{case.positive_met} met, -{case.negative_triggered} triggered",
            metadata={
                "positive_met": case.positive_met,
                "negative_triggered": case.negative_triggered,
                "rubric_version": case.rubric_version,
                "abstained": case.abstained_criteria,
                "verdicts": [v.model_dump(mode="json") for v in case.verdicts],
            },
        )

    return score


@task
def medrealmm(
    release: str,
    images: bool = True,
    grader: str = "offline",
    models_config: str | None = None,
    grader_images: bool = True,
) -> Task:
    """MedRealMM over a release: ``-T release=FOLDER`` (``-T images=false`` withholds them;
    ``-T grader=NAME -T models_config=models.yaml`` picks the grader, offline by default)."""
    benchmark = read_release(Path(release))
    rubrics = {r.instance_id: r for r in benchmark.rubrics}
    samples = [
        to_sample(instance, rubrics[instance.id], benchmark.image_root, images)
        for instance in sorted(benchmark.instances, key=lambda i: i.id)
        if instance.id in rubrics
    ]
    return Task(
        dataset=MemoryDataset(samples, name=benchmark.ref.name, location=benchmark.ref.location),
        solver=respond(images),
        scorer=rubric_score(
            str(benchmark.image_root) if benchmark.image_root else None,
            grader,
            models_config,
            grader_images,
        ),
        config=GenerateConfig(  # medrealmm's default decoding, and a bound on retries
            temperature=0.0, max_retries=MAX_RETRIES, attempt_timeout=ATTEMPT_TIMEOUT_S
        ),
        # an incomplete case is an error sample, never a 0; all of them errored: a failed run
        fail_on_error=ALL_ERRORED,
        metadata={"benchmark": benchmark.ref.model_dump(mode="json")},
        version=benchmark.ref.version or 0,
    )
