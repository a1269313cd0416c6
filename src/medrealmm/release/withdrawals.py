"""Patient withdrawals: a durable register that every later release build honours.

The register (a JSONL file the maintainers keep beside the run) outlives any single run store,
so a rebuilt store cannot bring a withdrawn case back. Each withdrawal is also written to the
store under ``WITHDRAWN`` so other phases can see it. The requester is never recorded at all:
what is not kept cannot leak into the public changelog.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from medrealmm.io import append_jsonl, iter_jsonl
from medrealmm.schema import Instance
from medrealmm.store import RunStore, stages
from medrealmm.store.runstore import store_file

WITHDRAWN = stages.RELEASE_WITHDRAWN
REGISTER_FILENAME = "withdrawals.jsonl"


class Withdrawal(BaseModel):
    """One removed case. ``reason`` stays with the maintainers; the changelog shows id and date."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(min_length=1, description="Consultation id; all its instances go too.")
    date: date
    reason: str = Field(min_length=1)


def default_register(store_path: Path | str) -> Path:
    """The register lives beside the store unless the maintainers keep it elsewhere."""
    return store_file(store_path).parent / REGISTER_FILENAME


def read_register(path: Path | str) -> list[Withdrawal]:
    path = Path(path)
    return list(iter_jsonl(path, Withdrawal)) if path.exists() else []


def all_withdrawals(register: Path | str, store: RunStore | None = None) -> list[Withdrawal]:
    """Cases excluded from every release from now on: the register plus the store's copy.

    Sorted by (date, case id) so the changelog built from them is the same on every build.
    """
    found = {w.case_id: w for w in read_register(register)}
    if store is not None:
        for withdrawal in store.iter(WITHDRAWN, Withdrawal):
            found.setdefault(withdrawal.case_id, withdrawal)
    return sorted(found.values(), key=lambda w: (w.date, w.case_id))


def resolve_case_id(store: RunStore, case_id: str) -> str:
    """Accept a consultation id or an instance id; withdrawal always acts on the consultation."""
    for stage in (stages.CORPUS_FINAL, stages.CORPUS_DEID, stages.CORPUS_SAMPLED, stages.RAW):
        if store.get_raw(stage, case_id) is not None:
            return case_id
    instance = store.get(stages.MCCP_INSTANCE, case_id, Instance)
    if instance is not None:
        return instance.consultation_id
    raise ValueError(
        f"no case '{case_id}' in the run store {store.path} "
        "(expected a consultation id or an instance id)"
    )


def record_withdrawal(
    store: RunStore, register: Path | str, case_id: str, reason: str, when: date
) -> Withdrawal:
    """Record once; withdrawing an already withdrawn case returns the first record unchanged."""
    consultation_id = resolve_case_id(store, case_id)
    for existing in read_register(register):
        if existing.case_id == consultation_id:
            store.put(WITHDRAWN, consultation_id, existing)
            return existing
    withdrawal = Withdrawal(case_id=consultation_id, date=when, reason=reason)
    append_jsonl(register, withdrawal)
    store.put(WITHDRAWN, consultation_id, withdrawal)
    return withdrawal
