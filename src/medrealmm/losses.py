"""What a step lost: units of its input it dropped or failed, and when that is a mass drop.

Every summary (``medrealmm run``, ``corpus build``) counts them per step; a step that loses
more than half its input warns and the command exits non-zero unless ``--allow-mass-drop``, so
a screen that refuses everything or an endpoint that answers nothing never looks like success.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: A step that drops or fails more than this share of its input has most likely gone wrong
#: (a screen that refuses everything, an endpoint that answers nothing): the command warns and
#: exits non-zero unless ``--allow-mass-drop``.
MASS_DROP_SHARE = 0.5


@dataclass(frozen=True)
class Loss:
    """How many of a step's input units it dropped or failed (a stage, or one screen of it)."""

    step: str
    input: int
    lost: int

    @property
    def mass(self) -> bool:
        return self.input > 0 and self.lost > MASS_DROP_SHARE * self.input

    def warning(self) -> str:
        return (
            f"{self.step} dropped or failed {self.lost} of its {self.input} input units "
            f"({self.lost / self.input:.0%}), more than {MASS_DROP_SHARE:.0%}"
        )


def mass_losses(losses: Iterable[Loss]) -> list[Loss]:
    return [loss for loss in losses if loss.mass]
