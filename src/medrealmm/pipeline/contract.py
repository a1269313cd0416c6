"""The stage contract: what every step of the chain declares and how it is run.

In the spirit of datatrove's ``PipelineStep``: a stage names itself, the one store stage it
reads, the store stages it writes, the agent role it calls (if any) and the phase CLI that is
its thin view. ``run(ctx)`` does the work and returns a ``StageReport``; the runner checks the
declared input before calling it, so no stage silently reads something else.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, TypeVar

from medrealmm.llm import LLMClient
from medrealmm.llm.session import open_client, run_with_client
from medrealmm.losses import Loss
from medrealmm.pipeline.settings import PipelineSettings
from medrealmm.store import RunStore

T = TypeVar("T")


@dataclass
class StageReport:
    """What a stage did: summary lines for the operator, how many units failed, and what each
    of its steps lost (``run_stage`` adds the stage's failed rows to what it reports)."""

    stage: str
    lines: list[str] = field(default_factory=list)
    failed: int = 0
    skipped: bool = False
    losses: list[Loss] = field(default_factory=list)


@dataclass
class StageContext:
    """Everything a stage may touch: the store, the run folder, the settings and clients."""

    store: RunStore
    run_dir: Path
    settings: PipelineSettings
    progress: bool = True

    def client(self, model: str, *, unmasked: str | None = None) -> LLMClient:
        """The client for ``model`` over this run's LLM cache (endpoint rules live in llm);
        ``unmasked`` names a step whose calls carry un-masked patient data."""
        return open_client(
            model,
            self.settings.models_config,
            self.store.cache,
            unmasked=unmasked,
            meta=self.store,
        )

    def run_async(
        self,
        model: str | None,
        work: Callable[[LLMClient | None], Awaitable[T]],
        *,
        unmasked: str | None = None,
    ) -> T:
        """Resolve ``model``, run ``work`` with its client on one event loop, then close it;
        ``None`` (a role switched off, e.g. rules-only de-identification) passes no client."""
        client = None if model is None else self.client(model, unmasked=unmasked)
        return run_with_client(client, work)


class Stage(ABC):
    """One step of the chain. Subclasses set the class attributes and implement ``run``."""

    name: ClassVar[str]
    #: The store stage read; None for the first stage, which reads the run's input folder.
    reads: ClassVar[str | None]
    writes: ClassVar[tuple[str, ...]]
    #: The model role in ``PipelineSettings.models`` this stage calls, if any.
    agent: ClassVar[str | None] = None
    #: The phase command that runs this stage alone.
    cli: ClassVar[str]

    def source(self, settings: PipelineSettings) -> str | None:
        """The store stage this run reads: ``reads``, unless a setting names another."""
        return self.reads

    @abstractmethod
    def run(self, ctx: StageContext) -> StageReport: ...

    def __repr__(self) -> str:
        return f"<stage {self.name}: {self.reads} -> {', '.join(self.writes)}>"
