"""Person pages from the directory, so agents read the org chart instead of inventing it."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from almanac.models import Project, Tenant, UserProfile
from almanac.services.users import user_name
from wiki import folding
from wiki.models import Entity, Page
from wiki.services.entities import entity_ensure
from wiki.services.sections import SectionDraft, section_write


def _directory_text(user, profile: UserProfile) -> str:
    name = profile.display_name or user.get_full_name() or profile.username
    lines = [f"{name} ({profile.username}{', ' + user.email if user.email else ''})"]
    if profile.title:
        lines.append(f"Title: {profile.title}")
    departments = sorted(d.name for d in profile.departments.all())
    projects = sorted(p.name for p in profile.projects.all())
    lines.append(f"Departments: {', '.join(departments) or '-'}")
    lines.append(f"Projects: {', '.join(projects) or '-'}")
    return "\n".join(lines)


@transaction.atomic
def person_page_sync(*, user) -> Page | None:
    """Create or refresh the person page of `user` (a tenant-wide directory section)."""
    profile = UserProfile.objects.select_related("tenant").filter(user=user).first()
    if profile is None or not user.is_active:
        return None
    tenant = profile.tenant
    username = user_name(user)
    name = profile.display_name or user.get_full_name() or username
    aliases = [a for a in {username, name} if a]
    entity = Entity.objects.filter(tenant=tenant, kind=Entity.Kind.PERSON, user=user).first()
    if entity is None:
        # Two employees may share a name (王伟): the second gets a page of its own, titled
        # with the username, never the first one's page (activity follows the page's user).
        taken = (
            Entity.objects.filter(tenant=tenant, kind=Entity.Kind.PERSON, key=folding.fold(name)[:300])
            .exclude(user=None)
            .exists()
        )
        title = f"{name} ({username})" if taken else name
        entity = entity_ensure(tenant=tenant, kind=Entity.Kind.PERSON, name=title, aliases=aliases, user=user)
    page = Page.objects.select_for_update().get(entity=entity)
    existing = page.sections.filter(thread_key=f"directory:{username}").first()
    draft = SectionDraft(
        thread_key=f"directory:{username}",
        container_key=tenant.group_key,
        container_name="directory",
        title=name,
        content=_directory_text(user, profile),
        occurred_at=existing.occurred_at if existing else timezone.now(),
        acl=[tenant.group_key],
        authors=[],
        event_ids=[],
        source_list=[{"source": "directory", "url": "", "occurred_at": None}],
    )
    section_write(page=page, draft=draft, reason="directory sync")
    return page


def directory_sync(*, tenant: Tenant) -> int:
    """Project entities from the tenant's projects and person pages from its profiles."""
    for project in Project.objects.filter(tenant=tenant):
        entity_ensure(tenant=tenant, kind=Entity.Kind.PROJECT, name=project.name)
    count = 0
    profiles = UserProfile.objects.filter(tenant=tenant, user__is_active=True).select_related("user")
    for profile in profiles:
        person_page_sync(user=profile.user)
        count += 1
    return count
