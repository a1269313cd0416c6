"""Calibration: physician-labelled verdicts as balanced few-shot examples for the grader.

The physicians' majority verdict on a (reply, criterion) becomes an example; a criterion is
shown examples of its own category (``meta_eval.criterion_category``) and weight sign, as many
"met" as "not met", so the grader learns the panel's threshold rather than its base rate
(autorubric's calibration does the same). Examples come only from cases on one side of a split
by case, and the grader is judged on the other side's labels: an example never teaches the
grader the case it is judged on. The examples go into the grader's user template as its
``examples`` block, which renders nothing when there are none.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from medrealmm.evaluate.grader import grader_request
from medrealmm.llm import ChatRequest
from medrealmm.llm.types import Part
from medrealmm.schema import Criterion
from medrealmm.stats.meta_eval import ItemInfo
from medrealmm.stats.raters import panel_consensus
from medrealmm.store import RunStore

Item = tuple[str, str]  # (response key, criterion id)
#: examples per class (met / not met) a criterion is shown
PER_CLASS = 2
#: characters of a reply an example quotes: enough to judge most criteria, short enough
#: that four examples do not dwarf the case being graded
REPLY_CHARS = 300


@dataclass(frozen=True)
class Example:
    case: str
    category: str
    polarity: str
    criterion: str
    weight: int
    reply: str
    met: bool


def _rank(seed: int, *parts: str) -> str:
    return hashlib.sha256("|".join((str(seed), *parts)).encode("utf-8")).hexdigest()


def split_cases(
    cases: Mapping[str, str] | Iterable[str], *, share: float = 0.5, seed: int = 0
) -> tuple[set, set]:
    """(calibration cases, held-out cases), split by consultation: ``cases`` maps each case
    to the consultation it was cut from (a plain iterable: each case its own), and a seeded
    shuffle of the consultations puts ``share`` of them (rounded, at least one when there
    are two or more) on the calibration side, all their cases with them, so no example
    comes from the dialogue of a case it helps to grade."""
    of = dict(cases) if isinstance(cases, Mapping) else {case: case for case in cases}
    units = sorted(set(of.values()), key=lambda unit: _rank(seed, "split", unit))
    take = round(len(units) * share)
    if len(units) >= 2:
        take = min(max(take, 1), len(units) - 1)
    chosen = set(units[:take])
    calibration = {case for case, unit in of.items() if unit in chosen}
    return calibration, set(of) - calibration


def example_pool(
    physicians: Mapping[str, Mapping[Item, bool]],
    info: Mapping[Item, ItemInfo],
    criteria: Mapping[Item, Criterion],
    replies: Mapping[str, str],
    cases: set[str],
) -> list[Example]:
    """The physicians' majority verdict (ties dropped) on every labelled item of ``cases``."""
    pool = []
    for item, met in panel_consensus(physicians).items():
        where = info.get(item)
        criterion = criteria.get(item)
        if where is None or criterion is None or where.case not in cases:
            continue
        reply = replies.get(item[0], "")
        pool.append(
            Example(
                case=where.case,
                category=where.category,
                polarity=where.polarity,
                criterion=criterion.text,
                weight=criterion.weight,
                reply=reply[:REPLY_CHARS] + ("……" if len(reply) > REPLY_CHARS else ""),
                met=met,
            )
        )
    return pool


def select_examples(
    pool: Sequence[Example],
    *,
    category: str,
    polarity: str,
    exclude_case: str | None = None,
    per_class: int = PER_CLASS,
    seed: int = 0,
) -> list[Example]:
    """Up to ``per_class`` "met" and as many "not met" examples of the criterion's weight sign,
    its own category first, then others; the same number of each class (the smaller count)
    so the examples carry no base rate. Seeded, so a rerun picks the same examples."""
    by_class: dict[bool, list[Example]] = {}
    for met in (True, False):
        candidates = [
            e for e in pool if e.met is met and e.polarity == polarity and e.case != exclude_case
        ]
        candidates.sort(
            key=lambda e: (e.category != category, _rank(seed, e.case, e.criterion, str(e.met)))
        )
        by_class[met] = candidates[:per_class]
    n = min(len(by_class[True]), len(by_class[False]))
    mixed = [*by_class[True][:n], *by_class[False][:n]]
    return sorted(mixed, key=lambda e: _rank(seed, "order", e.case, e.criterion))


def calibrated_request(
    *,
    department: str,
    parts: list[Part],
    criterion: Criterion,
    reply: str,
    examples: Sequence[Example],
) -> ChatRequest:
    """``evaluate.grader.grader_request`` with the examples block filled; with no examples it
    is that request, byte for byte."""
    return grader_request(
        department=department,
        context=(),
        parts=parts,
        criterion=criterion,
        reply=reply,
        examples=[asdict(e) for e in examples],
    )


