"""Run the rubric Refiner after physicians submit feedback, one pass at a time.

A submission kicks the worker; if a pass is already running it runs once more afterwards, so
no feedback waits for a restart and no round is refined twice at once.
"""

from __future__ import annotations

import asyncio
import logging

from medrealmm.llm import LLMClient
from medrealmm.llm.session import open_client
from medrealmm.mccp import unmasked_instances
from medrealmm.review.context import ReviewSettings
from medrealmm.rubric import RubricSettings
from medrealmm.rubric.stage import refine_all
from medrealmm.store import RunStore

log = logging.getLogger(__name__)


class RefineWorker:
    def __init__(self, store: RunStore, settings: ReviewSettings) -> None:
        self.store = store
        self.settings = settings
        self.rubric_settings = RubricSettings(max_rounds=settings.max_rounds)
        self._lock = asyncio.Lock()
        self._again = False
        self._client: LLMClient | None = None

    @property
    def client(self) -> LLMClient:
        if self._client is None:
            unmasked = unmasked_instances(self.store, "the review app's Refiner")
            self._client = open_client(
                self.settings.model,
                self.settings.models_config,
                self.store.cache,
                unmasked=unmasked,
                meta=self.store,
            )
        return self._client

    async def kick(self) -> None:
        if self._lock.locked():
            self._again = True
            return
        async with self._lock:
            while True:
                self._again = False
                try:
                    stats = await refine_all(self.store, self.client, self.rubric_settings)
                except Exception:  # the web request already returned; keep serving
                    log.exception("rubric refinement pass failed")
                    return
                if stats.failed:
                    log.warning("rubric refinement: %d rounds failed", stats.failed)
                if not self._again:
                    return
