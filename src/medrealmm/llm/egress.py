"""Where a model's calls go, and whether un-masked patient data may go there.

Stages that see consultations before de-identification (the 4a privacy screen, the deid LLM
pass, anything reading ``raw`` or ``corpus.sampled``) may only call the offline baseline or a
loopback server, unless the model's config says ``phi: allowed``. They name the host before the
first call, so an operator sees where patient text is going while it can still be stopped.

A proxy is a host the data passes through: it is used only when the model's config names it
(``proxy:``; proxy variables of the environment are never read otherwise) and is held to the
same rule. No transport follows a redirect (``medrealmm.llm.transport``).
"""

from __future__ import annotations

import ipaddress
import logging
from urllib.parse import urlparse

from medrealmm.llm.config import ModelSpec, proxy_url

log = logging.getLogger("medrealmm.egress")

# The same two stage names as medrealmm.store.stages.UNMASKED_STAGES (llm does not import store).
UNMASKED_STAGES = frozenset({"raw", "corpus.sampled"})


class PHIEgressError(ValueError):
    """Un-masked data would leave the machine for a host nobody allowed."""


def endpoint_host(spec: ModelSpec) -> str | None:
    """The host a spec's calls reach; None for the offline baseline (no network at all)."""
    if spec.backend == "offline":
        return None
    return urlparse(spec.base_url or "").hostname or ""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def guard_unmasked(spec: ModelSpec, purpose: str) -> str | None:
    """Refuse a non-loopback endpoint for ``purpose`` unless ``phi: allowed``; announce the host.

    Returns the host the calls will go to (None for the offline baseline).
    """
    host = endpoint_host(spec)
    if host is None:
        return None
    proxy = proxy_url(spec)
    proxy_host = urlparse(proxy).hostname or proxy if proxy else None
    for kind, name in (("to", host), ("through the proxy", proxy_host)):
        if name is not None and not is_loopback(name) and spec.phi != "allowed":
            raise PHIEgressError(
                f"{purpose} sees un-masked patient data and model {spec.name!r} would send it "
                f"{kind} {name!r}, which is not loopback; set 'phi: allowed' for it in "
                "--models-config if that host may receive PHI"
            )
    via = f" through proxy {proxy_host}" if proxy_host else ""
    log.warning(
        "%s: sending un-masked patient data to %s%s (model %r)", purpose, host, via, spec.name
    )
    return host
