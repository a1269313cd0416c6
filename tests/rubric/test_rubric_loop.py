"""The refinement loop over the run store: rounds kept, convergence on empty feedback,
max rounds, resumability."""

from __future__ import annotations

from pathlib import Path

import pytest

from medrealmm.llm import OfflineClient, build_client, resolve_spec
from medrealmm.rubric import (
    FeedbackError,
    FeedbackItem,
    FeedbackType,
    RoundFeedback,
    RubricSettings,
    RubricState,
    approve,
    evaluation_rubrics,
    final_rubric,
    load_feedback,
    pending_review,
    round_history,
    rubric_for_evaluation,
    save_feedback,
    state_of,
    states,
)
from medrealmm.rubric.rounds import criterion_versions, rubric_digests
from medrealmm.rubric.stage import generate_all, refine_all
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages

SETTINGS = RubricSettings(with_images=False)  # the seeded instance has no image root


@pytest.fixture()
def store(tmp_path: Path, tinea_instance: Instance) -> RunStore:
    store = RunStore(tmp_path)
    store.put(stages.MCCP_INSTANCE, tinea_instance.id, tinea_instance)
    yield store
    store.close()


def _reweight(instance_id: str, round_: int, criterion_id: str, weight: int) -> RoundFeedback:
    return RoundFeedback(
        instance_id=instance_id,
        round=round_,
        reviewer="dr_li",
        items=[
            FeedbackItem(type=FeedbackType.WRONG_WEIGHT, criterion_id=criterion_id, weight=weight)
        ],
    )


async def test_loop_converges_when_a_round_gets_empty_feedback(
    store: RunStore, tinea_instance: Instance
) -> None:
    iid = tinea_instance.id
    client = OfflineClient()
    await generate_all(store, client, SETTINGS)
    assert state_of(store, iid, SETTINGS) is RubricState.AWAITING_REVIEW
    assert [r.round for r in pending_review(store)] == [0]
    evaluated = rubric_for_evaluation(store, iid)
    assert evaluated is not None and not evaluated.approved

    save_feedback(store, _reweight(iid, 0, "c01", 10))
    assert state_of(store, iid, SETTINGS) is RubricState.AWAITING_REFINEMENT
    assert pending_review(store) == []
    assert (await refine_all(store, client, SETTINGS, instance_ids={"other"})).done == 0
    await refine_all(store, client, SETTINGS, instance_ids={iid})
    assert [r.round for r in round_history(store, iid)] == [0, 1]
    assert round_history(store, iid)[1].criteria[0].weight == 10

    approved = approve(store, iid, reviewer="dr_li")
    assert approved.round == 1 and approved.approved
    assert state_of(store, iid, SETTINGS) is RubricState.APPROVED
    final = final_rubric(store, iid)
    assert final is not None and final.approved and final.round == 1
    assert rubric_for_evaluation(store, iid) == final
    assert evaluation_rubrics(store) == {iid: final}
    _digests_match(store)
    stats = await refine_all(store, client, SETTINGS)
    assert stats.done == 0 and len(round_history(store, iid)) == 2  # nothing after approval
    feedback = load_feedback(store, iid, 1)
    assert feedback is not None and feedback.approves and feedback.reviewer == "dr_li"
    # every round stays as it was written
    assert round_history(store, iid)[0].criteria[0].weight != 10
    with pytest.raises(FeedbackError, match="approved"):
        save_feedback(store, _reweight(iid, 1, "c01", 9))


async def test_feedback_only_on_the_latest_round(store: RunStore, tinea_instance: Instance) -> None:
    iid = tinea_instance.id
    with pytest.raises(FeedbackError, match="no rubric"):
        approve(store, iid, reviewer="dr_li")
    await generate_all(store, OfflineClient(), SETTINGS)
    save_feedback(store, _reweight(iid, 0, "c01", 10))
    # feedback is appended, never replaced: a second weight for c01 contradicts the first
    with pytest.raises(FeedbackError, match="already given a weight"):
        save_feedback(store, _reweight(iid, 0, "c01", 12))
    await refine_all(store, OfflineClient(), SETTINGS)
    assert round_history(store, iid)[1].criteria[0].weight == 10
    with pytest.raises(FeedbackError, match="round 1"):
        save_feedback(store, _reweight(iid, 0, "c01", 3))


