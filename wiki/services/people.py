"""Person pages, so agents read the org chart instead of inventing it.

- **Employees**: a page per person of the directory (a tenant-wide directory section), made by
  the compile of the first event that names them (its author, an e-mail's recipients, a
  meeting's attendees) and refreshed by `directory_sync`. Titled with their name: the
  directory's display name, else their full name, else the name a source gives them (a
  Slack profile, an e-mail's From, a calendar attendee's CN), else the username, which is
  always an alias. Accounts that are no person get none (`person_users`).
- **A customer's contacts**: the people of a customer's e-mail domain who write or take part
  in its e-mail and meetings are listed on the customer's section of that thread (name, role
  if their signature states it, domain), and get a page of their own whose sections are
  those threads: only the readers of a source that names a contact know of them.
"""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.db.models.functions import Lower
from django.utils import timezone

from almanac.models import Project, Tenant, UserProfile
from almanac.services.users import user_name
from almanac.text.signature import signature_role
from connectors.models import ExternalIdentity
from wiki import folding
from wiki.models import Entity, Page
from wiki.services.entities import entity_ensure, entity_update, internal_domains
from wiki.services.sections import SectionDraft, section_write
from wiki.services.threads import PARTICIPANT_KINDS, Item

User = get_user_model()

# Addresses that send for a system, not a person.
MACHINE_SENDER = re.compile(
    r"^(?:no-?reply|do-?not-?reply|mailer-daemon|postmaster|bounces?|notifications?)(?:[+._-]|$)", re.I
)
# Whose name wins when two sources spell a person differently.
SOURCE_ORDER = ("slack", "email", "calendar")


def person_users(*, tenant: Tenant):
    """The users of `tenant` who get a person page: active, not a superuser (who runs the
    installation), not a staff account that belongs to no department and no project (an
    admin's account). Bots are never users: a Slack bot's handle is its id
    (`connectors.slack.normalize`), which no user has."""
    units = Count("profile__departments", distinct=True) + Count("profile__projects", distinct=True)
    return (
        User.objects.filter(profile__tenant=tenant, is_active=True, is_superuser=False)
        .annotate(units=units)
        .exclude(is_staff=True, units=0)
    )


def _ranked(rows) -> dict:
    """{key: name} from (key, source kind, name) rows: the first by `SOURCE_ORDER`, then name."""

    def rank(row):
        kind = row[1]
        return (SOURCE_ORDER.index(kind) if kind in SOURCE_ORDER else len(SOURCE_ORDER), kind, row[2])

    names: dict = {}
    for key, _, name in sorted(rows, key=rank):
        names.setdefault(key, name.strip())
    return names


def source_names(*, tenant: Tenant, users) -> dict[int, str]:
    """user id → the name a source gives them."""
    rows = ExternalIdentity.objects.filter(tenant=tenant, user__in=list(users)).exclude(display_name="")
    return _ranked(rows.values_list("user_id", "source_kind", "display_name"))


def _directory_text(user, profile: UserProfile, name: str) -> str:
    lines = [f"{name} ({profile.username}{', ' + user.email if user.email else ''})"]
    if profile.title:
        lines.append(f"Title: {profile.title}")
    departments = sorted(d.name for d in profile.departments.all())
    projects = sorted(p.name for p in profile.projects.all())
    lines.append(f"Departments: {', '.join(departments) or '-'}")
    lines.append(f"Projects: {', '.join(projects) or '-'}")
    return "\n".join(lines)


def _title_for(*, tenant: Tenant, name: str, username: str, user) -> str:
    """`name`, or `name (username)` when another person already has that name (two 王伟)."""
    taken = (
        Entity.objects.filter(tenant=tenant, kind=Entity.Kind.PERSON, key=folding.fold(name)[:300])
        .exclude(user=None)
        .exclude(user=user)
        .exists()
    )
    return f"{name} ({username})" if taken and name != username else name


@transaction.atomic
def person_page_sync(*, user, source_name: str = "", wait: bool = True) -> Page | None:
    """Create or refresh the person page of `user` (a tenant-wide directory section), titled
    with their name (see the module's docstring; `source_name`: a source's name for them). A
    page still titled by username takes the name once there is one.

    `wait=False` (the compile): an existing page locked by another transaction is left as it
    is (it is refreshed next time), so a compile never waits for a person page."""
    profile = UserProfile.objects.select_related("tenant").filter(user=user).first()
    if profile is None or not user.is_active:
        return None
    tenant = profile.tenant
    username = user_name(user)
    name = profile.display_name or user.get_full_name() or source_name or username
    entity = Entity.objects.filter(tenant=tenant, kind=Entity.Kind.PERSON, user=user).first()
    if entity is None:
        title = _title_for(tenant=tenant, name=name, username=username, user=user)
        entity = entity_ensure(
            tenant=tenant, kind=Entity.Kind.PERSON, name=title, aliases=[username], user=user
        )
    page = Page.objects.select_for_update(skip_locked=not wait).filter(entity=entity).first()
    if page is None:
        return None
    if entity.name == username and name != username:
        title = _title_for(tenant=tenant, name=name, username=username, user=user)
        entity = entity_update(entity=entity, aliases=[*entity.aliases, username], user=user, name=title)
    _directory_write(page=page, user=user, profile=profile, name=name)
    return page


