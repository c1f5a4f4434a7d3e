"""The reward server's bearer token: where it comes from, how a request's is checked, and what an
open server exposes.

Why: ``rewardsmith serve --host 0.0.0.0`` (a multi-node trainer needs it) lets anyone who reaches
the port run code in the sandbox (``code``), spend a judge's budget (``judge``) or simply load the
machine. With a token, ``/get_reward``, ``/v1/score`` and ``/metrics`` answer 401 unless the request
carries ``Authorization: Bearer <token>``; ``/health`` stays open (load balancers and readiness
probes send no credentials, and it reveals nothing a caller could use). The comparison is
:func:`hmac.compare_digest` on bytes, so its time does not depend on how much of a guess was right.

The token comes from ``--token-file PATH`` or the environment variable ``REWARDSMITH_SERVER_TOKEN``;
both at once is refused (they could disagree, and a client would not know which one is in force).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path

from rewardsmith.verifiers import RewardsmithError, Verifier

TOKEN_ENV = "REWARDSMITH_SERVER_TOKEN"
MIN_TOKEN_CHARS = 16
# RFC 6750's b64token: what may follow "Bearer " in an Authorization header.
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
MAKE_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
# The challenge of a 401 (RFC 6750 section 3): the scheme, and for a token sent but wrong, why.
CHALLENGE = 'Bearer realm="rewardsmith"'
CHALLENGE_INVALID = 'Bearer realm="rewardsmith", error="invalid_token"'


class TokenError(RewardsmithError, ValueError):
    """The server's token cannot be used (unreadable, empty, too short, two sources); the message
    says what to do."""


def check_token(text: str, source: str) -> bytes:
    """``text`` with surrounding whitespace (a file's final newline) removed, as bytes, or
    :class:`TokenError` saying why it cannot be a bearer token."""
    token = text.strip()
    if not token:
        raise TokenError(f"{source} is empty; put a random token in it, e.g. {MAKE_TOKEN}")
    if not _TOKEN_CHARS.fullmatch(token):
        raise TokenError(f"{source} holds characters a bearer token cannot carry (letters, digits and -._~+/ "
                         f"only, = at the end); make one with {MAKE_TOKEN}")
    if len(token) < MIN_TOKEN_CHARS:
        raise TokenError(f"{source} holds a token of {len(token)} characters; use at least {MIN_TOKEN_CHARS} "
                         f"random ones, e.g. {MAKE_TOKEN}")
    return token.encode("ascii")


def load_token(token_file: str | os.PathLike[str] | None = None, use_env: bool = False,
               environ: Mapping[str, str] | None = None) -> bytes | None:
    """The token the server requires: read from ``token_file``, or from ``$REWARDSMITH_SERVER_TOKEN``
    when ``use_env``; None (no token, every route open) when neither is asked for."""
    environ = os.environ if environ is None else environ
    if token_file is not None:
        try:
            text = Path(token_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenError(f"cannot read --token-file {token_file}: {getattr(exc, 'strerror', None) or exc}") \
                from None
        return check_token(text, f"--token-file {token_file}")
    if use_env:
        if TOKEN_ENV not in environ:
            raise TokenError(f"{TOKEN_ENV} is not set in this process's environment")
        return check_token(environ[TOKEN_ENV], TOKEN_ENV)
    return None


def token_source(token_file: str | None, environ: Mapping[str, str] | None = None) -> tuple[str | None, bool]:
    """What ``serve`` was given: (token file, whether to read the environment variable). Both at
    once is a :class:`TokenError`; an environment variable that is set but empty is one too (an
    empty value would otherwise quietly leave the server open)."""
    environ = os.environ if environ is None else environ
    in_env = TOKEN_ENV in environ
    if token_file is not None and in_env:
        raise TokenError(f"both --token-file and {TOKEN_ENV} are set; use one (unset {TOKEN_ENV}, or drop "
                         "--token-file)")
    return token_file, in_env


def bearer(header: bytes | None) -> bytes | None:
    """The credentials of an ``Authorization: Bearer <token>`` header (scheme in any case), or None."""
    if header is None:
        return None
    scheme, _, credentials = header.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return credentials.strip() or None


def authorized(header: bytes | None, token: bytes) -> bool:
    """Whether the request's ``Authorization`` header carries ``token``, compared in constant time."""
    given = bearer(header)
    if given is None:
        return False
    return hmac.compare_digest(given, token)


# ---------------------------------------------------------------- the warning for an open server


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) reaches this machine only: 127.0.0.0/8, ::1, or a
    name every address of which is one of those."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


# What a caller can make the server do, by the registry type of a part of the spec.
_EXPOSED = {
    "code": "run code of their choosing in the sandbox (code)",
    "judge": "spend the judge's budget (judge)",
    "orm": "run the reward model (orm)",
    "prm": "run the reward model (prm)",
}


def exposure(verifier: Verifier) -> str:
    """What anyone who reaches an open server can do with this spec, in words."""
    found: dict[str, None] = {}
    for _, part in verifier.walk():
        words = _EXPOSED.get(getattr(part, "name", ""))
        if words is not None:
            found[words] = None
    return ", ".join([*found, "use this machine's CPUs for rewards and read /metrics"])


def open_server_warning(host: str, port: int, verifier: Verifier) -> str:
    """The line ``serve`` prints when it listens beyond loopback without a token."""
    return (f"serving on {host}:{port} without a token: anyone who can reach this port can "
            f"{exposure(verifier)}; require one with --token-file FILE or {TOKEN_ENV} "
            f"(make it with {MAKE_TOKEN}), or bind 127.0.0.1")
