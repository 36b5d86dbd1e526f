import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def test_skill_run_command_prints_output_and_run(settings):
    settings.LLM_BASE_URL = ""
    out, err = StringIO(), StringIO()
    call_command(
        "skill_run",
        "fact_extract",
        "--text",
        "上周五和 Acme 开会。",
        "--session-date",
        "2025-03-20",
        stdout=out,
        stderr=err,
    )
    assert json.loads(out.getvalue())["facts"][0]["occurred_at"] == "2025-03-14"
    assert "success, used_llm=False" in err.getvalue()


def test_skill_run_command_reports_bad_input(settings):
    settings.LLM_BASE_URL = ""
    with pytest.raises(CommandError, match="max_tokens"):
        call_command("skill_run", "summarize", '{"text": "x"}', stdout=StringIO(), stderr=StringIO())


def test_an_unknown_skill_reports_no_earlier_run(settings):
    settings.LLM_BASE_URL = ""
    call_command(
        "skill_run", "summarize", '{"text": "x", "max_tokens": 20}', stdout=StringIO(), stderr=StringIO()
    )
    err = StringIO()
    with pytest.raises(CommandError, match="unknown skill"):
        call_command("skill_run", "nosuch", "--text", "x", stdout=StringIO(), stderr=err)
    assert "run #" not in err.getvalue()