def _directory_write(*, page: Page, user, profile: UserProfile, name: str) -> None:
    tenant, username = profile.tenant, user_name(user)
    existing = page.sections.filter(thread_key=f"directory:{username}").first()
    draft = SectionDraft(
        thread_key=f"directory:{username}",
        container_key=tenant.group_key,
        container_name="directory",
        title=name,
        content=_directory_text(user, profile, name),
        occurred_at=existing.occurred_at if existing else timezone.now(),
        acl=[tenant.group_key],
        authors=[],
        event_ids=[],
        source_list=[{"source": "directory", "url": "", "occurred_at": None}],
    )
    section_write(page=page, draft=draft, reason="directory sync", existing=existing)


def directory_sync(*, tenant: Tenant) -> int:
    """Project entities from the tenant's projects, person pages from its people, and no page
    for an account that is no person (`person_users`). Returns the person pages synced."""
    for project in Project.objects.filter(tenant=tenant):
        entity_ensure(tenant=tenant, kind=Entity.Kind.PROJECT, name=project.name)
    people = list(person_users(tenant=tenant).order_by("id"))
    Entity.objects.filter(tenant=tenant, kind=Entity.Kind.PERSON).exclude(user=None).exclude(
        user__in=people
    ).delete()
    names = source_names(tenant=tenant, users=people)
    for user in people:
        person_page_sync(user=user, source_name=names.get(user.pk, ""))
    return len(people)


def person_page_retire(*, user) -> bool:
    """Remove the person page of `user` when they are no person any more (`person_users`):
    made a superuser, deactivated, staff left in no department and no project. Their
    directory section goes with it; what they wrote stays on the other pages that hold it.
    `directory_sync` does the same for a whole tenant. Returns whether a page was removed."""
    profile = UserProfile.objects.filter(user_id=user.pk).select_related("tenant").first()
    if profile is None or person_users(tenant=profile.tenant).filter(pk=user.pk).exists():
        return False
    deleted, _ = Entity.objects.filter(
        tenant=profile.tenant, kind=Entity.Kind.PERSON, user_id=user.pk
    ).delete()
    return bool(deleted)


def _item_people(item: Item) -> list[str]:
    """The handles an item names: its author, and an e-mail's or a meeting's participants."""
    handles = [item.first("author")]
    if item.base.kind in PARTICIPANT_KINDS:
        handles += item.current.container_members or item.base.container_members or []
    return [h.strip().lower() for h in handles if h and h.strip()]


def _users_named(*, tenant: Tenant, handles: set[str]) -> list:
    """The users with a person page behind `handles` (an e-mail, a username, a source's handle)."""
    ids = set(
        UserProfile.objects.filter(tenant=tenant)
        .annotate(email_lower=Lower("user__email"))
        .filter(Q(email_lower__in=handles) | Q(username__in=handles))
        .values_list("user_id", flat=True)
    )
    ids |= set(
        ExternalIdentity.objects.filter(tenant=tenant, handle__in=handles)
        .exclude(user=None)
        .values_list("user_id", flat=True)
    )
    return list(person_users(tenant=tenant).filter(pk__in=ids).order_by("id")) if ids else []


# (tenant id, handle) whose person has a page titled with a name, in this process: a compile
# that names only them reads nothing (most do, once a workspace's people have their pages).
_settled: dict[tuple[int, str], None] = {}
_SETTLED_MAX = 50_000


def people_compile(*, tenant: Tenant, items: list[Item]) -> None:
    """Person pages for the employees the items name, inside the compile's transaction and
    before it locks its pages: made when missing, retitled when a source now names someone
    still titled by username (never waiting for a page another transaction holds)."""
    handles = {h for item in items if not item.deleted for h in _item_people(item)}
    handles = {h for h in handles if (tenant.pk, h) not in _settled}
    users = _users_named(tenant=tenant, handles=handles) if handles else []
    if not users:
        return
    titled = dict(
        Entity.objects.filter(tenant=tenant, kind=Entity.Kind.PERSON, user__in=users).values_list(
            "user_id", "name"
        )
    )
    todo = [u for u in users if titled.get(u.pk) in (None, user_name(u))]
    names = source_names(tenant=tenant, users=todo) if todo else {}
    for user in todo:
        if user.pk not in titled or names.get(user.pk):
            person_page_sync(user=user, source_name=names.get(user.pk, ""), wait=False)
    settled = [u for u in users if u not in todo or names.get(u.pk)]
    transaction.on_commit(lambda: _settle(tenant_id=tenant.pk, users=settled))


