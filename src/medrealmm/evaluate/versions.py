"""A living benchmark: two versions of one release compared on the cases they share.

Version N+1 adds cases and drops withdrawn ones, so C (the case count) changes and a Score
over all of each version's cases is not a comparison. Rows from both are compared only on
the cases both hold, and every such comparison says how many that is.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from medrealmm.release.layout import version_key


@dataclass(frozen=True)
class VersionComparison:
    """Instance ids of ``older`` and ``newer`` split three ways."""

    older: str
    newer: str
    shared: frozenset[str]
    added: frozenset[str]  # only in the newer version
    withdrawn: frozenset[str]  # only in the older version

    @property
    def cases_changed(self) -> bool:
        """C differs between the versions (or the same C holds other cases)."""
        return bool(self.added or self.withdrawn)

    def note(self) -> str:
        text = (
            f"compared on {len(self.shared)} cases shared by {self.older} and {self.newer}; "
            f"{len(self.added)} only in {self.newer}, {len(self.withdrawn)} withdrawn"
        )
        if self.cases_changed:
            before = len(self.shared) + len(self.withdrawn)
            after = len(self.shared) + len(self.added)
            text += (
                f"; C changed ({before} cases in {self.older}, {after} in {self.newer}): "
                "a Score over all of one version's cases does not compare with the other's"
            )
        return text

    def note_zh(self) -> str:
        """``note`` for the Chinese report page."""
        text = (
            f"在 {self.older} 与 {self.newer} 共有的 {len(self.shared)} 个病例上比较；"
            f"仅 {self.newer} 有 {len(self.added)} 个，撤回 {len(self.withdrawn)} 个"
        )
        if self.cases_changed:
            before = len(self.shared) + len(self.withdrawn)
            after = len(self.shared) + len(self.added)
            text += (
                f"；病例集 C 已变化（{self.older} 有 {before} 个病例，"
                f"{self.newer} 有 {after} 个）：一个版本全部病例上的得分不能与另一版本的直接比较"
            )
        return text


def compare_versions(cases: dict[str, Collection[str]]) -> VersionComparison:
    """``cases``: instance ids by version, exactly two versions."""
    if len(cases) != 2:
        raise ValueError(
            f"a comparison across versions needs exactly two; got {sorted(cases) or 'none'}"
        )
    older, newer = sorted(cases, key=version_key)
    before, after = set(cases[older]), set(cases[newer])
    return VersionComparison(
        older=older,
        newer=newer,
        shared=frozenset(before & after),
        added=frozenset(after - before),
        withdrawn=frozenset(before - after),
    )