@dataclass(frozen=True)
class CalibrationResult:
    grader: str
    calibration_cases: int
    held_out_cases: int
    examples: int  # the pool the examples were drawn from
    rows: list  # stats.meta_eval.MetaRow: "<grader>" and "<grader> + examples" on held-out
    failed: int  # held-out grader calls that stayed malformed (left out, never a verdict)


def evaluate_calibration(
    store: RunStore,
    *,
    labels: Iterable[Path | str] = (),
    grader: str = "offline",
    models_config: Path | None = None,
    per_class: int = PER_CLASS,
    share: float = 0.5,
    seed: int = 0,
    resamples: int = 2000,
    concurrency: int = 8,
) -> CalibrationResult:
    """The meta-evaluation of ``grader`` on held-out cases, without and with few-shot
    examples from the other cases' labels: the same requests but for the examples block.
    Calls go through the store's LLM cache (a rerun repeats none); the dialogue is text-only,
    so what changes between the two columns is the examples alone."""
    from medrealmm.evaluate.grader import GraderOutput
    from medrealmm.evaluate.meta_eval import load_meta_inputs
    from medrealmm.llm import complete_structured, dialogue_parts, resolve_spec
    from medrealmm.llm.session import open_client
    from medrealmm.mccp.extract import unmasked_instances
    from medrealmm.rubric.rounds import evaluation_rubrics
    from medrealmm.runner import run_async
    from medrealmm.schema import Instance, Response
    from medrealmm.stats.meta_eval import meta_evaluate
    from medrealmm.store import stages
    from medrealmm.store.keys import ResponseKey

    inputs = load_meta_inputs(store, labels)
    if not inputs.physicians:
        raise ValueError(f"no physician labels in {store.path} (or --labels): nothing to calibrate")
    rubrics = evaluation_rubrics(store)
    criteria = {
        item: c
        for item in inputs.info
        for c in rubrics[inputs.info[item].case].criteria
        if c.id == item[1]
    }
    responses = {key: r for key, r in store.items(stages.EVAL_RESPONSE, Response)}
    replies = {key: r.text or "" for key, r in responses.items()}
    instances = {i.id: i for i in store.iter(stages.MCCP_INSTANCE, Instance)}
    calibration, held_out = split_cases(
        {i.case: i.unit for i in inputs.info.values()}, share=share, seed=seed
    )
    pool = example_pool(inputs.physicians, inputs.info, criteria, replies, calibration)
    items = sorted(i for i, where in inputs.info.items() if where.case in held_out)
    spec = resolve_spec(grader, models_config)

    async def judge_all() -> dict[str, dict[Item, bool]]:
        client = open_client(
            spec,
            models_config,
            store.cache,
            unmasked=unmasked_instances(store, "grader calibration"),
            meta=store,
        )
        slots = asyncio.Semaphore(concurrency)
        found: dict[str, dict[Item, bool]] = {"plain": {}, "examples": {}}

        async def judge(item: Item, kind: str) -> None:
            where = inputs.info[item]
            instance = instances[ResponseKey.parse(item[0]).instance_id]
            examples = []
            if kind == "examples":
                examples = select_examples(
                    pool,
                    category=where.category,
                    polarity=where.polarity,
                    exclude_case=where.case,
                    per_class=per_class,
                    seed=seed,
                )
            request = calibrated_request(
                department=instance.department,
                parts=dialogue_parts(instance.context, image_root=None),
                criterion=criteria[item],
                reply=replies.get(item[0], ""),
                examples=examples,
            )
            async with slots:
                result = await complete_structured(client, request, GraderOutput)
            if result.value is not None:
                found[kind][item] = result.value.met

        try:
            await asyncio.gather(*(judge(i, k) for i in items for k in ("plain", "examples")))
        finally:
            await client.aclose()
        return found

    verdicts = run_async(judge_all())
    failed = 2 * len(items) - sum(len(v) for v in verdicts.values())
    held = {i: inputs.info[i] for i in items}
    physicians = {
        name: {i: v for i, v in labels_.items() if i in held}
        for name, labels_ in inputs.physicians.items()
    }
    name = spec.name
    rows = meta_evaluate(
        {name: verdicts["plain"], f"{name} + examples": verdicts["examples"]},
        {p: v for p, v in physicians.items() if v},
        held,
        seed=seed,
        resamples=resamples,
    )
    return CalibrationResult(name, len(calibration), len(held_out), len(pool), rows, failed)