def _settle(*, tenant_id: int, users) -> None:
    if len(_settled) > _SETTLED_MAX:
        _settled.clear()
    for user in users:
        for handle in {user_name(user).lower(), user.email.lower()} - {""}:
            _settled[(tenant_id, handle)] = None


def _outside_people(items: list[Item], internal: set[str]) -> dict[str, dict[str, list[str]]]:
    """container key → {outside address: the texts it wrote there} for the e-mail and
    meetings among `items` (people of another domain than the tenant's, not a machine)."""
    found: dict[str, dict[str, list[str]]] = {}
    for item in items:
        if item.deleted or item.base.kind not in PARTICIPANT_KINDS or not item.first("container_key"):
            continue
        author = item.first("author").strip().lower()
        for address in _item_people(item):
            local, _, domain = address.rpartition("@")
            if not local or domain in internal or MACHINE_SENDER.match(local):
                continue
            texts = found.setdefault(item.first("container_key"), {}).setdefault(address, [])
            if address == author:
                texts.append(item.base.text or "")
    return found


def _domain_owners(*, tenant: Tenant, domains: set[str]) -> dict[str, int]:
    """domain → the entity that has `@domain` as an alias (a customer's learned domain)."""
    aliases = sorted(f"@{d}" for d in domains)
    owners: dict[str, int] = {}
    for pk, names in Entity.objects.filter(tenant=tenant, aliases__overlap=aliases).values_list(
        "id", "aliases"
    ):
        for alias in set(names) & set(aliases):
            owners.setdefault(alias[1:], pk)
    return owners


def contact_ensure(*, tenant: Tenant, address: str, name: str, named_in: str) -> Entity:
    """The person entity of an outside contact (no user; its e-mail address an alias), made
    with its page if new, titled with their name (`name (domain)` when another person has
    that name, else the address)."""
    entity = Entity.objects.filter(
        tenant=tenant, kind=Entity.Kind.PERSON, user=None, aliases__contains=[address]
    ).first()
    if entity is not None:
        return entity
    domain = address.rpartition("@")[2]
    people = Entity.objects.filter(tenant=tenant, kind=Entity.Kind.PERSON)
    title = address
    for candidate in dict.fromkeys([name, f"{name} ({domain})"]):
        if candidate and not people.filter(key=folding.fold(candidate)[:300]).exists():
            title = candidate
            break
    return entity_ensure(
        tenant=tenant, kind=Entity.Kind.PERSON, name=title, aliases=[address], named_in=named_in
    )


def contacts_add(*, tenant: Tenant, items: list[Item], plan: dict) -> None:
    """A thread's customer contacts (see the module's docstring): a line on the thread's
    section of each container that names them ("Contacts of Globex: Lena Berg, Head of
    Procurement (globex.com)"), and their own page, whose sections are those drafts (added
    to `plan`, page entity id → (entity, drafts)). A contact belongs to the customer whose
    learned domain (`@globex.com`) is theirs, else to the one customer of the thread when
    their domain is no other entity's. Only people a source names (a From display name, a
    CN) are listed: a bare address is already in the section."""
    customers = {pk for pk, (entity, _) in plan.items() if entity.kind == Entity.Kind.CUSTOMER}
    if not customers or not any(i.base and i.base.kind in PARTICIPANT_KINDS for i in items):
        return
    people = _outside_people(items, internal_domains(tenant))
    if not people:
        return
    addresses = {a for found in people.values() for a in found}
    owners = _domain_owners(tenant=tenant, domains={a.rpartition("@")[2] for a in addresses})
    rows = ExternalIdentity.objects.filter(tenant=tenant, handle__in=addresses).exclude(display_name="")
    names = _ranked(rows.values_list("handle", "source_kind", "display_name"))
    for container, found in sorted(people.items()):
        drafts = {pk: d for pk, (_, ds) in plan.items() for d in ds if d.container_key == container}
        here = sorted(customers & set(drafts))
        lines: dict[int, list[str]] = {}
        for address, texts in sorted(found.items()):
            owner = owners.get(address.rpartition("@")[2])
            company = owner if owner in here else here[0] if owner is None and len(here) == 1 else None
            name = names.get(address, "")
            if company is None or not name:  # a bare address says no more than the section does
                continue
            role = next((r for text in reversed(texts) if (r := signature_role(text, name))), "")
            lines.setdefault(company, []).append(
                f"{name}{', ' + role if role else ''} ({address.rpartition('@')[2]})"
            )
            draft = drafts[company]
            named_in = tenant.group_key if tenant.group_key in draft.acl else container
            contact = contact_ensure(tenant=tenant, address=address, name=name, named_in=named_in)
            plan.setdefault(contact.pk, (contact, []))[1].append(draft)
        for company, shown in sorted(lines.items()):
            drafts[company].content += f"\nContacts of {plan[company][0].name}: {'; '.join(shown)}"
