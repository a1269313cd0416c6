"""Several challenge points per consultation (the paper's future work): same ranking as t*,
a minimum gap in turns, one instance each, written together, one setting per run."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from medrealmm.llm import build_client, resolve_spec
from medrealmm.mccp import CandidateJudgement, run_mccp, select_challenge_points, select_t_star
from medrealmm.pipeline.steps.ingest import load_raw
from medrealmm.schema import AgentJudgement, Instance
from medrealmm.store import RunStore, stages


def judged(t: int, s_a: float, s_m: float, *, admitted: bool = True) -> CandidateJudgement:
    return CandidateJudgement(
        t=t,
        cropper=AgentJudgement(label=True, score=s_a),
        verifier=AgentJudgement(label=admitted, score=s_m),
        patient_images=1,
    )


def random_judgements(rng: random.Random) -> list[CandidateJudgement]:
    turns = rng.sample(range(0, 40, 2), rng.randint(0, 12))
    return [
        judged(t, rng.choice([0.2, 0.5, 0.8]), rng.random(), admitted=rng.random() < 0.7)
        for t in turns
    ]


def test_one_point_is_the_papers_t_star() -> None:
    rng = random.Random(7)
    for _ in range(500):
        judgements = random_judgements(rng)
        best = select_t_star(judgements)
        assert select_challenge_points(judgements, 1) == ([best] if best else [])


def test_points_follow_the_ranking_and_keep_the_gap() -> None:
    judgements = [
        judged(2, 0.9, 0.9),
        judged(4, 0.8, 0.8),
        judged(8, 0.5, 0.5),
        judged(12, 0.7, 0.7),
    ]
    assert [j.t for j in select_challenge_points(judgements, 2, min_gap=4)] == [2, 12]
    assert [j.t for j in select_challenge_points(judgements, 3, min_gap=4)] == [2, 8, 12]
    assert [j.t for j in select_challenge_points(judgements, 3, min_gap=2)] == [2, 4, 12]
    rng = random.Random(11)
    for _ in range(500):
        judgements = random_judgements(rng)
        chosen = select_challenge_points(judgements, 3, min_gap=5)
        assert all(j.admitted for j in chosen) and len(chosen) <= 3
        ts = [j.t for j in chosen]
        assert ts == sorted(ts) and all(b - a >= 5 for a, b in itertools.pairwise(ts))
    with pytest.raises(ValueError, match="points"):
        select_challenge_points(judgements, 0)


@pytest.fixture()
def demo_store(tmp_path: Path, demo_dir: Path) -> RunStore:
    store = RunStore(tmp_path / "run")
    store.set_meta(stages.image_root_key(stages.RAW), str(demo_dir))
    load_raw(store, demo_dir)
    return store


async def test_two_points_give_two_instances_per_consultation_where_admitted(
    demo_store: RunStore,
) -> None:
    client = build_client(resolve_spec("offline"), cache=demo_store.cache)
    summary = await run_mccp(demo_store, client, source_stage=stages.RAW, points=2, min_gap=2)
    assert summary.failed == 0
    instances = list(demo_store.iter(stages.MCCP_INSTANCE, Instance))
    by_case: dict[str, list[Instance]] = {}
    for instance in instances:
        by_case.setdefault(instance.consultation_id, []).append(instance)
    assert max(len(v) for v in by_case.values()) == 2  # the demo has cases with two
    for points in by_case.values():
        ts = sorted(i.t_star for i in points)
        assert len(points) <= 2 and all(b - a >= 2 for a, b in itertools.pairwise(ts))
        assert all(i.consultation_turns and i.position for i in points)

    # one setting per run: a changed setting is refused, not mixed in
    with pytest.raises(ValueError, match="points=2, min_gap=2"):
        await run_mccp(demo_store, client, source_stage=stages.RAW, points=1)


async def test_one_point_is_one_instance_per_consultation(demo_store: RunStore) -> None:
    client = build_client(resolve_spec("offline"), cache=demo_store.cache)
    await run_mccp(demo_store, client, source_stage=stages.RAW)
    instances = list(demo_store.iter(stages.MCCP_INSTANCE, Instance))
    assert len({i.consultation_id for i in instances}) == len(instances)
    assert all(i.consultation_turns for i in instances)


def test_position_places_t_star_by_thirds() -> None:
    from medrealmm.schema import Event, Sender

    event = Event(sender=Sender.PATIENT, timestamp="2025-01-01T00:00:00", content="x")

    def at(t: int, total: int | None) -> str | None:
        context = [event] * (t + 1)
        return Instance(
            id="c-t0",
            consultation_id="c",
            department="d",
            t_star=t,
            context=context,
            target_reply="y",
            consultation_turns=total,
        ).position

    assert [at(t, 9) for t in (0, 2, 3, 5, 6, 8)] == [
        "early",
        "early",
        "middle",
        "middle",
        "late",
        "late",
    ]
    assert at(0, None) is None


async def test_points_slice_gives_k_only_to_the_first_consultations(demo_store: RunStore) -> None:
    client = build_client(resolve_spec("offline"), cache=demo_store.cache)
    await run_mccp(
        demo_store, client, source_stage=stages.RAW, points=2, min_gap=2, points_slice=10
    )
    first = set(sorted(demo_store.keys(stages.RAW))[:10])
    counts: dict[str, int] = {}
    for instance in demo_store.iter(stages.MCCP_INSTANCE, Instance):
        counts[instance.consultation_id] = counts.get(instance.consultation_id, 0) + 1
    assert all(n == 1 for case, n in counts.items() if case not in first)
    assert any(n == 2 for case, n in counts.items() if case in first)
    assert demo_store.get_meta(stages.MCCP_POINTS_META)["points_slice"] == 10
    with pytest.raises(ValueError, match="points_slice=10"):
        await run_mccp(demo_store, client, source_stage=stages.RAW, points=2, min_gap=2)
