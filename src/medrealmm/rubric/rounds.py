"""The rubric loop's state in the run store: the API the CLI and the review app share.

Rounds are kept forever (``RUBRIC_ROUND``, key ``f"{instance_id}#{round:02d}"``); feedback
F^(k) sits beside its round (``RUBRIC_FEEDBACK``, same key). Saving an empty feedback
approves the round: it is copied to ``RUBRIC_FINAL`` (key = instance id) as R*.

    save_feedback(store, RoundFeedback(instance_id=..., round=k, reviewer="dr_li", items=[...]))
    approve(store, instance_id, reviewer="dr_li")          # empty feedback on the latest round
    pending_review(store)                                   # latest rounds awaiting a physician
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from medrealmm.rubric.feedback import FeedbackError, FeedbackItem, RoundFeedback, check_feedback
from medrealmm.rubric.settings import RubricSettings
from medrealmm.schema import CriterionKind, Rubric
from medrealmm.store import DONE, FAILED, RunStore, stages
from medrealmm.store.keys import RoundKey


class RubricState(StrEnum):
    NOT_GENERATED = "not_generated"
    FAILED = "failed"  # the agent's last attempt at the next round failed; rerun to retry
    AWAITING_REVIEW = "awaiting_review"
    AWAITING_REFINEMENT = "awaiting_refinement"
    MAX_ROUNDS = "max_rounds"  # feedback on the last allowed round: unapproved for good
    APPROVED = "approved"


def round_key(instance_id: str, round_: int) -> str:
    return RoundKey(instance_id, round_).format()


def split_key(key: str) -> tuple[str, int]:
    parsed = RoundKey.parse(key)
    return parsed.instance_id, parsed.round


def _rounds_by_instance(store: RunStore, status: str = DONE) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for key in store.keys(stages.RUBRIC_ROUND, status):
        instance_id, number = split_key(key)
        found.setdefault(instance_id, []).append(number)
    return {k: sorted(v) for k, v in found.items()}


def save_round(store: RunStore, rubric: Rubric) -> None:
    made_from = [(stages.MCCP_INSTANCE, rubric.instance_id)]  # a changed instance drops it
    store.put(
        stages.RUBRIC_ROUND, round_key(rubric.instance_id, rubric.round), rubric, sources=made_from
    )


def round_history(store: RunStore, instance_id: str) -> list[Rubric]:
    """Every finished round of one instance, oldest first. Rounds are contiguous (k+1 is
    only ever written from k), so this is a few key lookups, not a scan."""
    rounds: list[Rubric] = []
    while rubric := store.get(stages.RUBRIC_ROUND, round_key(instance_id, len(rounds)), Rubric):
        rounds.append(rubric)
    return rounds


def latest_round(store: RunStore, instance_id: str) -> Rubric | None:
    rounds = round_history(store, instance_id)
    return rounds[-1] if rounds else None


def final_rubric(store: RunStore, instance_id: str) -> Rubric | None:
    return store.get(stages.RUBRIC_FINAL, instance_id, Rubric)


def rubric_for_evaluation(store: RunStore, instance_id: str) -> Rubric | None:
    """R* when approved, else the latest round (``approved`` False tells evaluation so)."""
    return final_rubric(store, instance_id) or latest_round(store, instance_id)


def evaluation_rubrics(store: RunStore) -> dict[str, Rubric]:
    """``rubric_for_evaluation`` for every instance in one pass: R* where approved, else the
    latest round (``approved`` False), keyed by instance id. Read once while the store is
    unchanged (a report asks five times); the rubrics are shared, the dict is the caller's."""
    return dict(store.memo("evaluation_rubrics", lambda: _evaluation_rubrics(store)))


def _evaluation_rubrics(store: RunStore) -> dict[str, Rubric]:
    chosen: dict[str, Rubric] = {}
    for rubric in store.iter(stages.RUBRIC_ROUND, Rubric):
        kept = chosen.get(rubric.instance_id)
        if kept is None or rubric.round > kept.round:
            chosen[rubric.instance_id] = rubric
    for rubric in store.iter(stages.RUBRIC_FINAL, Rubric):
        chosen[rubric.instance_id] = rubric
    return dict(sorted(chosen.items()))


@dataclass(frozen=True, slots=True)
class CriterionDigest:
    """What the results read of a criterion: no text, no model."""

    id: str
    weight: int
    kind: CriterionKind
    tags: tuple[str, ...]
    axis: str | None = None  # ``Axis``; None: a rubric made before axes were tagged


