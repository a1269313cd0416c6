"""Stage integrity (issue 14): rebuilds replace a stage atomically and invalidate what was made
from removed or changed consultations, so nothing filtered out is masked, cut or shipped."""

from __future__ import annotations

from pathlib import Path

from medrealmm.corpus import CorpusConfig, build_corpus
from medrealmm.corpus.config import BalanceConfig
from medrealmm.deid.stage import run_deid_stage
from medrealmm.io import iter_jsonl
from medrealmm.llm import OfflineClient
from medrealmm.mccp import run_mccp
from medrealmm.schema import Consultation
from medrealmm.store import RunStore, stages


def _text_only(demo_corpus: Path, n: int) -> list[Consultation]:
    cases = [c for c in iter_jsonl(demo_corpus, Consultation) if not c.id.startswith("demo-bad")]
    return [
        c.model_copy(update={"events": [e.model_copy(update={"images": []}) for e in c.events]})
        for c in cases[:n]
    ]


def test_corpus_rebuild_drops_the_masked_copies_of_cases_it_filtered_out(
    demo_corpus: Path, tmp_path: Path
) -> None:
    build_corpus(demo_corpus, tmp_path, workers=1)
    with RunStore(tmp_path) as store:
        first = store.keys(stages.CORPUS_SAMPLED)
        for case in store.iter(stages.CORPUS_SAMPLED, Consultation):  # as deid writes them
            store.put(stages.CORPUS_DEID, case.id, case, sources=[(stages.CORPUS_SAMPLED, case.id)])
    config = CorpusConfig(balance=BalanceConfig(cap=2))
    build_corpus(demo_corpus, tmp_path, config, workers=1)
    with RunStore(tmp_path) as store:
        kept = store.keys(stages.CORPUS_SAMPLED)
        assert kept < first
        assert store.keys(stages.CORPUS_DEID) == kept  # before: all of `first` stayed masked


async def test_a_changed_or_removed_consultation_invalidates_everything_made_from_it(
    demo_corpus: Path, tmp_path: Path
) -> None:
    a, b = _text_only(demo_corpus, 2)
    with RunStore(tmp_path) as store:
        store.set_meta(stages.image_root_key(stages.CORPUS_SAMPLED), str(tmp_path))
        store.replace({stages.CORPUS_SAMPLED: [(a.id, a), (b.id, b)]})
        await run_deid_stage(store, tmp_path, OfflineClient())
        await run_mccp(store, OfflineClient(), source_stage=stages.CORPUS_DEID)
        # text-only cases have no multimodal challenge point: both are discarded, with lineage
        assert store.keys(stages.MCCP_DISCARDED) == {a.id, b.id}

        edited = a.model_copy(update={"department": "内科"})
        store.replace({stages.CORPUS_SAMPLED: [(a.id, edited)]})  # a changed, b filtered out
        assert store.keys(stages.CORPUS_DEID) == set()  # both masked copies are stale
        assert store.keys(stages.MCCP_DISCARDED) == set()  # and what was cut from them

        stats = await run_deid_stage(store, tmp_path, OfflineClient())
        assert stats.done == 1 and store.keys(stages.CORPUS_DEID) == {a.id}
        masked = store.get(stages.CORPUS_DEID, a.id, Consultation)
        assert masked is not None and masked.department == "内科"
