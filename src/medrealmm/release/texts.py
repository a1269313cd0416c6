"""The human-readable files of a release, rendered from templates shipped beside this module."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import yaml

from medrealmm.release.layout import CARD, CHANGELOG, CITATION, DATA_DIR, DUA_FILE

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)


def _read(name: str) -> str:
    return (resources.files("medrealmm.release") / "templates" / name).read_text(encoding="utf-8")


@cache
def _template(name: str) -> jinja2.Template:
    return _ENV.from_string(_read(name))


def demo_dua_text() -> str:
    """The demo's Data Use Agreement: a release of any other data brings its own."""
    return _read(DUA_FILE)


def read_dua(path: Path) -> str:
    """A builder's DUA file (``release build --dua``), checked to hold text."""
    if not path.is_file():
        raise FileNotFoundError(f"--dua {path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"--dua {path}: not UTF-8 text") from None
    if not text.strip():
        raise ValueError(f"--dua {path}: the agreement is empty")
    return text if text.endswith("\n") else text + "\n"


def citation(title: str, version: str, authors: tuple[str, ...]) -> str:
    return _template(f"{CITATION}.j2").render(title=title, version=version, authors=authors)


def changelog(
    title: str,
    version: str,
    counts: dict[str, int],
    withdrawals: list[dict[str, str]],
    *,
    previous: str | None = None,
    added: list[str] | None = None,
) -> str:
    return _template(f"{CHANGELOG}.j2").render(
        title=title,
        version=version,
        counts=counts,
        withdrawals=withdrawals,
        previous=previous,
        added=added or [],
    )


def front_matter(title: str, rows: dict[str, int]) -> str:
    """Hugging Face dataset-card YAML: ``datasets.load_dataset(folder, name=table)`` reads it."""
    configs = [
        {
            "config_name": table,
            "data_files": [{"split": "test", "path": f"{DATA_DIR}/{table}.parquet"}],
            **({"default": True} if table == "instances" else {}),
        }
        for table, n in rows.items()
        if n
    ]
    meta: dict[str, Any] = {
        "pretty_name": title,
        "language": ["zh"],
        "license": "other",
        "license_name": "data-use-agreement",
        "license_link": DUA_FILE,
        "tags": ["medical", "multimodal", "consultation", "benchmark"],
        "configs": configs,
    }
    return yaml.safe_dump(meta, allow_unicode=True, sort_keys=False)


def dataset_card(manifest: dict[str, Any], rows: dict[str, int]) -> str:
    tables = [
        {"name": table, "rows": n, "file": f"{DATA_DIR}/{table}.parquet"}
        for table, n in rows.items()
    ]
    return _template("dataset_card.md.j2").render(
        **{**manifest, "tables": tables, "front_matter": front_matter(manifest["title"], rows)}
    )


__all__ = ["CARD", "changelog", "citation", "dataset_card", "demo_dua_text", "read_dua"]
