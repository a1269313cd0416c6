"""Prompt templates live as files beside their agent (``<package>/prompts/<name>.<role>.j2``)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import jinja2
import jinja2.meta

from medrealmm.llm.types import Message

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)


@cache
def _template(package: str, filename: str) -> jinja2.Template | None:
    path = resources.files(package) / "prompts" / filename
    if not path.is_file():
        return None
    return _ENV.from_string(path.read_text(encoding="utf-8"))


@cache
def _static_text(package: str, filename: str) -> str | None:
    """The rendered text of a template that uses no variable (most system prompts): it is
    the same on every call, so it is rendered once, not once per call."""
    path = resources.files(package) / "prompts" / filename
    if not path.is_file():
        return None
    source = path.read_text(encoding="utf-8")
    if jinja2.meta.find_undeclared_variables(_ENV.parse(source)):
        return None
    return _ENV.from_string(source).render().strip()


def render(package: str, name: str, role: str, **variables: Any) -> str:
    filename = f"{name}.{role}.j2"
    static = _static_text(package, filename)
    if static is not None:
        return static
    template = _template(package, filename)
    if template is None:
        raise FileNotFoundError(f"no prompt template {package}/prompts/{filename}")
    return template.render(**variables).strip()


def system_messages(package: str, name: str, **variables: Any) -> list[Message]:
    """The system message, when its template exists (none or one)."""
    if _template(package, f"{name}.system.j2") is None:
        return []
    return [Message.text("system", render(package, name, "system", **variables))]


def render_messages(package: str, name: str, **variables: Any) -> list[Message]:
    """A system message (when its template exists) followed by the user message."""
    user = Message.text("user", render(package, name, "user", **variables))
    return [*system_messages(package, name, **variables), user]
