"""Stage 4a agent against a real OpenAI-compatible HTTP server and on the offline baseline."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from medrealmm.corpus import CorpusConfig, Drop, DropReason, build_corpus, screen_privacy
from medrealmm.corpus.build import DROPPED_FILE, MANIFEST_FILE, SAMPLED_FILE
from medrealmm.corpus.privacy_agent import PrivacyScreen, screen_request
from medrealmm.io import iter_jsonl
from medrealmm.llm import CachedClient, ImagePart, OfflineClient, OpenAICompatibleClient
from medrealmm.llm.dialogue import IMAGE_REFERENCE
from medrealmm.schema import Consultation, ImageOrigin, ImageRef
from medrealmm.store import FAILED, RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

KEEP = PrivacyScreen(remove=False, reason="可保留").model_dump_json()
REMOVE = PrivacyScreen(remove=True, reason="依赖正脸").model_dump_json()


def _models_yaml(tmp_path: Path, server: FakeOpenAIServer, *, vision: bool = True) -> Path:
    path = tmp_path / "models.yaml"
    entry = {
        "name": "fake-vlm",
        "model": "fake-vlm-1",
        "base_url": server.base_url,
        "api_key_env": "FAKE_KEY",
        "vision": vision,
        "max_attempts": 1,
    }
    path.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
    return path


def _config() -> CorpusConfig:
    return CorpusConfig.model_validate({"privacy": {"model": "fake-vlm"}})


def _client(server: FakeOpenAIServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient("fake-vlm-1", base_url=server.base_url, max_attempts=1)


def test_prompt_carries_department_categories_dialogue_and_images(
    demo_corpus: Path, tmp_path: Path
) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content=KEEP)) as server:
        config_file = _models_yaml(tmp_path, server)
        manifest = build_corpus(
            demo_corpus, tmp_path / "run", _config(), workers=1, models_config=config_file
        )
        requests = server.requests
    assert len(requests) == 33  # every case that passed the rule, once
    assert manifest.privacy_backend == "fake-vlm" and not manifest.privacy_backend_is_baseline
    body = next(r for r in requests if "科室：内分泌科" in json.dumps(r, ensure_ascii=False))
    system, user = body["messages"]
    assert system["role"] == "system" and "正脸" in system["content"]
    texts = [part["text"] for part in user["content"] if part["type"] == "text"]
    assert "科室：内分泌科" in texts[0] and "lab_report" in texts[0] and "[1] 患者：" in texts[0]
    images = [p for p in user["content"] if p["type"] == "image_url"]
    assert images and images[0]["image_url"]["url"].startswith("data:image/")
    assert body["response_format"]["type"] == "json_schema"
    everything = json.dumps(requests, ensure_ascii=False)
    assert "蝴蝶" not in everything  # the face case was removed by rule before the agent


def test_agent_removals_are_recorded_as_face_dependent(demo_corpus: Path, tmp_path: Path) -> None:
    def responder(body: dict) -> FakeReply:
        text = json.dumps(body["messages"], ensure_ascii=False)
        return FakeReply(content=REMOVE if "科室：肿瘤科" in text else KEEP)

    with FakeOpenAIServer(responder) as server:
        config_file = _models_yaml(tmp_path, server, vision=False)
        build_corpus(demo_corpus, tmp_path / "run", _config(), workers=1, models_config=config_file)
        assert all(isinstance(m["content"], str) for r in server.requests for m in r["messages"])
    drops = list(iter_jsonl(tmp_path / "run" / DROPPED_FILE, Drop))
    agent = [d for d in drops if d.detail == "agent: remove"]
    assert [(d.department, d.reason) for d in agent] == [("肿瘤科", DropReason.FACE_DEPENDENT)]


async def test_malformed_output_is_repaired_by_retry(make_case) -> None:
    with FakeOpenAIServer() as server:
        server.script(
            FakeReply(content="我觉得可以保留"), FakeReply(content=f"```json\n{KEEP}\n```")
        )
        result = await screen_privacy(_client(server), make_case())
        assert result.ok and result.value == PrivacyScreen.model_validate_json(KEEP)
        assert result.attempts == 2
        repair = server.requests[1]["messages"]
        assert repair[-2] == {"role": "assistant", "content": "我觉得可以保留"}
        assert "无法通过校验" in repair[-1]["content"]


def test_malformed_output_drops_the_case_as_recorded_data(
    demo_corpus: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    with FakeOpenAIServer(lambda body: FakeReply(content="无法判断")) as server:
        config_file = _models_yaml(tmp_path, server, vision=False)
        manifest = build_corpus(demo_corpus, run, _config(), workers=1, models_config=config_file)
        assert len(server.requests) == 33 * 3  # three attempts each, with repair messages
    assert manifest.stages[-1].output == 0
    assert manifest.stages[-1].dropped == {"face_dependent": 1, "privacy_screen_failed": 33}
    with RunStore(run) as store:
        failures = store.failures(stages.CORPUS_PRIVACY)
        assert len(failures) == 33 and all("JSON" in e for e in failures.values())
    with FakeOpenAIServer(lambda body: FakeReply(content=KEEP)) as server:
        config_file = _models_yaml(tmp_path, server, vision=False)
        rerun = build_corpus(demo_corpus, run, _config(), workers=1, models_config=config_file)
        assert len(server.requests) == 33  # rejected answers are not replayed from the cache
    assert rerun.stages[-1].output == 33


def test_a_rerun_retries_only_the_failed_cases(demo_corpus: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"

    def flaky(body: dict) -> FakeReply:
        text = json.dumps(body["messages"], ensure_ascii=False)
        return FakeReply(status=503) if "科室：皮肤科" in text else FakeReply(content=KEEP)

    with FakeOpenAIServer(flaky) as server:
        config_file = _models_yaml(tmp_path, server, vision=False)
        first = build_corpus(demo_corpus, run, _config(), workers=1, models_config=config_file)
    assert first.stages[-1].dropped == {"face_dependent": 1, "privacy_screen_failed": 13}
    with RunStore(run) as store:
        assert store.count(stages.CORPUS_PRIVACY, FAILED) == 13
    with FakeOpenAIServer(lambda body: FakeReply(content=KEEP)) as server:
        config_file = _models_yaml(tmp_path, server, vision=False)
        second = build_corpus(demo_corpus, run, _config(), workers=1, models_config=config_file)
        assert len(server.requests) == 13  # the 20 finished cases were not asked again
    assert second.stages[-1].output == 33


async def test_offline_baseline_removes_when_the_patient_says_the_photo_is_the_face(
    make_case,
) -> None:
    skin = ImageRef(path="images/s.jpg", origin=ImageOrigin.PATIENT, category="skin")
    face_texts = ["这是我的正脸照片，脸上起了红斑", "您好", "两周了", "好的", "没用药", "考虑..."]
    removed = await screen_privacy(OfflineClient(), make_case(texts=face_texts, image=skin))
    assert removed.ok and removed.value is not None and removed.value.remove
    hand_texts = ["手背起疹子", "您好", "两周了", "好的", "没用药", "考虑湿疹"]
    kept = await screen_privacy(OfflineClient(), make_case(texts=hand_texts, image=skin))
    assert kept.ok and kept.value is not None and not kept.value.remove


class _PixelReadingBaseline(OfflineClient):
    """The offline baseline as it ran before it said it never reads pixels: every request
    inlined the images, and the cache wrapper keyed and stored each answer."""

    reads_pixels = True


def test_the_offline_screen_without_pixels_or_cache_writes_what_it_wrote_before(
    demo_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import medrealmm.corpus.build as build_module

    build_corpus(demo_corpus, tmp_path / "now", workers=1)
    monkeypatch.setattr(
        build_module,
        "open_client",
        lambda spec, config, cache, **_: CachedClient(_PixelReadingBaseline(spec.name), cache),
    )
    build_corpus(demo_corpus, tmp_path / "before", workers=1)
    for name in (SAMPLED_FILE, DROPPED_FILE, MANIFEST_FILE):
        assert (tmp_path / "now" / name).read_bytes() == (tmp_path / "before" / name).read_bytes()
    now, before = _store_rows(tmp_path / "now"), _store_rows(tmp_path / "before")
    assert now[:2] == before[:2]
    assert any(row[0] == stages.CORPUS_PRIVACY for row in now[0])  # the agent's verdicts
    assert now[2] == 0 < before[2]  # the baseline's answers are no longer cached


def _store_rows(run: Path) -> tuple[list[tuple[str, ...]], list[dict[str, object]], int]:
    """(the corpus rows but their time stamps, the usage rows, the cached answers)."""
    with RunStore(run) as store:
        usage, cached = store.usage(), len(store.cache)
    with sqlite3.connect(run / "store.sqlite") as db:
        rows = db.execute(
            "SELECT stage, key, status, payload, error FROM records"
            " WHERE stage LIKE 'corpus.%' ORDER BY stage, key"
        ).fetchall()
    return rows, usage, cached


def test_requests_for_a_client_that_never_reads_pixels_name_the_files(
    demo_corpus: Path,
) -> None:
    case = next(c for c in iter_jsonl(demo_corpus, Consultation) if c.patient_medical_images)
    root = demo_corpus.parent
    inlined = screen_request(case, root)
    named = screen_request(case, root, pixels=False)
    assert [m.plain_text for m in named.messages] == [m.plain_text for m in inlined.messages]
    assert named.inputs == inlined.inputs
    urls = [p.url for m in named.messages for p in m.content if isinstance(p, ImagePart)]
    assert urls and all(u.startswith(IMAGE_REFERENCE) for u in urls)
    assert {
        p.url[:11] for m in inlined.messages for p in m.content if isinstance(p, ImagePart)
    } == {"data:image/"}
