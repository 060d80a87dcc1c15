"""Send one job and its log to jobtriage's ingestion API (POST /api/v1/jobs), standard library only.

A log file is streamed from disk as a multipart upload (never read into memory). Connection errors
and 429/502/503/504 answers are retried with exponential backoff (honouring Retry-After); the
server's refusals (400, 401, 403, 413, 415) are not, since sending the same request again cannot
help. Sending a job twice is safe: the server keys jobs by platform + external_id.
"""
from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Optional
from urllib.parse import urljoin, urlsplit

API_PATH = "/api/v1/jobs"
RETRY_STATUSES = {429, 502, 503, 504}
MAX_RETRY_AFTER = 300.0     # a server asking for longer than this is treated as down, not busy
CHUNK = 256 * 1024


class SubmitError(Exception):
    """The job could not be sent. `status` is the HTTP status when the server answered, else None."""

    def __init__(self, message: str, status: Optional[int] = None, body: Optional[dict] = None):
        super().__init__(message)
        self.status = status
        self.body = body or {}


class RejectedError(SubmitError):
    """The server refused the request (400/401/403/413/415...): fix the request, do not retry."""


class UnavailableError(SubmitError):
    """The server could not be reached, or stayed busy, through every retry."""


@dataclass(frozen=True)
class Submitted:
    id: int
    created: bool
    url: str          # the job's page
    status_url: str   # GET with the same token for the analysis state


def backoff_delay(attempt: int, *, base: float = 1.0, cap: float = 30.0, jitter: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry number `attempt` (0-based): base * 2^attempt, capped, with jitter
    in [50%, 100%] so that many jobs failing together do not retry in lockstep."""
    return min(cap, base * (2 ** attempt)) * (0.5 + jitter() / 2)


def parse_retry_after(value: Optional[str], now: Optional[datetime] = None) -> Optional[float]:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None when absent or invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def submit_job(url: str, token: str, metadata: dict, log_path: Optional[str] = None, log_text: Optional[str] = None, *,
               timeout: float = 60.0, retries: int = 5, backoff_base: float = 1.0, backoff_cap: float = 30.0,
               sleep: Callable[[float], None] = time.sleep) -> Submitted:
    """Send `metadata` (see docs/ingest.md) with a log file (`log_path`, streamed) or text (`log_text`).

    `url` is the server's base URL (`https://jobtriage.example.org`) or the API URL itself.
    Raises RejectedError when the server refuses the job, UnavailableError when it cannot be reached
    after `retries` retries, ValueError for bad arguments (before anything is sent)."""
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be a dict")
    if log_path is not None and log_text is not None:
        raise ValueError("give log_path or log_text, not both")
    if not token:
        raise ValueError("a token is required (python manage.py create_token NAME on the server)")
    if log_path is not None and not os.path.isfile(log_path):
        raise ValueError(f"log file not found: {log_path}")
    target = api_url(url)
    last_problem = ""
    for attempt in range(retries + 1):
        try:
            status, headers, body = _post(target, token, metadata, log_path, log_text, timeout)
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out, DNS
            last_problem = f"{type(exc).__name__}: {exc}"
            wait = None
        else:
            if status == 202:
                return Submitted(int(body["id"]), bool(body.get("created")), body.get("url", ""),
                                 body.get("status_url", ""))
            message = _describe(status, body)
            if status not in RETRY_STATUSES:
                raise RejectedError(message, status, body)
            last_problem = message
            wait = parse_retry_after(headers.get("Retry-After"))
            if wait is not None and wait > MAX_RETRY_AFTER:
                raise UnavailableError(f"{message} (server asks to retry after {wait:.0f} s)", status, body)
        if attempt < retries:
            sleep(wait if wait is not None else backoff_delay(attempt, base=backoff_base, cap=backoff_cap))
    raise UnavailableError(f"could not send the job to {target} after {retries + 1} attempts: {last_problem}")


def job_status(status_url: str, token: str, *, timeout: float = 30.0) -> dict:
    """GET the job's analysis state (`ingest_state`, and `failure` once analysed)."""
    status, _, body = _request("GET", status_url, token, timeout=timeout)
    if status != 200:
        raise SubmitError(_describe(status, body), status, body)
    return body


def wait_for_analysis(status_url: str, token: str, *, timeout: float = 120.0, interval: float = 1.0) -> dict:
    """Poll the job's status until the worker has analysed it (or failed to); its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        body = job_status(status_url, token)
        if body.get("ingest_state") != "queued" or time.monotonic() > deadline:
            return body
        time.sleep(interval)


def api_url(url: str) -> str:
    if not url or not urlsplit(url).scheme.startswith("http"):
        raise ValueError(f"not an http(s) URL: {url!r} (set --url or JOBTRIAGE_URL)")
    return url if url.rstrip("/").endswith(API_PATH) else urljoin(url.rstrip("/") + "/", API_PATH.lstrip("/"))


def _describe(status: int, body: dict) -> str:
    text = f"HTTP {status}: {body.get('error') or body.get('_raw') or 'no message'}"
    if isinstance(body.get("fields"), dict):
        text += " (" + "; ".join(f"{k}: {v}" for k, v in body["fields"].items()) + ")"
    return text


def _post(target: str, token: str, metadata: dict, log_path, log_text, timeout):
    if log_path is None:
        payload = dict(metadata)
        if log_text is not None:
            payload["log_text"] = log_text
        return _request("POST", target, token, body=json.dumps(payload).encode(), timeout=timeout,
                        content_type="application/json")
    boundary = "jobtriage-" + uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"metadata\"\r\n"
            f"Content-Type: application/json\r\n\r\n{json.dumps(metadata)}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"log\"; filename=\"job.log\"\r\n"
            f"Content-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    return _request("POST", target, token, timeout=timeout, content_type=f"multipart/form-data; boundary={boundary}",
                    parts=(head, log_path, tail))


def _request(method: str, url: str, token: str, *, body: bytes = b"", parts=None, timeout: float,
             content_type: str = ""):
    """One HTTP exchange: (status, headers, decoded JSON body or {"_raw": text})."""
    split = urlsplit(url)
    connection_class = http.client.HTTPSConnection if split.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(split.hostname, split.port, timeout=timeout)
    try:
        connection.putrequest(method, (split.path or "/") + (f"?{split.query}" if split.query else ""))
        connection.putheader("Authorization", f"Token {token}")
        connection.putheader("Accept", "application/json")
        connection.putheader("User-Agent", "jobtriage-client/0.1")
        if content_type:
            connection.putheader("Content-Type", content_type)
        if parts is not None:
            head, path, tail = parts
            connection.putheader("Content-Length", str(len(head) + os.path.getsize(path) + len(tail)))
            connection.endheaders()
            connection.send(head)
            with open(path, "rb") as log:
                for chunk in iter(lambda: log.read(CHUNK), b""):
                    connection.send(chunk)
            connection.send(tail)
        else:
            if method != "GET":
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders()
            if body:
                connection.send(body)
        response = connection.getresponse()
        raw = response.read()
        try:
            decoded = json.loads(raw) if raw else {}
            decoded = decoded if isinstance(decoded, dict) else {"_raw": str(decoded)[:500]}
        except ValueError:
            decoded = {"_raw": raw[:500].decode("utf-8", "replace")}
        return response.status, response.headers, decoded  # headers: case-insensitive .get
    finally:
        connection.close()
