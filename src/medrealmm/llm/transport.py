"""How a chat-completion body reaches an OpenAI-compatible server and its JSON comes back.

Two transports behind one call, chosen per model (``transport:`` in the models YAML):
``http`` (a bare aiohttp session, the default: under half the SDK path's client CPU per
call, which is what lets one process keep 64 calls in flight; see
``benchmarks/eval_throughput.py``) and ``openai-sdk`` (the official SDK's HTTP layer).
Both raise the same failures, so the retry loop and ``medrealmm.llm.failures`` treat them
alike: the SDK's own exception types, or ``HTTPFailure`` carrying the same status, body
text and headers.

Each also has ``stream_chat``: the same request with ``stream: true``, its server-sent events
made whole by ``medrealmm.llm.stream`` into the body ``post_chat`` would return, with the time
to first token. A 2xx answer that is not an event stream (a server that ignores ``stream``) is
that body, with a note saying why no time to first token was measured.

Neither reads proxy variables from the environment (a proxy is used only when the model's
config names one, see ``medrealmm.llm.config.proxy_url``) and neither follows a redirect: a
3xx answer is a failure (``redirect``), never a re-send of the body to another address.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from medrealmm.llm.stream import (
    STREAM_FIELDS,
    ChunkAssembler,
    SSEDecoder,
    StreamError,
    StreamResult,
    is_event_stream,
    not_streamed_note,
)
from medrealmm.llm.types import ImagePart
from medrealmm.llm.wire import encode_body

if TYPE_CHECKING:
    import aiohttp

TransportName = Literal["openai-sdk", "http"]
TRANSPORTS: tuple[TransportName, ...] = ("openai-sdk", "http")


class HTTPFailure(Exception):
    """A failed exchange on the ``http`` transport, classified like the SDK's errors.

    ``kind`` is ``status`` (the server answered >= 400), ``timeout`` or ``connection``.
    """

    def __init__(
        self,
        kind: Literal["status", "timeout", "connection"],
        message: str,
        *,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status_code = status
        self.headers = headers or {}


class ChatTransport(Protocol):
    async def post_chat(
        self,
        payload: dict[str, Any],
        images: Sequence[ImagePart] = (),
        timeout_s: float | None = None,
    ) -> object:
        """The decoded JSON body of a 2xx reply; ``ValueError`` when it is not JSON.

        ``images``: the parts whose URLs the payload carries, for a transport that splices
        their pre-encoded bytes (``medrealmm.llm.wire``); the body sent is the same either way.
        ``timeout_s``: this call's bound, when not the configured one (a timed-out call's retry).
        """
        ...

    async def stream_chat(
        self,
        payload: dict[str, Any],
        images: Sequence[ImagePart] = (),
        timeout_s: float | None = None,
    ) -> StreamResult:
        """``payload`` sent as a stream request; the whole reply and its time to first token.

        Failures are those of ``post_chat``; a cut or undecodable stream is ``ValueError``.
        """
        ...

    async def aclose(self) -> None: ...


def _stream_failure(exc: StreamError) -> HTTPFailure:
    """An error event mid-stream, as the 5xx it stands for (its text classifies it further)."""
    return HTTPFailure("status", f"Error code: 500 - error in stream: {exc}", status=500)


class SDKTransport:
    """The official SDK: its auth, pooling and error types; retries are the caller's."""

    def __init__(
        self, base_url: str, api_key: str, timeout_s: float, proxy: str | None = None
    ) -> None:
        import openai  # here: the SDK costs most of a CPU-second to import, and only this uses it

        http_client = openai.DefaultAsyncHttpxClient(
            timeout=timeout_s, follow_redirects=False, trust_env=False, proxy=proxy
        )
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key,
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        self._timeout_s = timeout_s

    async def post_chat(
        self,
        payload: dict[str, Any],
        images: Sequence[ImagePart] = (),
        timeout_s: float | None = None,
    ) -> object:
        options: Any = {} if timeout_s is None else {"timeout": timeout_s}
        return await self._client.post(
            "/chat/completions", body=payload, cast_to=object, options=options
        )

    async def stream_chat(
        self,
        payload: dict[str, Any],
        images: Sequence[ImagePart] = (),
        timeout_s: float | None = None,
    ) -> StreamResult:
        import openai

        total = self._timeout_s if timeout_s is None else timeout_s

        started = time.perf_counter()
        model = str(payload.get("model", ""))
        try:
            # The SDK's timeout bounds each read; a stream as a whole gets the same total
            # bound as the ``http`` transport's.
            async with asyncio.timeout(total):
                stream = await self._client.post(
                    "/chat/completions",
                    body={**payload, **STREAM_FIELDS},
                    cast_to=object,
                    options={"timeout": total},
                    stream=True,
                    stream_cls=openai.AsyncStream[object],
                )
                content_type = stream.response.headers.get("content-type")
                if not is_event_stream(content_type):
                    raw = await stream.response.aread()
                    await stream.close()
                    return StreamResult(
                        json.loads(raw), None, not_streamed_note(content_type), streamed=False
                    )
                assembler = ChunkAssembler(started)
                try:
                    async for chunk in stream:
                        assembler.add(chunk)
                finally:  # a chunk that failed leaves the connection open otherwise
                    await stream.close()
        except TimeoutError:
            raise HTTPFailure("timeout", "Request timed out.") from None
        except StreamError as exc:
            raise _stream_failure(exc) from None
        except openai.APIError as exc:
            if type(exc) is not openai.APIError:  # status, connection, timeout: as post_chat
                raise
            raise _stream_failure(StreamError(exc.message)) from None  # an error event
        return assembler.result(model)

    async def aclose(self) -> None:
        await self._client.close()


