"""One cheap request before the first real one: is the endpoint there, does it take the key,
does it serve the model id? A wrong port or key then costs a one-line error before any work,
not a failure row per unit after minutes of retries."""

from __future__ import annotations

import logging
import os

from medrealmm.llm.config import ModelSpec, proxy_url

log = logging.getLogger("medrealmm.reach")
TIMEOUT_S = 5.0
_checked: set[tuple[str, str]] = set()


class EndpointUnreachable(ValueError):
    """The configured endpoint cannot serve calls (no answer, refused key)."""


def check_endpoint(spec: ModelSpec, timeout_s: float = TIMEOUT_S) -> None:
    """GET ``{base_url}/models`` once per (endpoint, model) and process.

    Refuses (``EndpointUnreachable``) when nothing answers or the key is refused. A server
    without ``/models`` passes; a listing that lacks the model id is a warning naming the
    served ids, since some servers (llama.cpp) answer under any id.
    """
    if spec.base_url is None:
        return  # the offline baseline
    model = spec.model or spec.name
    if (spec.base_url, model) in _checked:
        return
    url = spec.base_url.rstrip("/") + "/models"
    key = os.environ.get(spec.api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    where = f"model {spec.name!r} at {spec.base_url}"
    import httpx  # here: only a check of a server needs it, not the offline path

    try:
        # As the calls go: through the configured proxy only, never following a redirect.
        response = httpx.get(
            url, headers=headers, timeout=timeout_s, trust_env=False, proxy=proxy_url(spec)
        )
    except httpx.ConnectError as exc:
        raise EndpointUnreachable(
            f"{where}: cannot connect ({exc}); is the server running?"
        ) from None
    except httpx.TimeoutException:
        raise EndpointUnreachable(f"{where}: no answer within {timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise EndpointUnreachable(f"{where}: {type(exc).__name__}: {exc}") from None
    if response.is_redirect:
        raise EndpointUnreachable(
            f"{where}: answers with a redirect (HTTP {response.status_code} to "
            f"{response.headers.get('location', '?')}); redirects are never followed, as they "
            "would re-send patient data elsewhere: set base_url to the address that answers"
        )
    if response.status_code in (401, 403):
        raise EndpointUnreachable(
            f"{where}: the server refused the API key (HTTP {response.status_code}); "
            f"set {spec.api_key_env}"
        )
    if response.status_code == 200:
        try:
            served = [str(m.get("id")) for m in response.json().get("data", [])]
        except (ValueError, AttributeError):
            served = []
        if served and model not in served:
            log.warning(
                "%s: the server lists %s, not %r; calls may fail if it checks the id",
                where,
                ", ".join(served[:10]),
                model,
            )
    _checked.add((spec.base_url, model))
