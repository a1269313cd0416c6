"""Keep patient text out of logs: log a fingerprint unless the operator opts in explicitly."""

from __future__ import annotations

import hashlib
import os

PHI_LOG_ENV = "MEDREALMM_LOG_PHI"


def phi_logging_allowed() -> bool:
    return os.environ.get(PHI_LOG_ENV) == "1"


def loggable(text: str) -> str:
    """The text itself only when ``MEDREALMM_LOG_PHI=1``; else its length and a short hash."""
    if phi_logging_allowed():
        return text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return f"<text len={len(text)} sha256={digest}>"
