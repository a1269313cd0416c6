"""The one way the requests of an evaluation case are built (run, dry run and inspect alike).

A case's dialogue is made once per image condition: its images are read and base64-encoded
once, and the same ``ImagePart`` objects go into the reply request and every grader request,
so the cache key hashes each image once per case (``ImagePart.digest``), not per criterion.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from medrealmm.evaluate.grader import GraderPrompt, grouped_request
from medrealmm.evaluate.respond import respond_request
from medrealmm.llm import ChatRequest, dialogue_parts
from medrealmm.llm.types import Part
from medrealmm.schema import Criterion, Instance


class CaseRequests:
    """Requests for one instance; ``image_root`` None means every dialogue is text-only."""

    def __init__(self, instance: Instance, image_root: Path | None) -> None:
        self.instance = instance
        self.image_root = image_root
        self._parts: dict[bool, list[Part]] = {}
        self._graders: dict[str, GraderPrompt] = {}

    def parts(self, with_images: bool) -> list[Part]:
        """The dialogue with pixels (``with_images``) or markers only, built on first use."""
        found = self._parts.get(with_images)
        if found is None:
            root = self.image_root if with_images else None
            found = self._parts[with_images] = dialogue_parts(
                self.instance.context, image_root=root
            )
        return found

    def respond(
        self, *, with_images: bool, sample: int = 0, base_seed: int | None = None
    ) -> ChatRequest:
        return respond_request(
            department=self.instance.department,
            context=self.instance.context,
            parts=self.parts(with_images),
            with_images=with_images,
            sample=sample,
            base_seed=base_seed,
        )

    def grader(self, criterion: Criterion, reply: str, *, with_images: bool) -> ChatRequest:
        """The grader request for one LLM criterion of ``reply``; the criteria of a reply share
        its rendered prompt (``GraderPrompt``)."""
        prompt = self._graders.get(reply)
        if prompt is None:
            prompt = self._graders[reply] = GraderPrompt(self.instance.department, reply)
        return prompt.request(self.parts(with_images), criterion)

    def grouped(
        self, criteria: Sequence[Criterion], reply: str, *, with_images: bool
    ) -> ChatRequest:
        """One grader request for several LLM criteria of ``reply`` (``--grading grouped``)."""
        return grouped_request(
            department=self.instance.department,
            parts=self.parts(with_images),
            criteria=criteria,
            reply=reply,
        )
