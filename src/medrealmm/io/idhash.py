"""Consultation ids as 64-bit digests, for the checks that must see every id of a file.

The duplicate check and the shrink guard compare every id of an input; kept as Python strings
(about 100 bytes each with their set or dict entry) they were most of a million-case build's
memory. A blake2b digest in an ``array('Q')`` is 8 bytes. Two different ids share a digest with
odds of about n²/2⁶⁵ (3e-8 at a million ids): a repeated digest is only a suspect, which the
caller confirms by rereading the strings (``check_dataset`` names the duplicate exactly), and
the shrink guard's counts are a threshold's inputs, where such an error cannot matter.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable

import numpy as np


def id_digest(value: str) -> int:
    """The 64-bit blake2b digest of an id's UTF-8 bytes."""
    digest = hashlib.blake2b(value.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


class IdDigests:
    """The digests of a stream of ids, in the order added (8 bytes an id)."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._items = array("Q", (id_digest(value) for value in ids))

    def add(self, value: str) -> None:
        self._items.append(id_digest(value))

    def __len__(self) -> int:
        return len(self._items)

    def _sorted(self) -> np.ndarray:
        return np.sort(np.frombuffer(self._items, dtype=np.uint64))  # a copy: the view goes

    def repeated(self) -> set[int]:
        """Digests added more than once: repeated ids, or (rarely) different ids that collide."""
        ordered = self._sorted()
        same = ordered[1:][ordered[1:] == ordered[:-1]]
        return {int(digest) for digest in np.unique(same)}

    def distinct(self) -> int:
        """How many different digests were added (different ids, short of a collision)."""
        return int(np.unique(self._sorted()).size)

    def missing_from(self, other: IdDigests) -> int:
        """How many different digests of these are not among ``other``'s."""
        return int(np.setdiff1d(self._sorted(), other._sorted(), assume_unique=False).size)
