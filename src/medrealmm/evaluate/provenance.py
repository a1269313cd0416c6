"""Run provenance: one ``EvalSpec`` row per evaluation, in the spirit of inspect_ai's EvalSpec.

Every response, verdict and score an evaluation writes carries its ``eval_id``, and every
verdict and score the version of the rubric it was graded against, so any number traces back
to the model, grader, prompts, settings and benchmark version that produced it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from medrealmm._version import __version__
from medrealmm.evaluate.canary import CanaryCheck
from medrealmm.evaluate.scoring import DEFAULT_ABSTAIN, AbstainPolicy
from medrealmm.llm import Completion, ModelSpec
from medrealmm.store import RunStore, stages

PROMPT_PACKAGE = "medrealmm.evaluate"
#: Store meta key: the BenchmarkRef of what a run's instances and rubrics were read from.
BENCHMARK_META = "eval.benchmark"

EvalKind = Literal["generated", "online", "imported"]
#: One call per criterion (the paper's grader) or all of a reply's criteria in one call.
GradingMode = Literal["per-criterion", "grouped"]
PER_CRITERION: GradingMode = "per-criterion"
GROUPED: GradingMode = "grouped"
PanelMethod = Literal["majority", "unanimous", "any", "weighted"]


class PanelRef(BaseModel):
    """A judge panel: its graders' own evaluations hold their verdicts; the panel's verdict
    is derived from them by ``method`` (evaluate.panel)."""

    model_config = ConfigDict(extra="forbid")

    method: PanelMethod
    members: list[str]
    weights: dict[str, float] = Field(default_factory=dict, description="weighted: by member.")


class ModelRef(BaseModel):
    """A model as configured (never its API key), plus the ids its server answered as."""

    model_config = ConfigDict(extra="forbid")

    name: str
    backend: str
    model: str | None = None
    base_url: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    served: list[str] = Field(default_factory=list, description="Model ids the server reported.")
    source: str | None = Field(default=None, description="Documentation or model card URL.")
    checkpoint: str | None = Field(default=None, description="Checkpoint or snapshot date.")

    def identity(self) -> dict[str, Any]:
        """What enters an evaluation's id: not the ids served nor the documentation link;
        a checkpoint only when given, so evaluations made before it existed keep theirs."""
        found = self.model_dump(mode="json", exclude={"served", "source"})
        if found.get("checkpoint") is None:
            found.pop("checkpoint", None)
        return found

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> ModelRef:
        return cls(
            name=spec.name,
            backend=spec.backend,
            model=spec.model,
            base_url=spec.base_url,
            params=spec.params.model_dump(mode="json", exclude_none=True),
            source=spec.source,
            checkpoint=spec.checkpoint,
        )


class BenchmarkRef(BaseModel):
    """Which benchmark the cases came from: a release (name, version, manifest hash) or a
    builder's run store (its instances and applicable rubrics as they stood)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["release", "run"]
    location: str
    name: str | None = None
    version: str | None = None
    manifest_sha256: str | None = None

    @property
    def identity(self) -> dict[str, Any]:
        """What makes two benchmarks the same: a moved release is still the same release."""
        if self.kind == "release":
            return {"kind": self.kind, "name": self.name, "version": self.version,
                    "manifest_sha256": self.manifest_sha256}  # fmt: skip
        return {"kind": self.kind, "location": self.location}


class UsageTotals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0  # of the calls whose server said
    completion_tokens: int = 0
    unknown_prompt_calls: int = 0  # calls whose server did not say how many prompt tokens

    def merge(self, other: UsageTotals) -> None:
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.unknown_prompt_calls += other.unknown_prompt_calls
        self.completion_tokens += other.completion_tokens

    def add(self, completion: Completion) -> None:
        self.calls += 1
        if completion.cached:
            self.cached_calls += 1
        else:
            if completion.usage.prompt_tokens is None:  # the server did not say
                self.unknown_prompt_calls += 1
            else:
                self.prompt_tokens += completion.usage.prompt_tokens
            self.completion_tokens += completion.usage.completion_tokens


class EvalSpec(BaseModel):
    """One evaluation: who answered (``model``; None for the online reply and imported
    replies), who graded, with which prompts and settings, over which benchmark, when."""

    model_config = ConfigDict(extra="forbid")

    eval_id: str
    kind: EvalKind
    label: str = Field(description="The model name its scores carry.")
    model: ModelRef | None = None
    grader: ModelRef
    images: bool
    grader_images: bool
    k: int = Field(ge=1)
    prompts: dict[str, str] = Field(description="Template file -> sha256 of its text.")
    benchmark: BenchmarkRef
    imported_from: str | None = Field(default=None, description="sha256 of an imported file.")
    abstain: AbstainPolicy = Field(
        default=DEFAULT_ABSTAIN, description="What a 'cannot assess' verdict counts as."
    )
    grading: GradingMode = PER_CRITERION
    panel: PanelRef | None = None
    package_version: str = __version__
    started_at: datetime
    finished_at: datetime | None = None
    usage: dict[str, UsageTotals] = Field(default_factory=dict, description="By stage.")
    contamination: CanaryCheck | None = Field(
        default=None,
        description="The evaluated model asked to complete the release's canary (releases only).",
    )

    def record(self, stage: str, completion: Completion, *, respondent: bool) -> None:
        """Count a call and remember which model id the server said answered it."""
        self.usage.setdefault(stage, UsageTotals()).add(completion)
        ref = self.model if respondent else self.grader
        if ref is not None and ref.backend != "offline" and completion.model not in ref.served:
            ref.served.append(completion.model)


