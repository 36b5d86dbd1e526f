"""Source credentials: Fernet-encrypted with CONNECTOR_SECRET_KEY, or `env:VAR` references.

A credential is a string (a token or password) or a JSON object; both are stored as one
encrypted text. `env:NAME` stores no secret at all: the value is read from the
environment (or NAME_FILE) when the poller runs.
"""

from __future__ import annotations

import json

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from almanac.env import envsecret
from almanac.errors import ApplicationError

ENV_PREFIX = "env:"
FERNET_PREFIX = "fernet:"


def _fernet() -> Fernet:
    key = settings.CONNECTOR_SECRET_KEY
    if not key:
        raise ApplicationError(
            "CONNECTOR_SECRET_KEY is not set: set it (Fernet.generate_key()) or store credentials as env:VAR"
        )
    try:
        return Fernet(key.encode() if isinstance(key, str) else key)
    except ValueError as exc:
        raise ApplicationError("CONNECTOR_SECRET_KEY is not a valid Fernet key") from exc


def credentials_encode(value: str | dict) -> str:
    """The stored form of a credential: `env:VAR` unchanged, anything else encrypted."""
    if isinstance(value, str) and value.startswith(ENV_PREFIX):
        return value
    plain = json.dumps(value) if isinstance(value, dict) else str(value)
    return FERNET_PREFIX + _fernet().encrypt(plain.encode()).decode()


def credentials_decode(stored: str) -> str | dict:
    """The credential in clear ("" when none). JSON objects come back as dicts."""
    if not stored:
        return ""
    if stored.startswith(ENV_PREFIX):
        name = stored[len(ENV_PREFIX) :]
        plain = envsecret(name)
        if not plain:  # a typo or a variable the worker was not given: say so, never poll without
            raise ApplicationError(
                f"credentials name the environment variable {name}, which is not set (nor {name}_FILE)"
            )
    elif stored.startswith(FERNET_PREFIX):
        try:
            plain = _fernet().decrypt(stored[len(FERNET_PREFIX) :].encode()).decode()
        except InvalidToken as exc:
            raise ApplicationError(
                "stored credentials cannot be decrypted with CONNECTOR_SECRET_KEY"
            ) from exc
    else:
        raise ApplicationError("credentials must be stored encrypted or as env:VAR")
    if plain.startswith("{"):
        try:
            return json.loads(plain)
        except ValueError:
            return plain
    return plain
