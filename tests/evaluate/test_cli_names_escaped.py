"""Names printed through rich are shown as written: `[`, `]` and `\\` in a model or grader
name are never read as markup (`judge-a[grouped]` was printed as `judge-a`)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from medrealmm.cli import common
from medrealmm.cli import evaluate as cli_evaluate
from medrealmm.evaluate.results import Abstentions
from medrealmm.evaluate.scoring import ModelSummary

NAMES = ["judge-a[grouped]", "m[bold]x[/bold]", "back\\slash[red]", "[link=x]y"]


@pytest.fixture
def printed(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    out = io.StringIO()
    console = Console(file=out, width=400, soft_wrap=True)
    for module in (common, cli_evaluate):  # results and notes alike
        monkeypatch.setattr(module, "console", console)
        monkeypatch.setattr(module, "result_console", console)
    return out


def test_score_usage_and_abstention_tables_print_names_whole(printed: io.StringIO) -> None:
    rows = [ModelSummary(name, True, 3, 3, 1, 3, 0, 0.5, 0.5, 0.5, 1.0, 0.0, 0) for name in NAMES]
    cli_evaluate.show_summary(NAMES[0], rows, {(NAMES[1], True): 2})
    usage = [
        {"stage": "eval.verdict", "model": name, "calls": 1, "cached_calls": 0,
         "failed_calls": 0, "attempts": 1, "prompt_tokens": 5, "completion_tokens": 1,
         "unknown_prompt_calls": 0, "cost": None}
        for name in NAMES
    ]  # fmt: skip
    cli_evaluate.show_usage(usage)
    cli_evaluate.show_abstentions([Abstentions(name, name, True, 1, 1, 1) for name in NAMES])
    text = printed.getvalue()
    for name in NAMES:
        assert text.count(name) >= 3, name
