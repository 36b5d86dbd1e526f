import json
from datetime import timedelta

import pytest
from django.utils import timezone

from almanac.errors import ApplicationError
from skills.models import SkillRun
from skills.services import skill_run, skillrun_purge, skillrun_redact
from skills.tasks import skillrun_purge_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_runs(settings, tenant):
    settings.LLM_BASE_URL = ""
    skill_run(
        name="fact_extract",
        input={"text": "我的身份证号是 110101199001011234，我喜欢喝绿茶。"},
        tenant=tenant,
    )
    skill_run(name="fact_extract", input={"text": "I prefer window seats on long flights."}, tenant=tenant)
    return SkillRun.objects.order_by("id")


def test_purge_removes_only_old_runs(two_runs, settings):
    old = two_runs.first()
    SkillRun.objects.filter(id=old.id).update(created_at=timezone.now() - timedelta(days=100))
    settings.SKILL_RUN_RETENTION_DAYS = 90
    assert skillrun_purge_task() == 1
    assert skillrun_purge_task() == 0  # idempotent
    assert list(SkillRun.objects.values_list("id", flat=True)) == [two_runs.last().id]
    assert skillrun_purge(older_than_days=0) == 1


def test_redact_blanks_runs_that_mention_the_text(two_runs, tenant, other_tenant):
    assert skillrun_redact(contains="110101199001011234", tenant=other_tenant) == 0
    assert skillrun_redact(contains="110101199001011234", tenant=tenant) == 1
    redacted, kept = two_runs
    assert (redacted.input, redacted.output, redacted.error) == ({"_redacted": True}, None, "[redacted]")
    assert kept.output["facts"][0]["text"] == "I prefer window seats on long flights."
    assert all(
        "绿茶" not in json.dumps([r.input, r.output], ensure_ascii=False) for r in SkillRun.objects.all()
    )


def test_redact_needs_text():
    with pytest.raises(ApplicationError):
        skillrun_redact(contains="  ")
