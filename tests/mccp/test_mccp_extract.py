"""The stage over a run store: offline demo, the real client end to end, discards, resumes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from medrealmm.demo import TRUTH_FILE
from medrealmm.llm import build_client, resolve_spec
from medrealmm.mccp import DiscardRecord, export_outputs, run_mccp
from medrealmm.mccp.selection import NO_ENGAGEMENT, NO_PATIENT_IMAGE, NO_RELEVANCE
from medrealmm.pipeline.steps.ingest import load_raw
from medrealmm.schema import Consultation, Instance, Sender
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply


@pytest.fixture()
def demo_store(tmp_path: Path, demo_dir: Path) -> RunStore:
    store = RunStore(tmp_path / "run")
    store.set_meta(stages.image_root_key(stages.RAW), str(demo_dir))
    load_raw(store, demo_dir)
    return store


def _small_store(tmp_path: Path, consultations: list[Consultation]) -> RunStore:
    store = RunStore(tmp_path / "small")
    store.put_many(stages.RAW, ((c.id, c) for c in consultations))
    store.set_meta(stages.image_root_key(stages.RAW), str(tmp_path))
    return store


async def test_offline_demo_yields_an_instance_for_every_valid_consultation(
    demo_store: RunStore, demo_dir: Path
) -> None:
    client = build_client(resolve_spec("offline"), cache=demo_store.cache)
    summary = await run_mccp(demo_store, client, source_stage=stages.RAW)
    truth = json.loads((demo_dir / TRUTH_FILE).read_text(encoding="utf-8"))
    valid = {cid for cid, case in truth.items() if case["expected_drop"] is None}
    instances = {i.consultation_id: i for i in demo_store.iter(stages.MCCP_INSTANCE, Instance)}
    assert valid <= set(instances)
    assert summary.failed == 0 and summary.consultations == len(truth)
    for cid in valid:
        instance = instances[cid]
        source = demo_store.get(stages.RAW, cid, Consultation)
        assert source is not None
        assert instance.context == source.events[: instance.t_star + 1]
        assert instance.context[-1].sender is Sender.PATIENT
        assert instance.target_reply == source.events[instance.t_star + 1].content
        assert instance.image_count >= 1
        assert instance.cropper and instance.cropper.label
        assert instance.verifier and instance.verifier.label
        assert instance.intent and instance.stage
    discarded = {
        d.consultation_id: d for d in demo_store.iter(stages.MCCP_DISCARDED, DiscardRecord)
    }
    assert discarded["demo-bad-00-no-patient-image"].reason == NO_PATIENT_IMAGE
    assert discarded["demo-bad-02-refund-close"].reason == NO_ENGAGEMENT
    assert discarded["demo-bad-02-refund-close"].candidates  # evidence kept
    image_root = demo_store.get_meta(stages.image_root_key(stages.MCCP_INSTANCE))
    assert image_root == str(demo_dir)


async def test_rerun_repeats_no_work_and_resumes_lost_units(demo_store: RunStore) -> None:
    first = build_client(resolve_spec("offline"), cache=demo_store.cache)
    await run_mccp(demo_store, first, source_stage=stages.RAW)
    before = {i.id: i for i in demo_store.iter(stages.MCCP_INSTANCE, Instance)}

    again = build_client(resolve_spec("offline"), cache=demo_store.cache)
    summary = await run_mccp(demo_store, again, source_stage=stages.RAW)
    assert summary.reused == summary.consultations

    lost = sorted(before)[:3]  # as if the run had been killed before these committed
    for key in lost:
        demo_store.delete(stages.MCCP_INSTANCE, key)
    resumed = build_client(resolve_spec("offline"), cache=demo_store.cache)
    summary = await run_mccp(demo_store, resumed, source_stage=stages.RAW)
    assert summary.reused == summary.consultations - 3
    assert {i.id: i for i in demo_store.iter(stages.MCCP_INSTANCE, Instance)} == before


def _scripted_scores(wire: Any, cropper: dict[int, float], verifier: dict[int, float]) -> Any:
    """A fake model whose scores depend on the candidate t the prompt names."""

    def respond(body: dict[str, Any]) -> FakeReply:
        agent = wire.agent_of(body)
        user = body["messages"][-1]["content"]
        if isinstance(user, list):
            user = user[0]["text"]
        if agent in ("intent", "stage"):
            label = "diagnosis_seeking" if agent == "intent" else "diagnostic_reasoning"
            return wire.reply({"label": label, "reason": "测试"})
        pattern = r"候选位置：第(\d+)条" if agent == "cropper" else r"截至第(\d+)条"
        t = int(re.search(pattern, user).group(1)) - 1  # type: ignore[union-attr]
        score = (cropper if agent == "cropper" else verifier)[t]
        return wire.reply({"label": score > 0, "score": max(score, 0.0), "reason": f"t={t}"})

    return respond


async def test_t_star_is_the_argmax_of_summed_scores_over_the_real_client(
    tmp_path: Path, skin_case: Consultation, consultation: Any, wire: Any
) -> None:
    P, D = Sender.PATIENT, Sender.PHYSICIAN
    tie = consultation(
        [
            (P, "看", ["images/a.png"]),
            (D, "答一"),
            (P, "再看"),
            (D, "答二"),
            (P, "还有"),
            (D, "答三"),
        ],
        cid="c2",
    )
    store = _small_store(tmp_path, [skin_case, tie])
    respond = _scripted_scores(wire, {0: 0.9, 2: 0.4, 4: 0.7}, {0: 0.1, 2: 0.9, 4: 0.6})
    with FakeOpenAIServer(respond) as server:
        summary = await run_mccp(
            store,
            wire.fake_client(server),
            source_stage=stages.RAW,
            verifier_images=False,
            concurrency=2,
        )
    assert summary.failed == 0, summary.errors
    by_case = {i.consultation_id: i for i in store.iter(stages.MCCP_INSTANCE, Instance)}
    # sums: t0 = 1.0, t2 = 1.3, t4 = 1.3 -> t2 (tie with t4 goes to the earlier turn)
    assert by_case["c1"].t_star == 2 and by_case["c2"].t_star == 2
    assert by_case["c1"].cropper.score == 0.4 and by_case["c1"].verifier.score == 0.9
    assert by_case["c1"].target_reply.startswith("从图片看")
    assert (by_case["c1"].intent, by_case["c1"].stage) == (
        "diagnosis_seeking",
        "diagnostic_reasoning",
    )
    agents = [wire.agent_of(body) for body in server.requests]
    # c1's t0 comes before any patient image, so its Verifier is never asked
    assert agents.count("cropper") == 6 and agents.count("verifier") == 5
    assert store.usage()[0]["calls"] == len(server.requests)


async def test_consultation_without_admitted_turn_is_discarded_with_reason(
    tmp_path: Path, consultation: Any, wire: Any
) -> None:
    P, D = Sender.PATIENT, Sender.PHYSICIAN
    case = consultation([(P, "看", ["images/a.png"]), (D, "好的"), (P, "谢谢"), (D, "不客气")])
    store = _small_store(tmp_path, [case])
    respond = _scripted_scores(wire, {0: 0.8, 2: 0.0}, {0: 0.0})
    with FakeOpenAIServer(respond) as server:
        summary = await run_mccp(
            store, wire.fake_client(server), source_stage=stages.RAW, verifier_images=False
        )
    assert summary.instances == 0 and summary.reasons == {NO_RELEVANCE: 1}
    record = store.get(stages.MCCP_DISCARDED, "c1", DiscardRecord)
    assert record is not None and record.reason == NO_RELEVANCE
    assert [c.t for c in record.candidates] == [0, 2]
    assert record.candidates[1].verifier is None  # never verified: the Cropper said no
    _, discarded = export_outputs(store, tmp_path / "out")
    assert json.loads(discarded.read_text(encoding="utf-8"))["reason"] == NO_RELEVANCE


async def test_a_permissive_verifier_cannot_admit_a_turn_before_any_patient_image(
    tmp_path: Path, consultation: Any, wire: Any
) -> None:
    P, D = Sender.PATIENT, Sender.PHYSICIAN
    late_image = consultation(
        [(P, "起疹子了"), (D, "多久了"), (P, "一周，照片", ["images/a.png"]), (D, "湿疹")],
        cid="late",
    )
    never = consultation(
        [(P, "起疹子了"), (D, "多久了"), (P, "一周"), (D, "湿疹"), (P, "补照片", ["images/b.png"])],
        cid="never",
    )
    store = _small_store(tmp_path, [late_image, never])
    # the Cropper prefers t0 and the Verifier says yes to everything, images or not
    respond = _scripted_scores(wire, {0: 1.0, 2: 0.1}, {0: 1.0, 2: 1.0})
    with FakeOpenAIServer(respond) as server:
        summary = await run_mccp(
            store, wire.fake_client(server), source_stage=stages.RAW, verifier_images=False
        )
    assert summary.failed == 0, summary.errors
    (instance,) = store.iter(stages.MCCP_INSTANCE, Instance)
    assert instance.consultation_id == "late" and instance.t_star == 2
    assert any(ref.is_patient_medical for e in instance.context for ref in e.images)
    record = store.get(stages.MCCP_DISCARDED, "never", DiscardRecord)
    assert record is not None and record.reason == NO_PATIENT_IMAGE
    assert [c.patient_images for c in record.candidates] == [0, 0]


async def test_agent_failure_is_recorded_and_retried_on_the_next_run(
    tmp_path: Path, skin_case: Consultation, wire: Any
) -> None:
    store = _small_store(tmp_path, [skin_case])
    with FakeOpenAIServer(lambda body: FakeReply(content="不知道")) as server:
        summary = await run_mccp(
            store, wire.fake_client(server), source_stage=stages.RAW, verifier_images=False
        )
    assert summary.failed == 1 and "mccp.cropper" in summary.errors["c1"]
    assert "mccp.cropper" in store.failures(stages.MCCP_DISCARDED)["c1"]

    respond = _scripted_scores(wire, {0: 0.5, 2: 0.5, 4: 0.5}, {0: 0.0, 2: 0.9, 4: 0.5})
    with FakeOpenAIServer(respond) as server:
        summary = await run_mccp(
            store, wire.fake_client(server), source_stage=stages.RAW, verifier_images=False
        )
    assert summary.failed == 0 and summary.instances == 1
    assert store.failures(stages.MCCP_DISCARDED) == {}


async def test_real_model_needs_an_image_root_to_send_images(
    tmp_path: Path, skin_case: Consultation, wire: Any
) -> None:
    store = RunStore(tmp_path / "noroot")
    store.put_many(stages.RAW, [(skin_case.id, skin_case)])
    with FakeOpenAIServer() as server, pytest.raises(ValueError, match="no image root"):
        await run_mccp(store, wire.fake_client(server), source_stage=stages.RAW)


async def test_usage_counts_agent_calls_that_failed_for_good(
    tmp_path: Path, skin_case: Consultation, wire: Any
) -> None:
    store = _small_store(tmp_path, [skin_case])
    with FakeOpenAIServer(lambda body: FakeReply(status=503)) as server:
        summary = await run_mccp(
            store,
            wire.fake_client(server, max_attempts=2),
            source_stage=stages.RAW,
            verifier_images=False,
        )
    assert summary.failed == 1
    (row,) = store.usage()
    assert row["failed_calls"] == row["calls"] >= 1
    # every retry is counted (a structured-mode step-down may add requests of its own)
    assert 2 * row["failed_calls"] <= row["attempts"] <= len(server.requests)
