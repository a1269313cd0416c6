"""Cache hits on rerun, the offline baseline and its rule table, model specs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from medrealmm.llm import (
    OFFLINE_NAME,
    CachedClient,
    ChatRequest,
    GenerationParams,
    ImagePart,
    LLMCache,
    LLMClient,
    LLMError,
    Message,
    OfflineClient,
    OpenAICompatibleClient,
    TextPart,
    UnknownModelError,
    build_client,
    cache_key,
    complete_structured,
    resolve_spec,
)
from medrealmm.llm.offline import RULE_MODULES, default_rules, merge_rules
from medrealmm.testing import FakeOpenAIServer, FakeReply


class Echo(BaseModel):
    n: int


def _echo(request: ChatRequest) -> str:
    return json.dumps({"n": int(request.inputs["n"])})


ECHO_RULES = {"test.echo": _echo}


def _req(n: int) -> ChatRequest:
    return ChatRequest(task="test.echo", messages=[Message.text("user", f"n={n}")], inputs={"n": n})


async def test_rerun_with_cache_makes_no_new_calls(tmp_path: Path) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content='{"n": 1}')) as server:
        for _ in range(2):  # the second pass is a "rerun" in a fresh process
            cache = LLMCache(tmp_path / "cache.sqlite")
            inner = OpenAICompatibleClient("m", base_url=server.base_url, api_key="k")
            client = CachedClient(inner, cache)
            results = [await complete_structured(client, _req(i), Echo) for i in range(5)]
            assert all(r.ok for r in results)
            cache.close()
    assert len(server.requests) == 5  # every call made exactly once across both runs
    assert client.hits == 5 and client.misses == 0


async def test_changed_model_settings_do_not_hit_the_old_cache(tmp_path: Path) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content='{"n": 1}')) as server:
        cache = LLMCache(tmp_path / "cache.sqlite")
        for temperature in (0.0, 0.0, 0.7):
            inner = OpenAICompatibleClient(
                "m", base_url=server.base_url, params=GenerationParams(temperature=temperature)
            )
            await CachedClient(inner, cache).complete(_req(1))
    assert len(server.requests) == 2  # same settings hit; a new temperature asks again


def test_offline_cache_identity_tracks_the_rule_source() -> None:
    identity = OfflineClient(rules=ECHO_RULES).cache_identity(_req(1))
    assert (
        identity.startswith(f"{OFFLINE_NAME}@rules:") and identity != f"{OFFLINE_NAME}@rules:none"
    )


async def test_rejected_answers_are_not_replayed_by_a_rerun(tmp_path: Path) -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content='{"n": 1}')) as server:
        server.script(FakeReply(content="garbage"), FakeReply(content="garbage"))
        cache = LLMCache(tmp_path / "cache.sqlite")
        client = CachedClient(OpenAICompatibleClient("m", base_url=server.base_url), cache)
        first = await complete_structured(client, _req(1), Echo, attempts=2)
        assert not first.ok
        second = await complete_structured(client, _req(1), Echo, attempts=2)
    assert second.ok and second.value == Echo(n=1)
    assert len(server.requests) == 3  # the rerun asked again instead of replaying "garbage"


def test_cache_key_depends_on_what_determines_the_answer() -> None:
    base = _req(1)
    assert cache_key("a", base) == cache_key("a", _req(1))
    assert cache_key("a", base) != cache_key("b", base)
    assert cache_key("a", base) != cache_key("a", _req(2))
    warmer = base.model_copy(update={"params": GenerationParams(temperature=0.7)})
    assert cache_key("a", base) != cache_key("a", warmer)
    other_inputs = base.model_copy(update={"inputs": {"n": 99}})
    assert cache_key("a", base) == cache_key("a", other_inputs)  # inputs never enter the key


def test_cache_keys_of_existing_stores_still_match() -> None:
    """The key is built from pre-serialised pieces; its bytes must be those of the canonical
    JSON of the whole body, or every run made before would miss its cache on resume."""
    import hashlib

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    request = _req(7).model_copy(
        update={"json_schema": schema, "params": GenerationParams(temperature=0.2, seed=3)}
    )
    body = {
        "client": "judge|m",
        "messages": [
            {"role": m.role, "content": [p.model_dump(mode="json") for p in m.content]}
            for m in request.messages
        ],
        "params": request.params.model_dump(mode="json"),
        "schema": schema,
    }
    blob = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    expected = hashlib.sha256(blob.encode("utf-8")).hexdigest()
    assert cache_key("judge|m", request) == expected
    assert cache_key("judge|m", request) == expected  # the schema's memo gives the same bytes
    changed = {**schema, "required": []}
    assert cache_key("judge|m", request.model_copy(update={"json_schema": changed})) != expected


def _whole_dump_key(client_name: str, request: ChatRequest) -> str:
    """The key as it was first made: the whole body dumped at once, images by their digest."""
    import hashlib

    def part(p: TextPart | ImagePart) -> dict[str, object]:
        if isinstance(p, ImagePart):
            return {"type": "image", "sha256": hashlib.sha256(p.url.encode()).hexdigest()}
        return p.model_dump(mode="json")

    body = {
        "client": client_name,
        "messages": [
            {"role": m.role, "content": [part(p) for p in m.content]} for m in request.messages
        ],
        "params": request.params.model_dump(mode="json"),
        "schema": request.json_schema,
    }
    blob = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    "params",
    [
        GenerationParams(),
        GenerationParams(temperature=0.0),
        GenerationParams.model_construct(temperature=0, top_p=None, max_tokens=None, seed=None),
        GenerationParams(temperature=-0.0, top_p=1.0, max_tokens=64, seed=0),
        GenerationParams(extra_body={"b": [1, "二"], "a": {"z": None, "y": 0.5}}),
    ],
)
@pytest.mark.parametrize("schema", [None, {"type": "object", "required": ["n"], "b": "二"}])
def test_piecewise_key_is_the_whole_dump(params: GenerationParams, schema: object) -> None:
    """Messages, settings and schema are written piece by piece (and memoised); the bytes must
    be those of one dump for text, images, escapes, several messages and any settings."""
    image = ImagePart(url="data:image/png;base64,iVBORw0KGgo=")
    awkward = 'tab\t "quote" \\ \u0000 \u2028 \ud7ff 😀 换行\n'
    request = ChatRequest(
        task="evaluate.grader",
        messages=[
            Message.text("system", "系统 " + awkward),
            Message(
                role="user",
                content=[
                    TextPart(text="看图"),
                    image,
                    TextPart(text=""),
                    image,
                    TextPart(text="尾"),
                ],
            ),
            Message.text("assistant", "{}"),
        ],
        params=params,
        json_schema=schema,  # type: ignore[arg-type]
    )
    for client in ("judge|m|json_schema|img|{}", 'odd "name" 二'):
        assert cache_key(client, request) == _whole_dump_key(client, request)
        assert cache_key(client, request) == _whole_dump_key(client, request)  # memo hits


async def test_offline_baseline_is_deterministic_and_labelled() -> None:
    client = OfflineClient(rules=ECHO_RULES)
    assert client.is_baseline and client.name == OFFLINE_NAME
    first = await client.complete(_req(7))
    second = await client.complete(_req(7))
    assert first.text == second.text == '{"n": 7}'


async def test_offline_baseline_without_a_rule_is_a_clear_failure() -> None:
    request = ChatRequest(task="nobody.handles.this", messages=[Message.text("user", "x")])
    with pytest.raises(LLMError, match=r"no rule for task 'nobody\.handles\.this'"):
        await OfflineClient().complete(request)
    result = await complete_structured(OfflineClient(), request, Echo)
    assert not result.ok and "no rule" in (result.error or "")


def test_a_task_claimed_by_two_rule_tables_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        merge_rules(ECHO_RULES, {"test.echo": lambda request: "{}"})
    assert merge_rules(ECHO_RULES, ECHO_RULES) == ECHO_RULES


def test_every_agent_task_has_an_offline_rule_from_the_one_list() -> None:
    import importlib

    rules = default_rules()
    assert {name.rsplit(".", 2)[1] for name in RULE_MODULES} == {
        task.split(".")[0] for task in rules
    }
    for name in RULE_MODULES:
        assert importlib.import_module(name).RULES.items() <= rules.items()


async def test_every_client_implements_the_whole_protocol(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "c.sqlite")
    openai_client = OpenAICompatibleClient("m", base_url="http://127.0.0.1:9/v1", vision=False)
    clients = [OfflineClient(), openai_client, CachedClient(OfflineClient(), cache)]
    for client in clients:
        assert isinstance(client, LLMClient)
        client.forget(_req(1))
        await client.aclose()
    assert [c.vision for c in clients] == [True, False, True]
    assert not CachedClient(openai_client, cache).vision


def test_resolve_spec_and_build_client(tmp_path: Path) -> None:
    assert resolve_spec("offline").backend == "offline"
    config = tmp_path / "models.yaml"
    config.write_text(
        "models:\n  - name: qwen\n    model: Qwen/Qwen3-VL\n    base_url: http://127.0.0.1:9/v1\n"
        "    params: {temperature: 0.7, top_p: 0.95}\n    concurrency: 4\n",
        encoding="utf-8",
    )
    spec = resolve_spec("qwen", config)
    assert spec.model == "Qwen/Qwen3-VL" and spec.params.top_p == 0.95
    with pytest.raises(UnknownModelError, match="known: offline, qwen"):
        resolve_spec("gpt-x", config)  # never an ad hoc client for the SDK's public default
    client = build_client(spec)
    assert isinstance(client, OpenAICompatibleClient) and client.name == "qwen"
    cached = build_client(spec, cache=LLMCache(tmp_path / "c.sqlite"))
    assert isinstance(cached, CachedClient) and cached.reads_pixels
    # the in-process baseline answers faster than a cache lookup: it is never wrapped
    baseline = build_client(resolve_spec("offline"), cache=LLMCache(tmp_path / "c.sqlite"))
    assert isinstance(baseline, OfflineClient) and not baseline.reads_pixels


def test_bad_model_config_names_file_and_entry(tmp_path: Path) -> None:
    from medrealmm.io import DataError
    from medrealmm.llm import load_model_specs

    config = tmp_path / "models.yaml"
    config.write_text("models:\n  - name: a\n  - name: b\n    concurrency: 0\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_model_specs(config)
    assert info.value.line == 2 and info.value.field == "concurrency"
