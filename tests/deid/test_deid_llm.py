from __future__ import annotations

import json
from pathlib import Path

from medrealmm.deid.baseline import text_llm_baseline
from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.llm_pass import TASK, build_request
from medrealmm.llm import OfflineClient, OpenAICompatibleClient
from medrealmm.testing import FakeOpenAIServer, FakeReply

TURNS = ["我叫朱秀英，电话13812345678。", "我妈妈吴国庆也有高血压，在协和看过。"]


def client_for(server: FakeOpenAIServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        "fake-model", base_url=server.base_url, api_key="k", max_attempts=1, timeout_s=10
    )


async def test_model_sees_only_rule_masked_text_and_its_spans_are_merged() -> None:
    reply = {"spans": [{"turn": 1, "text": "吴国庆", "type": "NAME"}]}
    with FakeOpenAIServer() as server:
        server.script(FakeReply(content=json.dumps(reply, ensure_ascii=False)))
        outcome = await deid_turns(TURNS, client_for(server))
        prompt = json.dumps(server.requests[0]["messages"], ensure_ascii=False)
    assert "13812345678" not in prompt and "朱秀英" not in prompt
    assert "[PHONE]" in prompt and "[NAME]" in prompt and "去标识化" in prompt
    assert outcome.llm_ok is True
    # Rules and NER already find both; the model's span merges without doubling.
    assert outcome.masked[1] == "我妈妈[NAME]也有高血压，在[HOSPITAL]看过。"
    assert len(outcome.spans[1]) == 2


async def test_malformed_output_is_repaired_by_a_retry() -> None:
    with FakeOpenAIServer() as server:
        server.script(
            FakeReply(content="好的，我找到了：吴国庆"),
            FakeReply(content='{"spans": [{"turn": 1, "text": "协和", "type": "HOSPITAL"}]}'),
        )
        outcome = await deid_turns(TURNS, client_for(server))
        assert len(server.requests) == 2
        assert "无法通过校验" in json.dumps(server.requests[1]["messages"], ensure_ascii=False)
    assert outcome.llm_ok is True
    assert "[HOSPITAL]看过" in outcome.masked[1]


async def test_a_failed_llm_pass_is_recorded_and_rule_masking_still_applies() -> None:
    with FakeOpenAIServer(lambda body: FakeReply(content="not json")) as server:
        outcome = await deid_turns(TURNS, client_for(server))
    assert outcome.llm_ok is False and outcome.llm_error
    assert outcome.masked[0] == "我叫[NAME]，电话[PHONE]。"


async def test_proposals_that_are_not_in_the_turn_or_hold_placeholders_are_ignored() -> None:
    reply = {
        "spans": [
            {"turn": 0, "text": "[NAME]", "type": "NAME"},
            {"turn": 0, "text": "不存在", "type": "NAME"},
            {"turn": 9, "text": "朱", "type": "NAME"},
        ]
    }
    with FakeOpenAIServer() as server:
        server.script(FakeReply(content=json.dumps(reply, ensure_ascii=False)))
        outcome = await deid_turns(TURNS, client_for(server))
    assert all(s.source != "llm" for turn in outcome.spans for s in turn)


def test_offline_baseline_is_a_real_rule_set() -> None:
    request = build_request(
        ["我老公刘志强也咳嗽", "孩子小名叫小宝。", "在华西看的", "微信号zhu_xy2024", "没有别的了"]
    )
    assert request.task == TASK
    found = json.loads(text_llm_baseline(request))["spans"]
    assert {(s["turn"], s["text"], s["type"]) for s in found} == {
        (0, "刘志强", "NAME"),
        (1, "小宝", "NAME"),
        (3, "zhu_xy2024", "ID"),
    }  # 华西 is the rules' (patterns.FAMOUS_HOSPITAL): the baseline looks only past them


async def test_offline_client_runs_the_same_merge_path() -> None:
    outcome = await deid_turns(TURNS, OfflineClient())
    assert outcome.masked == [
        "我叫[NAME]，电话[PHONE]。",
        "我妈妈[NAME]也有高血压，在[HOSPITAL]看过。",
    ]


async def test_usage_counts_an_llm_pass_that_failed_for_good(tmp_path: Path) -> None:
    from medrealmm.deid.stage import deid_one
    from medrealmm.schema import Consultation
    from medrealmm.store import RunStore

    case = Consultation.model_validate(
        {
            "id": "c1",
            "department": "皮肤科",
            "events": [
                {"sender": "patient", "content": TURNS[0], "timestamp": "2024-01-01T10:00:00"},
                {"sender": "physician", "content": "好的", "timestamp": "2024-01-01T10:01:00"},
            ],
        }
    )
    with (
        FakeOpenAIServer(lambda body: FakeReply(status=503)) as server,
        RunStore(tmp_path) as store,
    ):
        client = OpenAICompatibleClient(
            "fake-model",
            base_url=server.base_url,
            api_key="k",
            max_attempts=2,
            backoff_initial_s=0.01,
            backoff_max_s=0.01,
        )
        _, record = await deid_one(case, tmp_path, tmp_path / "out", client, store)
        (row,) = store.usage()
    assert record.llm_ok is False
    assert (row["calls"], row["failed_calls"]) == (1, 1)
    assert 2 <= row["attempts"] <= len(server.requests)
