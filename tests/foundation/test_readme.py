"""The README stays one page that points into the documentation site, and its links resolve.

The pages under docs/ are checked by `mkdocs build --strict` (links, anchors and nav) in CI."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.M)


def _slug(heading: str) -> str:
    """The anchor MkDocs and GitHub give a heading: lower case, words joined by hyphens."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"[\s]+", "-", text)


def test_readme_is_one_page() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    links = [link for link in _LINK.findall(text) if not re.match(r"[a-z]+:", link)]
    assert links, "the README links into docs/"
    for link in links:
        path, _, anchor = link.partition("#")
        target = (README.parent / path) if path else README
        assert target.exists(), f"README links to {link}: no such file"
        if anchor and target.suffix == ".md":
            slugs = {_slug(h) for h in _HEADING.findall(target.read_text(encoding="utf-8"))}
            assert anchor in slugs, f"README links to {link}: no such heading"


def test_every_docs_page_in_the_readme_exists_in_the_site_nav() -> None:
    """A page the README sends readers to is a page of the site, not a stray file."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for link in _LINK.findall(README.read_text(encoding="utf-8")):
        path = link.partition("#")[0]
        if path.startswith("docs/"):
            assert path.removeprefix("docs/") in nav, link
