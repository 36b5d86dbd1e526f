"""Redacting the skill-run log finds a text however jsonb renders it: `"`, `\\` and newlines
escaped once inside a string value, twice inside the preview of a truncated input."""

import json

import pytest

from skills.models import SkillRun
from skills.services import skill_run, skillrun_redact

pytestmark = pytest.mark.django_db

SECRETS = [
    'My passport number is "E12345678".',
    "我的护照号码是“E12345678”，签发地是C:\\上海。",
    "Vault code:\nline one 4411\tline two 7788",
]


def _mentions(needle: str) -> list[SkillRun]:
    return [
        r
        for r in SkillRun.objects.all()
        if needle in json.dumps([r.input, r.output, r.error], ensure_ascii=False)
    ]


@pytest.mark.parametrize("secret", SECRETS)
def test_redact_matches_json_escaped_text(tenant, settings, secret):
    settings.LLM_BASE_URL = ""
    skill_run(name="summarize", input={"text": f"Notes. {secret} Done.", "max_tokens": 200}, tenant=tenant)
    skill_run(name="summarize", input={"text": "Unrelated notes about tea.", "max_tokens": 50}, tenant=tenant)
    assert len(_mentions("E12345678" if "E1" in secret else "4411")) == 1
    assert skillrun_redact(contains=secret, tenant=tenant) == 1
    assert _mentions("E12345678") == [] and _mentions("4411") == []
    assert SkillRun.objects.filter(error="[redacted]").count() == 1  # the tea run is kept


@pytest.mark.parametrize("secret", SECRETS)
def test_redact_matches_the_preview_of_a_truncated_input(tenant, settings, secret):
    settings.LLM_BASE_URL = ""
    settings.SKILL_RUN_INPUT_MAX_CHARS = 400
    skill_run(
        name="summarize",
        input={"text": f"{secret} " + "filler words " * 100, "max_tokens": 50},
        tenant=tenant,
    )
    run = SkillRun.objects.get()
    assert run.input_truncated and "_truncated" in run.input
    assert skillrun_redact(contains=secret, tenant=tenant) == 1
    assert SkillRun.objects.get().input == {"_redacted": True}
