"""Settings of the skills app (env-driven; tests override them with the `settings` fixture)."""

from django.conf import settings

from almanac.settings import envbool, envfloat, envint

# Max seconds to honour a 429 Retry-After before retrying (bounded so a worker never hangs).
LLM_RETRY_AFTER_MAX = envfloat("LLM_RETRY_AFTER_MAX", 30.0)
# Base of the exponential backoff between attempts after a timeout / connection error / 5xx.
LLM_BACKOFF = envfloat("LLM_BACKOFF", 0.5)
# Send response_format={"type": "json_object"} (dropped automatically if the server rejects it).
LLM_JSON_MODE = envbool("LLM_JSON_MODE", True)
# Cap on the max_tokens a skill asks the server for (keep prompt + output within the context).
LLM_MAX_OUTPUT_TOKENS = envint("LLM_MAX_OUTPUT_TOKENS", 4096)
# SkillRun rows older than this are deleted by the daily purge job.
SKILL_RUN_RETENTION_DAYS = envint("SKILL_RUN_RETENTION_DAYS", 90)
# Inputs larger than this (characters of JSON) are stored truncated in SkillRun.input.
SKILL_RUN_INPUT_MAX_CHARS = envint("SKILL_RUN_INPUT_MAX_CHARS", 20_000)


def get(name: str):
    """A Django setting if set (tests, settings.py), else this module's env default."""
    return getattr(settings, name, globals()[name])
