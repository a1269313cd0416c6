"""Why a call failed, whether asking again can help, and what the user should change.

One classification serves the retry loop (transient: back off and retry; permanent: stop),
the store (permanent failures are not re-asked by a plain rerun) and the CLI summary, which
groups failures by reason and prints the fix beside each group.
"""

from __future__ import annotations

import email.utils
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from medrealmm.llm.transport import HTTPFailure

# reason -> (permanent, the fix shown to the user)
REASONS: dict[str, tuple[bool, str]] = {
    "timeout": (False, "the server took longer than --timeout; raise it or lower concurrency"),
    "connection": (False, "the server could not be reached; check base_url and that it runs"),
    "rate_limit": (False, "the server kept answering 429; lower concurrency or set rpm"),
    "server_error": (False, "the server answered 5xx; check its log, then rerun"),
    "malformed_response": (False, "the server's body was not a chat completion (proxy page?)"),
    "auth": (True, "the server refused the key; set the model's api_key_env"),
    "context_length": (True, "the prompt exceeds the model's context; use a larger window"),
    "unsupported": (
        True,
        "the server rejects a feature (images or structured output); "
        "set vision: false or structured_mode in the models YAML",
    ),
    "bad_request": (True, "the server rejected the request (4xx); see the message"),
    "redirect": (
        True,
        "the server answered with a redirect (3xx), which is never followed: it would send "
        "the request body to another address; set base_url to the address that answers",
    ),
    "malformed_output": (
        True,
        "the reply never matched the schema; rerun with "
        "--retry-failed or --debug-calls to keep the raw replies",
    ),
    "error": (False, "see the message"),
}

_TAG = re.compile(r"\[([a-z_]+)\]")
_CONTEXT_HINTS = (
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "exceeds the",
    "n_ctx",
    "context_length",
    "prompt is too long",
)
_UNSUPPORTED_HINTS = (
    "not support",
    "unsupported",
    "response_format",
    "json_schema",
    "image",
    "multimodal",
    "vision",
    "not implemented",
)


def is_permanent(reason: str) -> bool:
    return REASONS.get(reason, (False, ""))[0]


def fix_for(reason: str) -> str:
    return REASONS.get(reason, REASONS["error"])[1]


def classify(exc: BaseException) -> str:
    """The reason name of a transport's exception (see ``REASONS``)."""
    if isinstance(exc, HTTPFailure):
        if exc.kind != "status":
            return exc.kind
        return _classify_status(exc.status_code or 0, exc.message.lower())
    openai = sys.modules.get("openai")  # not imported: no SDK error can exist
    if openai is None:
        return "error"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.APIStatusError):
        return _classify_status(exc.status_code, str(exc.message).lower())
    return "error"


def _classify_status(status: int, text: str) -> str:
    if 300 <= status < 400:
        return "redirect"
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status in (400, 413, 422, 500) and any(h in text for h in _CONTEXT_HINTS):
        return "context_length"
    if status == 501 or (status in (400, 422, 500) and any(h in text for h in _UNSUPPORTED_HINTS)):
        return "unsupported"
    if status in (408, 409) or status >= 500:
        return "server_error"
    return "bad_request"


def retry_after_s(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait (``Retry-After``/``retry-after-ms``), if any."""
    if isinstance(exc, HTTPFailure):
        headers = exc.headers
    else:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - (now if now is not None else time.time()))


@dataclass(frozen=True)
class FailureGroup:
    reason: str
    count: int
    example: str
    fix: str


def summarise(errors: Iterable[str]) -> list[FailureGroup]:
    """Group failure messages by the reason tag they start with (``[reason] message``)."""
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for message in errors:
        reason = reason_of(message)
        counts[reason] += 1
        examples.setdefault(reason, message)
    return [
        FailureGroup(reason, n, examples[reason], fix_for(reason))
        for reason, n in counts.most_common()
    ]


def tagged(reason: str, message: str) -> str:
    """The stored form of a failure message: the reason first, so summaries can group it."""
    return f"[{reason}] {message}"


def reason_of(message: str) -> str:
    """The reason tag of a stored failure message; ``error`` when it carries none."""
    for reason in _TAG.findall(message):
        if reason in REASONS:
            return reason
    return "malformed_output" if _looks_malformed(message) else "error"


def _looks_malformed(text: str) -> bool:
    return "no JSON object" in text or "Field required" in text or "validation" in text
