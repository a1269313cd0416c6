"""The grader may answer "cannot assess": policies, provenance, and never from a failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from medrealmm.evaluate import EvalSettings, load_scores, run_evaluation
from medrealmm.evaluate.baseline import grader_baseline
from medrealmm.evaluate.grader import grader_request
from medrealmm.evaluate.provenance import SettingConflict, load_specs
from medrealmm.evaluate.results import load_results
from medrealmm.evaluate.scoring import AbstainPolicy, score_case
from medrealmm.llm import dialogue_parts
from medrealmm.schema import Criterion, Verdict, VerdictStatus
from medrealmm.store import RunStore, stages
from medrealmm.testing import FakeOpenAIServer, FakeReply

from .conftest import demo_instances, fill_store, rubric_for
from .test_evaluate_agents import REPLY, is_grader, models_yaml, user_content

CRITERIA = [
    Criterion(id="a", text="询问病史", weight=5),
    Criterion(id="b", text="解读图片", weight=3),
    Criterion(id="c", text="建议自行停药", weight=-4),
]


def results_summary(store: RunStore):  # type: ignore[no-untyped-def]
    return load_results(store).summary()


def _verdicts(abstained: set[str], failed: set[str] = frozenset()) -> dict[str, Verdict]:  # type: ignore[assignment]
    out = {}
    for c in CRITERIA:
        if c.id in abstained:
            out[c.id] = Verdict(criterion_id=c.id, value=None, status=VerdictStatus.ABSTAINED)
        elif c.id in failed:
            out[c.id] = Verdict(criterion_id=c.id, value=None, status=VerdictStatus.FAILED)
        else:
            out[c.id] = Verdict(criterion_id=c.id, value=c.weight > 0)
    return out


def _score(policy: AbstainPolicy, abstained: set[str], failed: set[str] = frozenset()):  # type: ignore[assignment,no-untyped-def]
    return score_case(
        instance_id="i",
        model="m",
        images=True,
        sample=0,
        criteria=CRITERIA,
        verdicts=_verdicts(abstained, failed),
        abstain=policy,
    )


def test_each_policy_counts_an_abstention_as_it_says() -> None:
    unmet = _score(AbstainPolicy.UNMET, {"b"})
    assert unmet.score == pytest.approx(5 / 8) and unmet.abstained_criteria == ["b"]
    dropped = _score(AbstainPolicy.DROP, {"b"})
    assert dropped.score == 1.0 and dropped.positive_points_total == 5
    left = _score(AbstainPolicy.INCOMPLETE, {"b"})
    assert not left.complete and left.score is None and left.failed_criteria == []
    assert left.abstained == 1
    # Nothing left to score once every criterion is dropped: incomplete, never a made-up 1.0.
    assert not _score(AbstainPolicy.DROP, {"a", "b", "c"}).complete
    # A failure is a failure under every policy.
    for policy in AbstainPolicy:
        failed = _score(policy, set(), {"a"})
        assert not failed.complete and failed.failed_criteria == ["a"]
        assert failed.abstained_criteria == []


def test_drop_never_scores_a_reply_whose_positive_criteria_were_all_abstained() -> None:
    """Every positive criterion abstained, no penalty: incomplete under ``drop`` (1.0 before),
    0 under ``unmet``; with a penalty triggered the clipped 0 stands."""
    assert not _score(AbstainPolicy.DROP, {"a", "b"}).complete
    assert _score(AbstainPolicy.DROP, {"a", "b"}).score is None
    assert _score(AbstainPolicy.UNMET, {"a", "b"}).score == 0.0
    triggered = _verdicts({"a", "b"})
    triggered["c"] = Verdict(criterion_id="c", value=True)
    found = score_case(
        instance_id="i", model="m", images=True, sample=0, criteria=CRITERIA,
        verdicts=triggered, abstain=AbstainPolicy.DROP,
    )  # fmt: skip
    assert found.complete and found.score == 0.0


def _brute_drop_score(abstained: set[str], met: dict[str, bool]) -> float | None:
    """The documented rule, case by case: drop the abstained criteria; nothing left, or no
    positive left where the rubric had one and no penalty triggered, is incomplete; else
    clip(earned / positive total) (a rubric of penalties only: 1 untriggered, else 0)."""
    kept = [c for c in CRITERIA if c.id not in abstained]
    if not kept:
        return None
    earned = sum(c.weight for c in kept if met[c.id])
    positive = sum(c.weight for c in kept if c.weight > 0)
    penalty = any(met[c.id] for c in kept if c.weight < 0)
    if positive == 0 and any(c.weight > 0 for c in CRITERIA) and not penalty:
        return None
    if positive == 0:
        return 0.0 if penalty else 1.0
    return min(max(earned / positive, 0.0), 1.0)


def test_drop_equals_the_documented_rule_on_every_abstention_and_verdict() -> None:
    from itertools import product

    ids = [c.id for c in CRITERIA]
    for abstain_bits, met_bits in product(product((0, 1), repeat=3), product((0, 1), repeat=3)):
        abstained = {i for i, bit in zip(ids, abstain_bits, strict=True) if bit}
        met = dict(zip(ids, map(bool, met_bits), strict=True))
        verdicts = {
            i: Verdict(criterion_id=i, value=None, status=VerdictStatus.ABSTAINED)
            if i in abstained
            else Verdict(criterion_id=i, value=met[i])
            for i in ids
        }
        found = score_case(
            instance_id="i", model="m", images=True, sample=0, criteria=CRITERIA,
            verdicts=verdicts, abstain=AbstainPolicy.DROP,
        )  # fmt: skip
        assert found.score == _brute_drop_score(abstained, met), (abstained, met)


def _responder(grader_answer: Any) -> Any:
    def answer(body: dict[str, Any]) -> FakeReply:
        if not is_grader(body):
            return FakeReply(content=REPLY)
        return grader_answer(body)

    return answer


def _cannot_assess_c2(body: dict[str, Any]) -> FakeReply:
    text = json.dumps(user_content(body), ensure_ascii=False)
    unsure = "持续时间和既往病史" in text  # criterion c1 of the test rubric
    verdict = {"rationale": "看不清", "met": True, "cannot_assess": unsure}
    return FakeReply(content=json.dumps(verdict, ensure_ascii=False))


def test_abstentions_are_verdicts_scored_by_the_recorded_policy(tmp_path: Path) -> None:
    with (
        FakeOpenAIServer(_responder(_cannot_assess_c2)) as server,
        RunStore(tmp_path / "r") as store,
    ):
        fill_store(store, demo_instances(2))
        config = models_yaml(tmp_path, server)
        base = {"model": "fake-vlm", "grader": "fake-judge", "models_config": config}
        first = run_evaluation(store, EvalSettings(**base))
        calls = len(server.requests)
        verdicts = [v for s in first.scores for v in s.verdicts if v.criterion_id == "c1"]
        assert {v.status for v in verdicts} == {VerdictStatus.ABSTAINED}
        assert all(v.value is None and v.rationale == "看不清" for v in verdicts)
        assert all(s.complete and s.abstained_criteria == ["c1"] for s in first.scores)
        # Another policy on the same results is refused, naming both; none asked keeps it.
        with pytest.raises(SettingConflict, match=r"--abstain unmet.*--abstain incomplete"):
            run_evaluation(store, EvalSettings(**base, abstain=AbstainPolicy.INCOMPLETE))
        again = run_evaluation(store, EvalSettings(**base, retry_failed=True))
        assert len(server.requests) == calls  # an abstention is an answer, never retried
        assert again.eval_id == first.eval_id and again.abstain == "unmet"


def test_a_recorded_abstain_policy_is_kept_on_resume(tmp_path: Path) -> None:
    """Made with --abstain drop, resumed without it: still drop (it became unmet before)."""
    with (
        FakeOpenAIServer(_responder(_cannot_assess_c2)) as server,
        RunStore(tmp_path / "r") as store,
    ):
        fill_store(store, demo_instances(2))
        config = models_yaml(tmp_path, server)
        base = {"model": "fake-vlm", "grader": "fake-judge", "models_config": config}
        first = run_evaluation(store, EvalSettings(**base, abstain=AbstainPolicy.DROP))
        resumed = run_evaluation(store, EvalSettings(**base))
        assert resumed.abstain == "drop" and resumed.eval_id == first.eval_id
        assert set(load_specs(store)) == {first.eval_id}
        assert [s.score for s in resumed.scores] == [s.score for s in first.scores]
        assert (
            run_evaluation(store, EvalSettings(**base, abstain=AbstainPolicy.DROP)).eval_id
            == first.eval_id
        )


@pytest.mark.parametrize(
    "reply",
    [
        FakeReply(status=400, content="bad request"),
        FakeReply(content='{"rationale": "?", "met": "cannot assess"}'),
        FakeReply(content="无法判断"),
    ],
    ids=["transport", "malformed", "prose"],
)
def test_a_failed_or_malformed_call_is_never_an_abstention(
    tmp_path: Path, reply: FakeReply
) -> None:
    with (
        FakeOpenAIServer(_responder(lambda body: reply)) as server,
        RunStore(tmp_path / "r") as store,
    ):
        fill_store(store, demo_instances(1))
        config = models_yaml(tmp_path, server)
        outcome = run_evaluation(
            store, EvalSettings(model="fake-vlm", grader="fake-judge", models_config=config)
        )
        stored = [v for _, v in store.items(stages.EVAL_VERDICT, Verdict)]
    llm = [v for v in stored if v.criterion_id != "c4"]  # c4 is a rule, checked in code
    assert llm and all(v.status is VerdictStatus.FAILED and v.value is None for v in llm)
    (score,) = outcome.scores
    assert not score.complete and score.abstained_criteria == []
    assert set(score.failed_criteria) == {"c1", "c2", "c3"}


def test_the_offline_grader_abstains_only_on_an_image_reading_it_was_not_shown() -> None:
    instance = demo_instances(1)[0]
    criterion = Criterion(id="x", text="结合患者上传的图片作出具体解读：足癣", weight=5)
    plain = Criterion(id="y", text="询问症状持续时间", weight=5)
    omission = Criterion(
        id="z", text="未结合患者上传的图片作答，或对图片内容作出错误解读", weight=-6
    )

    def answer(c: Criterion, root: Path | None) -> dict[str, Any]:
        parts = dialogue_parts(instance.context, image_root=root)
        request = grader_request(
            department=instance.department,
            context=instance.context,
            parts=parts,
            criterion=c,
            reply=REPLY,
        )
        return json.loads(grader_baseline(request))

    from medrealmm.demo import bundled_corpus_dir

    assert answer(criterion, None)["cannot_assess"] is True
    assert answer(criterion, bundled_corpus_dir())["cannot_assess"] is False
    assert answer(plain, None)["cannot_assess"] is False
    assert answer(omission, None)["cannot_assess"] is False


def test_offline_grader_images_off_counts_abstentions_per_row(tmp_path: Path) -> None:
    instances = demo_instances(2)
    with RunStore(tmp_path / "r") as store:
        fill_store(store, instances, approve_first=False)
        for instance in instances:
            rubric = rubric_for(instance)
            criteria = list(rubric.criteria)
            criteria[1] = criteria[1].model_copy(update={"text": "结合患者上传的图片作出具体解读"})
            changed = rubric.model_copy(update={"criteria": criteria})
            store.put(stages.RUBRIC_ROUND, f"{instance.id}#00", changed)
        run_evaluation(store, EvalSettings(model="offline", grader_images=False))
        scores = load_scores(store, "offline-baseline")
        rows = results_summary(store)
    assert [s.abstained_criteria for s in scores] == [["c2"], ["c2"]]
    assert [(r.model, r.abstentions) for r in rows] == [("offline-baseline", 2)]
