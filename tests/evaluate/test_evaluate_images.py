"""Each case's images are base64-encoded and hashed once, not once per criterion call, and
the run, the dry run and the inspect task send the same requests for the same case."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from medrealmm.evaluate import EvalSettings, run_evaluation
from medrealmm.evaluate import dryrun as eval_dryrun
from medrealmm.evaluate import run as eval_run
from medrealmm.evaluate.cases import image_root, load_eval_cases
from medrealmm.evaluate.requests import CaseRequests
from medrealmm.llm import ChatRequest, Completion, LLMClient, build_client, cache_key, dialogue
from medrealmm.llm import types as llm_types
from medrealmm.schema import CriterionKind, Instance
from medrealmm.store import RunStore, stages


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[str]:
    """Count the calls of ``module.name`` (still doing the real work)."""
    calls: list[str] = []
    real = getattr(module, name)

    def counting(arg: Any) -> str:
        calls.append(str(arg)[:80])
        return str(real(arg))

    monkeypatch.setattr(module, name, counting)
    return calls


def test_images_are_encoded_and_hashed_once_per_case(
    eval_store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded = _spy(monkeypatch, dialogue, "image_data_url")
    hashed = _spy(monkeypatch, llm_types, "url_digest")
    run_evaluation(eval_store, EvalSettings(model="offline", k=2))
    images = sum(i.image_count for i in eval_store.iter(stages.MCCP_INSTANCE, Instance))
    assert images > 0
    assert len(encoded) == images  # 2 replies and every criterion share one encoding
    assert not hashed  # the offline baseline is not cached: no key hashes them (the
    # cache key's hashing once per case is pinned below, on the requests themselves)


def test_case_requests_encode_and_hash_each_image_once(
    eval_store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded = _spy(monkeypatch, dialogue, "image_data_url")
    hashed = _spy(monkeypatch, llm_types, "url_digest")
    (case, *_), _ = load_eval_cases(eval_store)
    requests = CaseRequests(case.instance, image_root(eval_store))
    built = [requests.respond(with_images=True, sample=s) for s in range(2)]
    criteria = case.rubric.criteria * 5  # N grader calls, N well above the image count
    built += [requests.grader(c, "您好", with_images=True) for c in criteria]
    keys = {cache_key("judge", request) for request in built}
    assert case.instance.image_count > 0 and len(keys) > 1
    assert len(encoded) == case.instance.image_count
    assert len(hashed) == case.instance.image_count


class _Recorder:
    """Delegates to a real client and keeps every request it was given."""

    def __init__(self, inner: LLMClient, seen: list[ChatRequest]) -> None:
        self.inner = inner
        self.seen = seen

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: ChatRequest) -> Completion:
        self.seen.append(request)
        return await self.inner.complete(request)


def _recording(module: Any, monkeypatch: pytest.MonkeyPatch) -> list[ChatRequest]:
    seen: list[ChatRequest] = []
    real = module.build_client

    def build(spec: Any, **kwargs: Any) -> _Recorder:
        return _Recorder(real(spec, **kwargs), seen)

    monkeypatch.setattr(module, "build_client", build)
    return seen


def _said(requests: list[ChatRequest]) -> list[tuple[str, str]]:
    return sorted((r.task, "".join(m.model_dump_json() for m in r.messages)) for r in requests)


def test_run_dry_run_and_inspect_build_the_same_requests(
    eval_store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = EvalSettings(model="offline", limit=1)
    planned = _recording(eval_dryrun, monkeypatch)
    eval_dryrun.plan_evaluation(eval_store, settings)  # first: nothing cached yet
    sent = _recording(eval_run, monkeypatch)
    run_evaluation(eval_store, settings)
    assert any(r.task == "evaluate.grader" for r in sent)
    assert any(
        isinstance(p, llm_types.ImagePart) for r in sent for m in r.messages for p in m.content
    )
    assert _said(planned) == _said(sent)

    inspect_task = pytest.importorskip("medrealmm.evaluate.inspect_task")
    (case, *_), _ = load_eval_cases(eval_store)
    root: Path | None = image_root(eval_store)
    (respond,) = [r for r in sent if r.task == "evaluate.respond"]
    sample = inspect_task.to_sample(case.instance, case.rubric, root, True)
    expected = inspect_task._inspect_messages(respond.messages)
    assert [m.model_dump(exclude={"id"}) for m in sample.input] == [
        m.model_dump(exclude={"id"}) for m in expected
    ]
    graded: list[ChatRequest] = []
    reply = eval_store.get_raw(
        stages.EVAL_RESPONSE, next(iter(eval_store.keys(stages.EVAL_RESPONSE)))
    )
    asyncio.run(
        inspect_task.grade_reply(
            _Recorder(build_client(eval_run.resolve_spec("offline")), graded),
            case.instance,
            case.rubric,
            (reply or {})["text"],
            CaseRequests(case.instance, root),
            model="offline",
            images=True,
            grader_images=True,
        )
    )
    llm = [c for c in case.rubric.criteria if c.kind is CriterionKind.LLM]
    assert len(graded) == len(llm)
    assert _said(graded) == _said([r for r in sent if r.task == "evaluate.grader"])
