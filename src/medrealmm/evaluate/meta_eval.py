"""Meta-evaluation at the edges: physician labels in, agreement rows out.

Physician labels come from the review app's panel (``panel.verdict``, one row per reviewer,
response and criterion) and from JSONL exchange files for a panel that labelled elsewhere, one
line per (reply, criterion, physician):

    {"instance_id": "c1-t5", "model": "qwen3-vl", "images": true, "sample": 0,
     "criterion_id": "c3", "physician": "dr_li", "met": true}

``images`` defaults to true and ``sample`` to 0. A label is an error, naming its line and field,
when its instance, criterion or reply is not in the results, or when it contradicts the same
physician's label of the same item. The arithmetic is ``stats.meta_eval``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.io import DataError, iter_jsonl
from medrealmm.rubric.agents import label_name
from medrealmm.rubric.rounds import (
    CriterionDigest,
    criterion_versions,
    evaluation_rubrics,
    rubric_digests,
)
from medrealmm.schema import CriterionKind, Rubric, Verdict
from medrealmm.stats.bootstrap import DEFAULT_RESAMPLES
from medrealmm.stats.cases import instance_strata, withdrawn_instances
from medrealmm.stats.meta_eval import ItemInfo, MetaRow, meta_evaluate
from medrealmm.stats.raters import panel_reply_verdicts, panel_verdicts, verdict_rows
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import ResponseKey, VerdictKey

Item = tuple[str, str]  # (response key, criterion id)
CATEGORY_TAG = "category:"
UNCATEGORISED = "未分类"


class PhysicianLabel(BaseModel):
    """One line of a label exchange file."""

    model_config = ConfigDict(extra="forbid")

    instance_id: str = Field(min_length=1)
    model: str = Field(min_length=1)
    images: bool = True
    sample: int = Field(default=0, ge=0)
    criterion_id: str = Field(min_length=1)
    physician: str = Field(min_length=1, pattern=r"^[^|]+$")
    met: bool

    @property
    def response(self) -> str:
        return ResponseKey(self.model, self.images, self.instance_id, self.sample).format()


@dataclass
class MetaInputs:
    graders: dict[str, dict[Item, bool]] = field(default_factory=dict)
    physicians: dict[str, dict[Item, bool]] = field(default_factory=dict)
    info: dict[Item, ItemInfo] = field(default_factory=dict)
    skipped: int = 0  # labels of code-checked rules or criteria no longer in the rubric


def criterion_category(tags: Iterable[str], intent: str | None) -> str:
    """A criterion's ``category:NAME`` tag where its rubric gives one, else its case's
    ``intent`` (by its taxonomy name): the category few-shot examples are matched and F1s
    split by."""
    for tag in tags:
        if tag.startswith(CATEGORY_TAG) and tag[len(CATEGORY_TAG) :]:
            return tag[len(CATEGORY_TAG) :]
    if intent:
        return label_name("intent", intent) or intent
    return UNCATEGORISED


def _numbered(path: Path) -> Iterator[tuple[int, PhysicianLabel]]:
    lines = [n for n, text in enumerate(path.read_text("utf-8").splitlines(), 1) if text.strip()]
    yield from zip(lines, iter_jsonl(path, PhysicianLabel), strict=False)


def _unknown(
    label: PhysicianLabel, rubrics: dict[str, Rubric], responses: set[str]
) -> tuple[str, str] | None:
    """(field, message) when the label names something the results do not hold, else None."""
    rubric = rubrics.get(label.instance_id)
    if rubric is None:
        return "instance_id", f"no rubric for {label.instance_id!r}"
    if label.criterion_id not in {c.id for c in rubric.criteria}:
        return "criterion_id", f"{label.criterion_id!r} is not in the rubric"
    if label.response not in responses:
        return "model", f"no reply {label.response!r} in the results"
    return None


def read_labels(
    path: Path | str,
    rubrics: dict[str, Rubric],
    responses: set[str],
    *,
    skip_unknown: bool = False,
) -> dict[str, dict[Item, bool]]:
    """physician -> item -> met, checked against the results (see the module docstring);
    ``skip_unknown`` leaves out labels of cases, criteria or replies the results lack (the
    demo's bundled panel on a run cut short) instead of refusing the file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no labels file at {path}")
    out: dict[str, dict[Item, bool]] = defaultdict(dict)
    for number, label in _numbered(path):
        problem = _unknown(label, rubrics, responses)
        if problem is not None:
            if skip_unknown:
                continue
            raise DataError(path, number, *problem)
        item = (label.response, label.criterion_id)
        known = out[label.physician].get(item)
        if known is not None and known != label.met:
            raise DataError(path, number, "met", "contradicts an earlier label of this item")
        out[label.physician][item] = label.met
    if not out and not skip_unknown:
        raise DataError(path, 1, "<file>", "no labels in the file")
    return dict(out)


def load_meta_inputs(store: RunStore, labels: Iterable[Path | str] = ()) -> MetaInputs:
    """Graders' verdicts and physicians' labels (panel and files) on LLM-graded criteria of
    the rubrics that apply now; a grader verdict given to an older criterion version is left
    out, as the report leaves out stale scores."""
    strata = instance_strata(store)
    intents = {iid: found.intent for iid, found in strata.items()}
    consultations = {iid: found.consultation_id for iid, found in strata.items()}
    digests = rubric_digests(store)
    criteria = {(iid, c.id): c for iid, r in digests.items() for c in r.criteria}
    inputs = MetaInputs()
    physicians = dict(panel_verdicts(store))  # shared with Table 2: copied before a change
    responses: set[str] | None = None  # read only when there are label files
    for path in labels:
        if responses is None:
            responses = set(store.keys(stages.EVAL_RESPONSE))
        found_labels = read_labels(path, evaluation_rubrics(store), responses)
        for physician, found in found_labels.items():
            mine = physicians[physician] = dict(physicians.get(physician, {}))
            clash = [i for i, v in found.items() if i in mine and mine[i] != v]
            if clash:
                raise ValueError(
                    f"{path}: {physician} labels {len(clash)} items otherwise than before "
                    f"(first: {clash[0][0]} {clash[0][1]})"
                )
            mine.update(found)

    described = _Describer(criteria, intents, inputs.info, consultations)
    described.withdrawn = withdrawn_instances(store)
    for name, found_labels in physicians.items():
        unknown = described.unknown(found_labels)
        # all known (the usual case): the labels as read, not a copy of them
        kept = (
            {i: v for i, v in found_labels.items() if i not in unknown} if unknown else found_labels
        )
        inputs.skipped += len(unknown)
        if kept:
            inputs.physicians[name] = kept
    labelled = set(inputs.info)
    if not labelled:
        return inputs  # no panel: the graders' verdicts are not worth reading
    replies = {response for response, _ in labelled}  # only their verdicts are read
    rows = (  # labels from files alone: replies the panel never judged
        panel_reply_verdicts(store)
        if replies <= {item[0] for found in panel_verdicts(store).values() for item in found}
        else verdict_rows(store, stages.EVAL_VERDICT, replies)
    )
    versions: dict[str, dict[str, str]] = {}  # instance id -> its criteria's versions
    judged: dict[Item, bool] = {}  # the verdicts of the row before's grader (rows come by grader)
    last: str | None = None
    for grader, response, criterion_id, value, version in rows:
        item = (response, criterion_id)
        if item not in labelled:
            continue
        if version is not None:  # a criterion's version hashes it: read once per rubric
            instance_id = ResponseKey.parse(response).instance_id
            current = versions.get(instance_id)
            if current is None:
                current = versions[instance_id] = criterion_versions(store, digests[instance_id])
            if version != current.get(criterion_id):
                continue
        if grader != last:
            judged, last = inputs.graders.setdefault(grader, {}), grader
        judged[item] = value
    return inputs


class _Describer:
    """Each labelled item's ``ItemInfo``, kept in ``info`` (labels of one item by several
    physicians describe it once), or unknown: a code-checked rule, or a criterion no longer
    in the rubric. Equal descriptions are one shared object (one per case and kind)."""

    def __init__(
        self,
        criteria: dict[tuple[str, str], CriterionDigest],
        intents: dict[str, str | None],
        info: dict[Item, ItemInfo],
        consultations: dict[str, str] | None = None,
    ) -> None:
        self.criteria, self.intents, self.info = criteria, intents, info
        self.consultations = consultations or {}
        self.withdrawn: frozenset[str] = frozenset()
        self.shared: dict[tuple[str, str, str], ItemInfo] = {}  # by its fields
        self.categories: dict[tuple[tuple[str, ...], str | None], str] = {}

    def unknown(self, labels: Iterable[Item]) -> set[Item]:
        """Describe ``labels``' items not described yet; return those that are unknown."""
        info = self.info
        unknown = set()
        for item in labels:
            if item not in info:
                found = self.describe(item)
                if found is None:
                    unknown.add(item)
                else:
                    info[item] = found
        return unknown

    def describe(self, item: Item) -> ItemInfo | None:
        instance_id = ResponseKey.parse(item[0]).instance_id
        criterion = self.criteria.get((instance_id, item[1]))
        if instance_id in self.withdrawn:
            return None  # a withdrawn consultation's items leave the meta-evaluation
        if criterion is None or criterion.kind is CriterionKind.RULE:
            return None
        intent = self.intents.get(instance_id)
        category = self.categories.get((criterion.tags, intent))
        if category is None:
            category = criterion_category(criterion.tags, intent)
            self.categories[(criterion.tags, intent)] = category
        polarity = "positive" if criterion.weight > 0 else "negative"
        found = self.shared.get((instance_id, polarity, category))
        if found is None:
            found = ItemInfo(
                case=instance_id,
                polarity=polarity,
                category=category,
                consultation=self.consultations.get(instance_id, ""),
            )
            self.shared[(instance_id, polarity, category)] = found
        return found


def meta_eval(
    store: RunStore,
    labels: Iterable[Path | str] = (),
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> list[MetaRow]:
    """Every grader and every physician against the physicians (``stats.meta_evaluate``)."""
    inputs = load_meta_inputs(store, labels)
    if not inputs.physicians:
        return []
    return meta_evaluate(
        inputs.graders, inputs.physicians, inputs.info, seed=seed, resamples=resamples
    )


def import_labels(store: RunStore, path: Path | str, *, skip_unknown: bool = False) -> int:
    """Store a label file's labels as panel verdicts (``panel.verdict``), as if given in the
    review app, so the report and every later ``eval meta`` see them; returns the count."""
    rubrics = evaluation_rubrics(store)
    responses = set(store.keys(stages.EVAL_RESPONSE))
    found = read_labels(path, rubrics, responses, skip_unknown=skip_unknown)
    count = 0
    for physician, items in sorted(found.items()):
        for (response, criterion_id), value in sorted(items.items()):
            key = VerdictKey(physician, response, criterion_id).format()
            verdict = Verdict(criterion_id=criterion_id, value=value, grader=physician)
            store.put(stages.PANEL_VERDICT, key, verdict)
            count += 1
    return count
