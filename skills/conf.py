"""Settings of the skills app (env-driven; tests override them with the `settings` fixture)."""

from django.conf import settings

from almanac.env import envchoice, envfloat, envint

# Max seconds to honour a 429 Retry-After before retrying (bounded so a worker never hangs).
LLM_RETRY_AFTER_MAX = envfloat("LLM_RETRY_AFTER_MAX", 30.0)
# Base of the exponential backoff between attempts after a timeout / connection error / 5xx.
LLM_BACKOFF = envfloat("LLM_BACKOFF", 0.5)
# response_format sent with each request: "json_schema" (the skill's output schema; vLLM and
# llama.cpp then constrain decoding to it), "json_object" (JSON mode), or "none". A server that
# rejects it with a 400 is asked again with the next weaker one.
LLM_RESPONSE_FORMAT = envchoice("LLM_RESPONSE_FORMAT", "json_object", ("json_schema", "json_object", "none"))
# Cap on the max_tokens a skill asks the server for (keep prompt + output within the context).
LLM_MAX_OUTPUT_TOKENS = envint("LLM_MAX_OUTPUT_TOKENS", 4096)
# SkillRun rows older than this are deleted by the daily purge job.
SKILL_RUN_RETENTION_DAYS = envint("SKILL_RUN_RETENTION_DAYS", 90)
# Inputs larger than this (characters of JSON) are stored truncated in SkillRun.input.
SKILL_RUN_INPUT_MAX_CHARS = envint("SKILL_RUN_INPUT_MAX_CHARS", 20_000)
# Runs logged later (the context call's page summaries: a few per call) keep this much of
# their input: the page text is the bulk of it, and storing it whole grew the log by
# ~8 KB per context call (~30 GB a day at 40 calls/s). The digest covers the whole input.
SKILL_RUN_LATER_INPUT_MAX_CHARS = envint("SKILL_RUN_LATER_INPUT_MAX_CHARS", 1_000)
# Runs logged later (the context call's page summaries) are written in batches this often.
SKILL_RUN_FLUSH_SECONDS = envfloat("SKILL_RUN_FLUSH_SECONDS", 2.0)


def get(name: str):
    """A Django setting if set (tests, settings.py), else this module's env default."""
    return getattr(settings, name, globals()[name])
