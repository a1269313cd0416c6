"""A YAML alias bomb or an oversized file is refused before anything is built, by the one
loader every config goes through (``io.yamlfile.load_yaml``), with one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medrealmm.cli import app
from medrealmm.corpus.config import load_config
from medrealmm.io import DataError
from medrealmm.llm.config import load_model_specs
from medrealmm.pipeline.settings import load_settings

_MODEL = """models:
  - name: m
    model: m
    base_url: http://127.0.0.1:9/v1
    params:
      extra_body: {x: *%s}
"""


def _bomb(path: Path, levels: int = 9) -> Path:
    """Nine anchors of ten aliases each: 10**9 leaves once expanded, 90 lines of text."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        aliases = ", ".join([f"*l{level - 1}"] * 10)
        lines.append(f"l{level}: &l{level} [{aliases}]")
    path.write_text("\n".join(lines) + "\n" + _MODEL % f"l{levels - 1}", encoding="utf-8")
    return path


def test_models_config_with_an_alias_bomb_is_refused(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path / "models.yaml")
    with pytest.raises(DataError) as caught:
        load_model_specs(bomb)
    assert "aliases" in str(caught.value) and str(bomb) in str(caught.value)


@pytest.mark.parametrize("loader", [load_config, load_settings])
def test_every_config_reader_refuses_the_bomb(tmp_path: Path, loader: object) -> None:
    bomb = _bomb(tmp_path / "config.yaml")
    with pytest.raises(DataError, match="aliases"):
        loader(bomb)  # type: ignore[operator]


def test_the_cli_refuses_the_bomb_in_one_line(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path / "models.yaml")
    result = CliRunner().invoke(app, ["models", "probe", "m", "--models-config", str(bomb)])
    assert result.exit_code == 2, result.output
    assert "aliases" in result.output and "Traceback" not in result.output


def test_an_oversized_config_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "models.yaml"
    big.write_text("models: []\n" + "# padding\n" * 200_000, encoding="utf-8")
    with pytest.raises(DataError, match="bytes"):
        load_model_specs(big)


def test_a_few_aliases_still_load(tmp_path: Path) -> None:
    config = tmp_path / "models.yaml"
    config.write_text(
        "base: &base {model: m, base_url: 'http://127.0.0.1:9/v1'}\n"
        "models:\n  - {<<: *base, name: a}\n  - {<<: *base, name: b}\n",
        encoding="utf-8",
    )
    assert sorted(load_model_specs(config)) == ["a", "b"]


def test_a_self_referring_alias_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "models.yaml"
    config.write_text("loop: &loop [1, *loop]\nmodels: []\n", encoding="utf-8")
    with pytest.raises(DataError, match="alias"):
        load_model_specs(config)
