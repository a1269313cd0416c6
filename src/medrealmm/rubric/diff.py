"""What changed between two rubric rounds, by criterion id."""

from __future__ import annotations

from pydantic import BaseModel, Field

from medrealmm.schema import Criterion, Rubric


class CriterionChange(BaseModel):
    id: str
    before: Criterion
    after: Criterion

    @property
    def fields(self) -> list[str]:
        return [
            name
            for name in ("text", "weight", "kind", "rule")
            if getattr(self.before, name) != getattr(self.after, name)
        ]


class RubricDiff(BaseModel):
    from_round: int
    to_round: int
    added: list[Criterion] = Field(default_factory=list)
    removed: list[Criterion] = Field(default_factory=list)
    changed: list[CriterionChange] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        """One human-readable line per change, for the CLI and exported review files."""
        out = [f"+ {c.id} [{c.weight:+d}] {c.text}" for c in self.added]
        out += [f"- {c.id} [{c.weight:+d}] {c.text}" for c in self.removed]
        for change in self.changed:
            b, a = change.before, change.after
            detail = []
            if "weight" in change.fields:
                detail.append(f"weight {b.weight:+d} -> {a.weight:+d}")
            if "text" in change.fields:
                detail.append(f"text: {b.text} -> {a.text}")
            out.append(f"~ {change.id} " + "; ".join(detail or change.fields))
        return out


def diff_rubrics(before: Rubric, after: Rubric) -> RubricDiff:
    old = {c.id: c for c in before.criteria}
    new = {c.id: c for c in after.criteria}
    changed = [
        CriterionChange(id=cid, before=old[cid], after=new[cid])
        for cid in new
        if cid in old
        and (old[cid].text, old[cid].weight, old[cid].kind, old[cid].rule)
        != (new[cid].text, new[cid].weight, new[cid].kind, new[cid].rule)
    ]
    return RubricDiff(
        from_round=before.round,
        to_round=after.round,
        added=[c for cid, c in new.items() if cid not in old],
        removed=[c for cid, c in old.items() if cid not in new],
        changed=changed,
    )