async def test_max_rounds_stops_refinement_unapproved(
    store: RunStore, tinea_instance: Instance
) -> None:
    iid = tinea_instance.id
    settings = RubricSettings(max_rounds=2, with_images=False)
    client = OfflineClient()
    await generate_all(store, client, settings)
    for round_ in range(3):
        save_feedback(store, _reweight(iid, round_, "c01", 10 + round_))
        await refine_all(store, client, settings)
    assert [r.round for r in round_history(store, iid)] == [0, 1, 2]
    assert state_of(store, iid, settings) is RubricState.MAX_ROUNDS
    evaluated = rubric_for_evaluation(store, iid)
    assert evaluated is not None and evaluated.round == 2 and not evaluated.approved
    assert evaluation_rubrics(store) == {iid: evaluated}
    _digests_match(store)


async def test_rerun_repeats_no_finished_work(store: RunStore, tinea_instance: Instance) -> None:
    client = build_client(resolve_spec("offline"), cache=store.cache)
    first = await generate_all(store, client, SETTINGS)
    again = await generate_all(store, client, SETTINGS)
    assert (first.done, again.done, again.skipped) == (1, 0, 1)
    usage = {row["stage"]: row for row in store.usage()}
    assert usage[stages.RUBRIC_ROUND]["calls"] == 1


async def test_failed_generation_is_recorded_and_retried(
    store: RunStore, tinea_instance: Instance
) -> None:
    from medrealmm.llm import OpenAICompatibleClient
    from medrealmm.testing import FakeOpenAIServer, FakeReply

    with FakeOpenAIServer(lambda body: FakeReply(content="不是JSON")) as server:
        client = OpenAICompatibleClient("m", base_url=server.base_url, max_attempts=1)
        await generate_all(store, client, SETTINGS)
    assert store.failures(stages.RUBRIC_ROUND) == {
        f"{tinea_instance.id}#00": "[malformed_output] no JSON object found in the reply"
    }
    assert states(store, SETTINGS) == {tinea_instance.id: RubricState.FAILED}
    await generate_all(store, OfflineClient(), SETTINGS)
    assert states(store, SETTINGS) == {tinea_instance.id: RubricState.AWAITING_REVIEW}


async def test_usage_counts_generator_calls_that_failed_for_good(store: RunStore) -> None:
    from medrealmm.llm import OpenAICompatibleClient
    from medrealmm.testing import FakeOpenAIServer, FakeReply

    with FakeOpenAIServer(lambda body: FakeReply(status=400)) as server:
        client = OpenAICompatibleClient("m", base_url=server.base_url, max_attempts=3)
        await generate_all(store, client, SETTINGS)
    (row,) = store.usage()
    assert (row["calls"], row["failed_calls"]) == (1, 1)
    assert 1 <= row["attempts"] <= len(server.requests)  # a 400 is not retried


async def test_refine_limit_refines_only_the_first_instances_by_id(
    store: RunStore, tinea_instance: Instance
) -> None:
    other = tinea_instance.model_copy(update={"id": tinea_instance.id + "-b"})
    store.put(stages.MCCP_INSTANCE, other.id, other)
    await generate_all(store, OfflineClient(), SETTINGS)
    for iid in (tinea_instance.id, other.id):
        save_feedback(store, _reweight(iid, 0, "c01", 10))
    stats = await refine_all(store, OfflineClient(), SETTINGS, limit=1)
    assert stats.done == 1
    assert len(round_history(store, tinea_instance.id)) == 2
    assert len(round_history(store, other.id)) == 1  # left for a run without --limit


def _digests_match(store: RunStore) -> None:
    """The report's digests say what the whole rubrics say: versions, weights, kinds, tags."""
    digests = rubric_digests(store)
    rubrics = evaluation_rubrics(store)
    assert list(digests) == list(rubrics)
    for iid, rubric in rubrics.items():
        digest = digests[iid]
        assert (digest.instance_id, digest.version) == (rubric.instance_id, rubric.version)
        assert [(c.id, c.weight, c.kind, list(c.tags)) for c in digest.criteria] == [
            (c.id, c.weight, c.kind, c.tags) for c in rubric.criteria
        ]
        assert criterion_versions(store, digest) == {c.id: c.version for c in rubric.criteria}