@dataclass(frozen=True, slots=True)
class RubricDigest:
    """What the results read of the rubric that applies to an instance (its ``version`` and
    its criteria's weights, kinds and tags): a report over thousands of cases holds these,
    not every criterion's text as a pydantic model. Its criteria's versions are read from
    where it is stored when asked (``criterion_versions``): few readers need them."""

    instance_id: str
    version: str  # ``Rubric.version``
    criteria: tuple[CriterionDigest, ...]
    stage: str  # where the rubric is stored
    key: str


def rubric_digests(store: RunStore) -> dict[str, RubricDigest]:
    """``evaluation_rubrics`` as digests, by instance id in id order: only the chosen rubric
    of each instance is read and validated, one at a time. Read once while the store is
    unchanged; the digests are shared, the dict is the caller's."""
    return dict(store.memo("rubric_digests", lambda: _rubric_digests(store)))


def _rubric_digests(store: RunStore) -> dict[str, RubricDigest]:
    chosen: dict[str, tuple[str, str, int]] = {}  # instance id -> (stage, key, round)
    for key, instance_id, round_ in store.fields(stages.RUBRIC_ROUND, ("instance_id", "round")):
        kept = chosen.get(instance_id)
        if kept is None or round_ > kept[2]:  # as ``_evaluation_rubrics``: the first latest
            chosen[instance_id] = (stages.RUBRIC_ROUND, key, round_)
    for key, instance_id in store.fields(stages.RUBRIC_FINAL, ("instance_id",)):
        chosen[instance_id] = (stages.RUBRIC_FINAL, key, 0)
    # each stage's stored rubrics in one query, not one look-up per instance
    payloads = {
        stage: store.raw_rows(stage) for stage in {stage for stage, _, _ in chosen.values()}
    }
    found = {}
    for instance_id in sorted(chosen):
        stage, key, _ = chosen[instance_id]
        payload = payloads[stage].get(key)
        if payload is None:  # gone since the keys were read
            continue
        rubric = Rubric.model_validate_json(payload)
        criteria = tuple(
            CriterionDigest(c.id, c.weight, c.kind, tuple(c.tags), c.axis) for c in rubric.criteria
        )
        found[rubric.instance_id] = RubricDigest(
            rubric.instance_id, rubric.version, criteria, stage, key
        )
    return found


def criterion_versions(store: RunStore, digest: RubricDigest) -> dict[str, str]:
    """``Criterion.version`` of each of the digest's criteria by id, read from its rubric."""
    rubric = store.get(digest.stage, digest.key, Rubric)
    return {} if rubric is None else rubric.versions()[1]


def load_feedback(store: RunStore, instance_id: str, round_: int) -> RoundFeedback | None:
    return store.get(stages.RUBRIC_FEEDBACK, round_key(instance_id, round_), RoundFeedback)


def validate_feedback(store: RunStore, feedback: RoundFeedback) -> Rubric:
    """The round the feedback is about, or ``FeedbackError`` naming the offending field: the
    round must be the instance's latest, not yet approved, and the items, with those already
    given on it, must fit it (an approval only when none wait for the Refiner)."""
    return _merged(store, feedback)[0]


def _merged(store: RunStore, feedback: RoundFeedback) -> tuple[Rubric, RoundFeedback]:
    """The round under review and its feedback once ``feedback`` joins what was given before:
    items appended (each stamped with its reviewer and time; one given before by the same
    reviewer is not repeated), notes kept."""
    current = latest_round(store, feedback.instance_id)
    if current is None:
        raise FeedbackError(None, "instance_id", f"no rubric for {feedback.instance_id!r} yet")
    check_feedback(current, feedback)
    final = final_rubric(store, feedback.instance_id)
    if final is not None and not (feedback.approves and final.round == feedback.round):
        raise FeedbackError(None, "round", f"the rubric was approved in round {final.round}")
    stamped = [_attributed(item, feedback) for item in feedback.items]
    mine = feedback.model_copy(update={"items": stamped})
    earlier = load_feedback(store, feedback.instance_id, feedback.round)
    if earlier is None or not earlier.items:
        return current, mine
    who = ", ".join(sorted({item.reviewer or earlier.reviewer for item in earlier.items}))
    if feedback.approves:
        raise FeedbackError(
            None,
            "round",
            f"round {feedback.round} has feedback from {who} waiting for the Refiner; "
            "approve the next round once it is refined",
        )
    seen = [_content(item) for item in earlier.items]
    added = [item for item in stamped if _content(item) not in seen]
    notes = dict.fromkeys(note for note in (earlier.note, feedback.note) if note)
    merged = earlier.model_copy(
        update={"items": [*earlier.items, *added], "note": "\n".join(notes)}
    )
    try:
        check_feedback(current, merged)
    except FeedbackError as exc:
        given = len(earlier.items)
        index = exc.index - given if exc.index is not None and exc.index >= given else None
        raise FeedbackError(
            index,
            exc.field,
            f"{exc.message} (items 0-{given - 1}: the feedback {who} already gave on this round, "
            "waiting for the Refiner)",
        ) from None
    return current, merged


