"""Case-level score records joined with instance attributes: the table every analysis reads."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from medrealmm.llm import OFFLINE_NAME
from medrealmm.rubric.rounds import rubric_digests
from medrealmm.schema import CaseScore, ImageKind, ImageOrigin, Instance, Response
from medrealmm.schema.instance import position_of
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import SEP, ResponseKey, ScoreKey

#: Model name under which evaluation stores the treating physician's original reply.
ONLINE_MODEL = "online"
#: Store meta key naming the grader whose scores are the headline results.
PRIMARY_GRADER_META = stages.PRIMARY_GRADER_META
UNLABELED = "未标注"


#: Read-only by contract, not frozen: a frozen dataclass sets each field through
#: ``object.__setattr__`` (ten times the cost), and a report builds one per scored reply.
@dataclass(slots=True)
class CaseRecord:
    grader: str
    model: str
    images: bool
    instance_id: str
    sample: int
    score: float | None  # None: incomplete, reported as such and never averaged as 0
    positive_met: int
    negative_triggered: int
    department: str
    subspecialty: str
    intent: str
    stage: str
    image_count: int
    turn_count: int
    baseline: bool
    rubric_approved: bool = True
    eval_id: str | None = None
    rubric_version: str | None = None
    stale: bool = False  # graded against a rubric version that no longer applies
    # The consultation the instance was cut from: the unit CIs resample (several challenge
    # points of one consultation are correlated); '' when the instance is unknown.
    consultation_id: str = ""
    position: str = UNLABELED  # early / middle / late in its consultation (Instance.position)
    refused: bool = False  # the model declined: scored 0, counted apart
    abstained: int = 0  # criteria the grader could not assess

    @property
    def condition(self) -> tuple[str, bool]:
        return (self.model, self.images)

    @property
    def online(self) -> bool:
        return self.model == ONLINE_MODEL


def baseline_models(responses: Iterable[Response]) -> set[str]:
    found = {r.model for r in responses if r.is_baseline}
    found.add(OFFLINE_NAME)
    return found


def to_record(
    grader: str,
    score: CaseScore,
    instance: Instance | InstanceStrata | None,
    baselines: set[str],
    applicable: Mapping[str, str] | None = None,
) -> CaseRecord:
    """``applicable``: instance id -> version of the rubric that applies now; a score under
    any other version (or none recorded) is stale. Without it nothing is judged stale."""
    stale = applicable is not None and (
        score.rubric_version is None or applicable.get(score.instance_id) != score.rubric_version
    )
    return CaseRecord(
        grader=grader,
        model=score.model,
        images=score.images,
        instance_id=score.instance_id,
        sample=score.sample,
        score=score.score,
        positive_met=score.positive_met,
        negative_triggered=score.negative_triggered,
        department=(instance.department if instance else "") or UNLABELED,
        subspecialty=(instance.subspecialty if instance else None) or UNLABELED,
        intent=(instance.intent if instance else None) or UNLABELED,
        stage=(instance.stage if instance else None) or UNLABELED,
        image_count=instance.image_count if instance else 0,
        turn_count=instance.turn_count if instance else 0,
        baseline=score.model in baselines,
        rubric_approved=score.rubric_approved,
        eval_id=score.eval_id,
        rubric_version=score.rubric_version,
        refused=score.refused,
        stale=stale,
        consultation_id=instance.consultation_id if instance else "",
        position=(instance.position if instance else None) or UNLABELED,
        abstained=score.abstained,
    )


@dataclass(frozen=True, slots=True)
class InstanceStrata:
    """What a case record takes from its instance, read without building the ``Instance``
    (its whole dialogue) for each of many cases."""

    department: str
    subspecialty: str | None
    intent: str | None
    stage: str | None
    image_count: int
    turn_count: int
    consultation_id: str
    position: str | None
    id: str = ""


def instance_strata(store: RunStore) -> dict[str, InstanceStrata]:
    """Each instance's strata by id; the counts as ``Instance.image_count``/``turn_count``.
    Read once while the store is unchanged (the case records and dataset tables share it).
    Instances of withdrawn consultations are left out: a withdrawal leaves every table."""
    return dict(store.memo("instance_strata", lambda: _current_strata(store)))


def withdrawn_consultations(store: RunStore) -> frozenset[str]:
    """Consultations withdrawn from the benchmark (``release withdraw``) in this run."""
    return frozenset(store.keys(stages.RELEASE_WITHDRAWN))


def withdrawn_instances(store: RunStore) -> frozenset[str]:
    """Instance ids cut from withdrawn consultations: no table of the run counts them."""
    return store.memo("withdrawn_instances", lambda: _withdrawn_instances(store))


def _withdrawn_instances(store: RunStore) -> frozenset[str]:
    gone = withdrawn_consultations(store)
    if not gone:
        return frozenset()
    names = ("id", "consultation_id")
    return frozenset(
        iid for _, (iid, consultation) in store.field_values(stages.MCCP_INSTANCE, names)
        if consultation in gone
    )  # fmt: skip


def _current_strata(store: RunStore) -> dict[str, InstanceStrata]:
    found = _instance_strata(store)
    for iid in withdrawn_instances(store):
        found.pop(iid, None)
    return found


def _instance_strata(store: RunStore) -> dict[str, InstanceStrata]:
    names = ("id", "department", "subspecialty", "intent", "stage", "context")
    names += ("consultation_id", "t_star", "consultation_turns")
    found: dict[str, InstanceStrata] = {}
    for _, values in store.field_values(stages.MCCP_INSTANCE, names):
        iid, department, subspecialty, intent, stage, events, consultation, t, turns = values
        images = sum(
            ref["origin"] == ImageOrigin.PATIENT
            and ref.get("kind", ImageKind.MEDICAL) == ImageKind.MEDICAL
            for event in events
            for ref in event.get("images", ())
        )
        found[iid] = InstanceStrata(
            *(department, subspecialty, intent, stage, images, len(events)),
            *(consultation, position_of(t, turns), iid),
        )
    return found


def load_scored_cases(store: RunStore) -> list[CaseRecord]:
    """Every scored response, by every grader, with its instance's strata and whether it
    was graded against the rubric that applies now (``stale`` when not). Read once while
    the store is unchanged (the report's results and its abstentions table share it)."""
    return list(store.memo("scored_cases", lambda: _load_scored_cases(store)))


@dataclass(frozen=True)
class MarkedReplies:
    """What the report reads of the replies that carry a mark (few of a large run): the
    models of the baseline replies, and (model, images, latency JSON, whether it has text)
    of each measured one, in key order."""

    baselines: frozenset[str]
    measured: tuple[tuple[str, int | None, str, int], ...]


def marked_replies(store: RunStore) -> MarkedReplies:
    """The baseline and the measured replies, chosen in SQL in one scan of the replies and
    read once while the store is unchanged: the case records' baseline models and the
    report's latency table share it."""
    return store.memo("marked_replies", lambda: _marked_replies(store))


def _marked_replies(store: RunStore) -> MarkedReplies:
    names = ("model", "images", "is_baseline", "latency", "text?")
    baselines: set[str] = set()
    measured = []
    for _, model, images, baseline, latency, text in store.fields(
        stages.EVAL_RESPONSE, names, having=("is_baseline", "latency")
    ):
        if baseline:
            baselines.add(model)
        if latency is not None:
            measured.append((model, images, latency, text))
    return MarkedReplies(frozenset(baselines), tuple(measured))


def stored_images(value: int | None) -> bool:
    """A record's ``images`` as ``RunStore.fields`` reads it (SQLite's 0/1, None where the
    field is absent) as the schema reads it (``Response``/``CaseScore`` default: with)."""
    return True if value is None else bool(value)


def _load_scored_cases(store: RunStore) -> list[CaseRecord]:
    """Built straight from the store's rows (``field_values``): no score model, no per-field
    dictionary, one shared string per grader, model, instance and version. A reply's model,
    mode, instance and sample are its key's (the score's own, the key is made from them),
    split once per reply (``_Replies``): one look-up per row gives all that a record takes
    from its reply and its instance."""
    baselines = set(marked_replies(store).baselines)
    baselines.add(OFFLINE_NAME)  # as ``baseline_models``
    applicable = {iid: rubric.version for iid, rubric in rubric_digests(store).items()}
    replies = _Replies(instance_strata(store), applicable, baselines)
    withdrawn = withdrawn_instances(store)
    shared = replies.shared
    records = []
    append = records.append
    for key, values in store.field_values(stages.EVAL_SCORE, _SCORE_FIELDS):
        score, met, triggered, approved, eval_id, version, refused, abstained = values
        grader, _, response = key.partition(SEP)
        if not (grader and response):
            ScoreKey.parse(key)  # says what is wrong with it
        reply = replies.found.get(response) or replies.add(response)
        if reply[2] in withdrawn:
            continue
        part = reply[5]
        if version is not None and version == part[8]:
            version, stale = part[8], False  # the applicable rubric's
        else:
            stale = True  # graded against another rubric, or none recorded
            if version is not None:
                version = shared.setdefault(version, version)
        if eval_id is not None:
            eval_id = shared.setdefault(eval_id, eval_id)
        append(
            CaseRecord(
                shared.setdefault(grader, grader),
                reply[0],
                reply[1],
                reply[2],
                reply[3],
                score,
                met or 0,
                triggered or 0,
                *part[:6],  # department to turn count
                reply[4],
                True if approved is None else bool(approved),
                eval_id,
                version,
                stale,
                part[6],
                part[7],
                bool(refused),
                len(abstained) if abstained else 0,
            )
        )
    return records


class _Replies:
    """What a case record takes from its reply's key and its instance, by response key:
    (model, images, instance id, sample, baseline, instance part), the part one tuple per
    instance (``_instance_part``), strings shared (``shared``) across all records."""

    def __init__(
        self,
        instances: Mapping[str, InstanceStrata],
        applicable: Mapping[str, str],
        baselines: set[str],
    ) -> None:
        self.instances, self.applicable, self.baselines = instances, applicable, baselines
        self.found: dict[str, tuple[Any, ...]] = {}
        self.parts: dict[str, tuple[Any, ...]] = {}
        self.shared: dict[str, str] = {}

    def add(self, response: str) -> tuple[Any, ...]:
        model, images, iid, sample = ResponseKey.split(response)  # a malformed key: an error
        model = self.shared.setdefault(model, model)
        iid = self.shared.setdefault(iid, iid)
        part = self.parts.get(iid)
        if part is None:
            part = self.parts[iid] = _instance_part(
                self.instances.get(iid), self.applicable.get(iid)
            )
        found = self.found[response] = (model, images, iid, sample, model in self.baselines, part)
        return found


def _instance_part(instance: InstanceStrata | None, applicable: str | None) -> tuple[Any, ...]:
    """A record's fields from its instance, as ``to_record`` fills them: department to turn
    count, consultation and position, then the version of the rubric that applies to it
    now (None: none does)."""
    return (
        (instance.department if instance else "") or UNLABELED,
        (instance.subspecialty if instance else None) or UNLABELED,
        (instance.intent if instance else None) or UNLABELED,
        (instance.stage if instance else None) or UNLABELED,
        instance.image_count if instance else 0,
        instance.turn_count if instance else 0,
        instance.consultation_id if instance else "",
        (instance.position if instance else None) or UNLABELED,
        applicable,
    )


#: The score fields a record takes besides its key's (``to_record`` reads no other), as
#: ``field_values`` reads them: verdicts (rationales and all) are neither read nor
#: validated; a field an older store lacks comes as None and takes ``CaseScore``'s default.
_SCORE_FIELDS = (
    "score",
    "positive_met",
    "negative_triggered",
    "rubric_approved",
    "eval_id",
    "rubric_version",
    "refused",
    "abstained_criteria",  # its length is taken
)


def primary_grader(records: Iterable[CaseRecord], preferred: str | None = None) -> str | None:
    """The grader named in store meta if it scored anything, else the one that scored most."""
    counts = Counter(r.grader for r in records)
    if preferred and preferred in counts:
        return preferred
    return max(sorted(counts), key=counts.__getitem__) if counts else None


def headline_records(records: Iterable[CaseRecord], grader: str | None) -> list[CaseRecord]:
    """The grader's sample-0 records: the paper invokes each model once per instance (7.1),
    and evaluation's own summary scores sample 0 the same way."""
    return [r for r in records if r.grader == grader and r.sample == 0]


def consultation_of(records: Iterable[CaseRecord]) -> dict[str, str]:
    """Instance id -> the consultation it was cut from (the instance itself when unknown)."""
    return {r.instance_id: r.consultation_id or r.instance_id for r in records}


def case_means(records: Iterable[CaseRecord]) -> dict[str, float]:
    """Mean complete score per instance, so each case weighs the same whatever its samples."""
    by_case: dict[str, list[float]] = defaultdict(list)
    for record in records:
        if record.score is not None:
            by_case[record.instance_id].append(record.score)
    return {case: sum(v) / len(v) for case, v in sorted(by_case.items())}
