"""The domain events the wiki sends to the skill bus (`skills.signals.domain_event`)."""

import pytest

from skills.models import SkillRun
from tests.wiki.conftest import email
from wiki.models import PageSection
from wiki.services.sections import section_confirm


@pytest.fixture
def fact_confirmed(skill_subscribed):
    """A skill subscribed to `fact.confirmed`; the payloads it ran on."""
    return skill_subscribed("fact.confirmed")


@pytest.fixture
def recalled(push, alice):
    """A section made stale by a recalled e-mail that alice received."""
    push(email("List price is 40k"), email("Recall", kind="email_recalled", version=2, minutes=30))
    return PageSection.objects.get(page__slug="vercel")


def test_confirming_a_section_runs_the_skills_subscribed_to_fact_confirmed_after_commit(
    settings, fact_confirmed, recalled, alice, tenant, django_capture_on_commit_callbacks
):
    settings.LLM_BASE_URL = ""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        section_confirm(user=alice, page=recalled.page, section_ids=[recalled.pk], reason="the quote stands")
    assert not SkillRun.objects.exists()  # nothing before the commit
    for callback in callbacks:
        callback()
    run = SkillRun.objects.get()
    assert (run.skill_name, run.trigger, run.tenant) == ("summarize", "event:fact.confirmed", tenant)
    [payload] = fact_confirmed
    assert (payload["page_id"], payload["section_ids"], payload["user_id"], payload["user"]) == (
        recalled.page_id,
        [recalled.pk],
        alice.pk,
        "alice",
    )
    assert payload["reason"] == "the quote stands"
    assert [(s["section_id"], s["acl"]) for s in payload["sections"]] == [(recalled.pk, recalled.acl)]


def test_confirming_a_section_that_is_not_stale_sends_no_event(
    settings, fact_confirmed, recalled, alice, django_capture_on_commit_callbacks
):
    settings.LLM_BASE_URL = ""
    section_confirm(user=alice, page=recalled.page, section_ids=[recalled.pk], reason="the quote stands")
    with django_capture_on_commit_callbacks(execute=True):
        section_confirm(
            user=alice, page=recalled.page, section_ids=[recalled.pk], reason="the quote stands"
        )  # already current
    assert not SkillRun.objects.exists() and fact_confirmed == []