def rater_name(grader: str, grading: GradingMode = PER_CRITERION) -> str:
    """The name a grader's verdicts and scores are stored under: grouped grading is a
    measurement of its own, kept beside the per-criterion one on the same replies."""
    return grader if grading == PER_CRITERION else f"{grader}[{grading}]"


def prompt_hashes(package: str = PROMPT_PACKAGE) -> dict[str, str]:
    folder = resources.files(package) / "prompts"
    return {
        entry.name: hashlib.sha256(entry.read_bytes()).hexdigest()
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".j2")
    }


def benchmark_of(store: RunStore) -> BenchmarkRef:
    """The benchmark a consumer run was filled from, else the builder's run store itself."""
    recorded = store.get_meta(BENCHMARK_META)
    if recorded:
        return BenchmarkRef.model_validate(recorded)
    return BenchmarkRef(kind="run", location=str(store.path.parent.resolve()))


def eval_id_of(
    *,
    kind: EvalKind,
    label: str,
    model: ModelRef | None,
    grader: ModelRef,
    images: bool,
    grader_images: bool,
    k: int,
    prompts: dict[str, str],
    benchmark: BenchmarkRef,
    imported_from: str | None = None,
    abstain: AbstainPolicy = DEFAULT_ABSTAIN,
    grading: GradingMode = PER_CRITERION,
    panel: PanelRef | None = None,
) -> str:
    """A digest of everything that decides the numbers; reruns of one evaluation share it.
    The abstain policy, grading mode and panel enter only when set, so an evaluation made
    before they existed keeps its id."""
    identity = {
        "kind": kind,
        "label": label,
        "model": model.identity() if model else None,
        "grader": grader.identity(),
        "images": images,
        "grader_images": grader_images,
        "k": k,
        "prompts": prompts,
        "benchmark": benchmark.identity,
        "imported_from": imported_from,
    }
    if AbstainPolicy(abstain) is not DEFAULT_ABSTAIN:
        identity["abstain"] = str(abstain)
    if grading != PER_CRITERION:
        identity["grading"] = grading
    if panel is not None:
        identity["panel"] = panel.model_dump(mode="json")
    blob = json.dumps(identity, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return "eval-" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def open_spec(store: RunStore, **fields: Any) -> EvalSpec:
    """The stored spec of this evaluation (a resumed run keeps its start time and usage),
    or a new one; ``fields`` are those of ``eval_id_of``."""
    eval_id = eval_id_of(**fields)
    existing = store.get(stages.EVAL_SPEC, eval_id, EvalSpec)
    if existing is not None:
        return existing.model_copy(update={"finished_at": None})
    return EvalSpec(eval_id=eval_id, started_at=datetime.now(UTC), **fields)


def save_spec(store: RunStore, spec: EvalSpec, *, finished: bool = False) -> None:
    if finished:
        spec.finished_at = datetime.now(UTC)
    store.put(stages.EVAL_SPEC, spec.eval_id, spec)


def load_specs(store: RunStore) -> dict[str, EvalSpec]:
    return dict(store.items(stages.EVAL_SPEC, EvalSpec))


class SettingConflict(ValueError):
    """A setting asked for differs from the one the evaluation's results were made with."""


#: What an evaluation's spec records that changes its numbers without changing where its rows
#: are stored (model, images and grader name the rows): a resumed run keeps each, and a
#: different one is refused. Spec field -> (what sets it, value when never recorded, how to
#: resume). The decoding settings come from the models YAML on every run, never left out.
RECORDED_SETTINGS: dict[str, tuple[str, Any, str]] = {
    "grader_images": ("--grader-images", True, "leave --grader-images out"),
    "k": ("--k", 1, "leave --k out"),
    "abstain": ("--abstain", DEFAULT_ABSTAIN, "leave --abstain out"),
    "model.params": (
        "model params",
        None,
        "restore the model's params (models YAML, --max-tokens)",
    ),
    "grader.params": ("grader params", None, "restore the grader's params (models YAML)"),
}


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return str(value)


def _field(spec: EvalSpec, name: str) -> Any:
    """``spec``'s value of a dotted field name (None where a part is absent)."""
    value: Any = spec
    for part in name.split("."):
        value = None if value is None else getattr(value, part)
    return value


def recorded_settings(
    store: RunStore,
    label: str,
    images: bool,
    grader: str,
    grading: GradingMode,
    asked: dict[str, Any],
) -> dict[str, Any]:
    """The value of each of ``RECORDED_SETTINGS`` for this evaluation: the one its newest
    earlier run recorded (the scores of one model, image condition and grader are one set of
    rows, so a resumed run keeps it), else the one ``asked`` (None: left out), else the
    default. One asked for that differs from the recorded one is refused, naming both."""
    earlier = [
        spec
        for spec in load_specs(store).values()
        if spec.label == label
        and spec.images == images
        and spec.grader.name == grader
        and spec.grading == grading
        and spec.panel is None
    ]
    newest = max(earlier, key=lambda spec: spec.started_at) if earlier else None
    found = {}
    for name, (option, default, resume) in RECORDED_SETTINGS.items():
        wanted = asked.get(name)
        kept = None if newest is None else _field(newest, name)
        if kept is None:
            found[name] = default if wanted is None else wanted
            continue
        if wanted is not None and wanted != kept:
            raise SettingConflict(
                f"{label} (images {_shown(images)}) graded by {grader} was evaluated with "
                f"{option} {_shown(kept)}; this run asks {option} {_shown(wanted)}. To resume, "
                f"{resume}; or evaluate into another --out"
            )
        found[name] = kept
    return found