class HTTPTransport:
    """One aiohttp session per event loop; the caller's semaphore bounds what is in flight."""

    def __init__(
        self, base_url: str, api_key: str, timeout_s: float, proxy: str | None = None
    ) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._proxy = proxy
        self._headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        self._timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _current_session(self) -> aiohttp.ClientSession:
        import aiohttp  # here: a tenth of a CPU-second, and only a call to a server needs it

        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            # A session is bound to its loop; a client reused under a new loop gets a new one.
            self._drop_session()
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                timeout=aiohttp.ClientTimeout(total=self._timeout_s),
                headers=self._headers,
                json_serialize=json.dumps,
                proxy=self._proxy,
                trust_env=False,
            )
            self._loop = loop
        return self._session

    async def post_chat(
        self,
        payload: dict[str, Any],
        images: Sequence[ImagePart] = (),
        timeout_s: float | None = None,
    ) -> object:
        import aiohttp

        session = self._current_session()
        body = encode_body(payload, images)
        try:
            async with session.post(
                self._url, data=body, allow_redirects=False, **_timeout(timeout_s)
            ) as response:
                raw = await response.read()
                _raise_for_status(response, raw)
        except TimeoutError:
            raise HTTPFailure("timeout", "Request timed out.") from None
        except aiohttp.ClientError as exc:
            raise HTTPFailure("connection", f"Connection error: {type(exc).__name__}") from None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{exc}") from None

    async def stream_chat(
        self,
        payload: dict[str, Any],
        images: Sequence[ImagePart] = (),
        timeout_s: float | None = None,
    ) -> StreamResult:
        import aiohttp

        session = self._current_session()
        body = encode_body({**payload, **STREAM_FIELDS}, images)
        started = time.perf_counter()
        assembler = ChunkAssembler(started)
        try:
            async with session.post(
                self._url, data=body, allow_redirects=False, **_timeout(timeout_s)
            ) as response:
                content_type = response.headers.get("Content-Type")
                if response.status >= 300 or not is_event_stream(content_type):
                    raw = await response.read()
                    _raise_for_status(response, raw)
                    return StreamResult(
                        json.loads(raw), None, not_streamed_note(content_type), streamed=False
                    )
                decoder, done = SSEDecoder(), False
                async for line in _lines(response.content.iter_any()):
                    data = decoder.line(line)
                    if data is None or done:
                        continue  # read on to the end: the connection goes back to the pool
                    if data.strip() == "[DONE]":
                        done = True
                        continue
                    assembler.add(json.loads(data))
                tail = decoder.flush()
                if tail is not None and not done and tail.strip() != "[DONE]":
                    assembler.add(json.loads(tail))
        except TimeoutError:
            raise HTTPFailure("timeout", "Request timed out.") from None
        except aiohttp.ClientError as exc:
            raise HTTPFailure("connection", f"Connection error: {type(exc).__name__}") from None
        except StreamError as exc:
            raise _stream_failure(exc) from None
        return assembler.result(str(payload.get("model", "")))

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    def _drop_session(self) -> None:
        """Close a session left open (its loop gone, or never ``aclose``d) without a warning,
        as the SDK's client is dropped silently: shut its sockets, then detach it."""
        session, self._session = self._session, None
        if session is None or session.closed:
            return
        connector = session.connector
        session.detach()
        if connector is not None:
            # The synchronous half of ``close()`` shuts the sockets; a closed loop took them.
            with contextlib.suppress(RuntimeError):
                connector._close()

    def __del__(self) -> None:
        self._drop_session()


def _raise_for_status(response: aiohttp.ClientResponse, raw: bytes) -> None:
    if response.status >= 300:  # a redirect is refused, never followed
        text = raw.decode("utf-8", "replace")
        raise HTTPFailure(
            "status",
            f"Error code: {response.status} - {text[:2000]}",
            status=response.status,
            headers={k.lower(): v for k, v in response.headers.items()},
        )


def _timeout(timeout_s: float | None) -> dict[str, Any]:
    """aiohttp's per-request override of the session's total bound, when one is asked."""
    if timeout_s is None:
        return {}
    import aiohttp

    return {"timeout": aiohttp.ClientTimeout(total=timeout_s)}


async def _lines(pieces: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The lines of a byte stream, whatever its pieces' sizes (no per-line size limit)."""
    pending = b""
    async for piece in pieces:
        pending += piece
        *whole, pending = pending.split(b"\n")
        for line in whole:
            yield line
    if pending:
        yield pending


def make_transport(
    name: TransportName,
    base_url: str,
    api_key: str,
    timeout_s: float,
    *,
    proxy: str | None = None,
) -> ChatTransport:
    if name == "http":
        return HTTPTransport(base_url, api_key, timeout_s, proxy)
    return SDKTransport(base_url, api_key, timeout_s, proxy)
