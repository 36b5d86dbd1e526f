"""The domain events the wiki sends to the skill bus (`skills.signals.domain_event`)."""

import pytest

from connectors.services.ingest import event_ingest
from skills.models import Skill, SkillRun
from skills.signals import domain_event
from tests.wiki.conftest import email, slack
from wiki.models import Page, PageSection
from wiki.services.backlog import compile_batch
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


# --- page.updated: one per page per compile batch, each section with its readers ----------


@pytest.fixture
def page_updates():
    """The payloads of every `page.updated` sent."""
    seen = []

    def record(sender, *, event, payload, **kwargs):
        if event == "page.updated":
            seen.append(payload)

    domain_event.connect(record, dispatch_uid="tests.wiki.page_updates")
    yield seen
    domain_event.disconnect(dispatch_uid="tests.wiki.page_updates")


@pytest.fixture
def two_channels(tenant, alice, known_entities, django_capture_on_commit_callbacks):
    """A public and a private channel's message about Vercel, ingested, not compiled yet."""
    public = slack("Vercel asked for a 3-year quote", tags={"customer": "Vercel"})
    private = slack(
        "Vercel's CFO is leaving in May",
        channel="C200",
        name="#deal-desk",
        public=False,
        members=["alice@acme.com"],
        tags={"customer": "Vercel"},
    )
    with django_capture_on_commit_callbacks(execute=False):
        return [event_ingest(tenant=tenant, payload=p)[0].pk for p in (public, private)]


def test_a_compile_batch_announces_each_changed_page_once_with_its_sections_readers(
    settings, two_channels, page_updates, django_capture_on_commit_callbacks
):
    settings.LLM_BASE_URL = ""
    with django_capture_on_commit_callbacks(execute=True):
        assert compile_batch(two_channels) == 2
    [payload] = [p for p in page_updates if p["slug"] == "vercel"]
    page = Page.objects.get(slug="vercel")
    assert (payload["page_id"], payload["title"], payload["user_id"]) == (page.pk, page.title, None)
    sections = {s["section_id"]: s for s in payload["sections"]}
    assert set(sections) == set(page.sections.values_list("id", flat=True))
    public = next(s for s in sections.values() if "3-year quote" in s["text"])
    private = next(s for s in sections.values() if "CFO" in s["text"])
    assert (
        public is not private and "tenant:acme" in public["acl"] and public["readers"] == "everyone in acme"
    )
    assert private["acl"] == ["slack:channel:C200"] and private["readers"] == "the members of #deal-desk"
    with django_capture_on_commit_callbacks(execute=True):
        compile_batch(two_channels)  # compiled already: nothing changes, nothing announced
    assert len([p for p in page_updates if p["slug"] == "vercel"]) == 1


def test_a_skill_for_the_whole_tenant_gets_only_the_sections_everyone_may_read(
    settings, two_channels, django_capture_on_commit_callbacks
):
    settings.LLM_BASE_URL = ""
    for name, scope in (("page_notes", ""), ("tenant_notes", "tenant")):
        Skill.objects.create(
            name=name, prompt="Note {sections}", events=["page.updated"], output_to="memory",
            output_field="note", output_scope=scope,
        )  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        compile_batch(two_channels)
    runs = SkillRun.objects.filter(trigger="event:page.updated", input__slug="vercel")
    inputs = {run.skill_name: str(run.input) for run in runs}
    assert "3-year quote" in inputs["page_notes"] and "CFO" in inputs["page_notes"]
    assert "3-year quote" in inputs["tenant_notes"] and "CFO" not in inputs["tenant_notes"]