def save_feedback(store: RunStore, feedback: RoundFeedback) -> RoundFeedback:
    """Record F^(k) for the latest round and return the round's feedback as stored.

    Items are appended to those already given on the round, never replacing them, each
    attributed: two physicians reviewing one round both keep their say. Empty feedback
    approves the round (R* = R^(k)), refused while items on it wait for the Refiner, naming
    whose. One transaction, so two submissions at once cannot lose either. Raises
    ``FeedbackError`` (a ValueError)."""
    with store.transaction():
        current, kept = _merged(store, feedback)
        key = round_key(feedback.instance_id, feedback.round)
        made_from = [(stages.RUBRIC_ROUND, key)]  # feedback and R* go with the round they judge
        store.put(stages.RUBRIC_FEEDBACK, key, kept, sources=made_from)
        if feedback.approves:
            approved = current.model_copy(update={"approved": True})
            store.put(stages.RUBRIC_FINAL, feedback.instance_id, approved, sources=made_from)
        return kept


def _attributed(item: FeedbackItem, feedback: RoundFeedback) -> FeedbackItem:
    return item.model_copy(
        update={
            "reviewer": item.reviewer or feedback.reviewer,
            "submitted_at": item.submitted_at or feedback.submitted_at,
        }
    )


def _content(item: FeedbackItem) -> dict[str, object]:
    """What an item asks and who asked it, without when: a re-import repeats nothing."""
    return item.model_dump(mode="json", exclude={"submitted_at"})


def approve(
    store: RunStore, instance_id: str, reviewer: str, *, round_: int | None = None, note: str = ""
) -> Rubric:
    """Empty feedback on the latest round (or ``round_``, which must be the latest): R* = R^(k)."""
    current = latest_round(store, instance_id)
    if current is None:
        raise FeedbackError(None, "instance_id", f"no rubric for {instance_id!r} yet")
    number = current.round if round_ is None else round_
    save_feedback(
        store, RoundFeedback(instance_id=instance_id, round=number, reviewer=reviewer, note=note)
    )
    return current.model_copy(update={"approved": True})


def _state(
    store: RunStore,
    instance_id: str,
    rounds: list[int],
    failed: set[str],
    approved: set[str],
    settings: RubricSettings,
) -> RubricState:
    if instance_id in approved:
        return RubricState.APPROVED
    next_round = rounds[-1] + 1 if rounds else 0
    if round_key(instance_id, next_round) in failed:
        return RubricState.FAILED
    if not rounds:
        return RubricState.NOT_GENERATED
    if load_feedback(store, instance_id, rounds[-1]) is None:
        return RubricState.AWAITING_REVIEW
    if rounds[-1] >= settings.max_rounds:
        return RubricState.MAX_ROUNDS
    return RubricState.AWAITING_REFINEMENT


def states(store: RunStore, settings: RubricSettings) -> dict[str, RubricState]:
    """Every instance's place in the loop, keyed by instance id (one pass over the store)."""
    by_instance = _rounds_by_instance(store)
    failed = store.keys(stages.RUBRIC_ROUND, FAILED)
    approved = store.keys(stages.RUBRIC_FINAL)
    ids = sorted(
        store.keys(stages.MCCP_INSTANCE) | set(by_instance) | {split_key(k)[0] for k in failed}
    )
    return {
        iid: _state(store, iid, by_instance.get(iid, []), failed, approved, settings) for iid in ids
    }


def state_of(store: RunStore, instance_id: str, settings: RubricSettings) -> RubricState:
    return _state(
        store,
        instance_id,
        [r.round for r in round_history(store, instance_id)],
        store.keys(stages.RUBRIC_ROUND, FAILED),
        store.keys(stages.RUBRIC_FINAL),
        settings,
    )


def pending_review(store: RunStore) -> list[Rubric]:
    """Latest unapproved rounds with no feedback yet: the physicians' queue, by instance id."""
    approved = store.keys(stages.RUBRIC_FINAL)
    feedback = store.keys(stages.RUBRIC_FEEDBACK)
    pending = []
    for instance_id, rounds in sorted(_rounds_by_instance(store).items()):
        key = round_key(instance_id, rounds[-1])
        if instance_id in approved or key in feedback:
            continue
        rubric = store.get(stages.RUBRIC_ROUND, key, Rubric)
        if rubric is not None:
            pending.append(rubric)
    return pending
