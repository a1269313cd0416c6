from __future__ import annotations

import random

from medrealmm.mccp import CandidateJudgement, discard_reason, select_t_star
from medrealmm.mccp.selection import NO_CANDIDATE, NO_ENGAGEMENT, NO_PATIENT_IMAGE, NO_RELEVANCE
from medrealmm.schema import AgentJudgement


def judged(
    t: int,
    s_a: float,
    s_m: float | None,
    *,
    l_a: bool = True,
    l_m: bool = True,
    images: int = 1,
) -> CandidateJudgement:
    verifier = None if s_m is None else AgentJudgement(label=l_m, score=s_m)
    cropper = AgentJudgement(label=l_a, score=s_a)
    return CandidateJudgement(t=t, cropper=cropper, verifier=verifier, patient_images=images)


def test_argmax_of_summed_scores() -> None:
    best = select_t_star([judged(0, 0.9, 0.1), judged(2, 0.5, 0.8), judged(4, 0.6, 0.6)])
    assert best is not None and best.t == 2


def test_only_candidates_both_agents_admit_count() -> None:
    best = select_t_star(
        [judged(0, 1.0, 1.0, l_m=False), judged(2, 1.0, 1.0, l_a=False), judged(4, 0.1, 0.1)]
    )
    assert best is not None and best.t == 4


def test_ties_go_to_the_earliest_turn_whatever_the_input_order() -> None:
    candidates = [
        judged(6, 0.5, 0.5),
        judged(2, 0.7, 0.3),
        judged(4, 0.3, 0.7),
        judged(0, 0.2, 0.2),
    ]
    for seed in range(10):
        shuffled = candidates[:]
        random.Random(seed).shuffle(shuffled)
        best = select_t_star(shuffled)
        assert best is not None and best.t == 2


def test_float_noise_is_a_tie_not_a_win() -> None:
    # 0.1 + 0.2 != 0.3 in binary floating point; it must still tie with 0.3 + 0.0.
    best = select_t_star([judged(0, 0.3, 0.0), judged(2, 0.1, 0.2)])
    assert best is not None and best.t == 0


def test_discard_reasons_name_the_failed_criterion() -> None:
    assert select_t_star([]) is None
    assert discard_reason([]) == NO_CANDIDATE
    not_engaged = [judged(0, 0.1, None, l_a=False)]
    assert select_t_star(not_engaged) is None
    assert discard_reason(not_engaged) == NO_ENGAGEMENT
    no_images = [judged(0, 0.8, 0.0, l_m=False), judged(2, 0.1, None, l_a=False)]
    assert select_t_star(no_images) is None
    assert discard_reason(no_images) == NO_RELEVANCE


def test_no_patient_image_in_the_history_is_never_admitted_whatever_the_verifier_says() -> None:
    best = select_t_star([judged(0, 1.0, 1.0, images=0), judged(2, 0.1, 0.1, images=1)])
    assert best is not None and best.t == 2
    imageless = [judged(0, 1.0, 1.0, images=0), judged(2, 1.0, 1.0, images=0)]
    assert select_t_star(imageless) is None
    assert discard_reason(imageless) == NO_PATIENT_IMAGE
