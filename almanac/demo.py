"""The demo company. Other apps add their own data through `<app>.demo.load(company)`."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model

from almanac.models import AgentKey, Tenant
from almanac.services.keys import agentkey_create
from almanac.services.tenancy import tenant_create
from almanac.services.users import user_create

PASSWORD = "almanac-demo"

USERS = [
    # username, email, departments, projects, title, display name
    ("alice", "alice@acme.example", ["Sales"], ["Apollo"], "Account executive", "Alice Chen"),
    ("bob", "bob@acme.example", ["Finance"], ["Apollo"], "Controller", "Bob Li"),
    ("carol", "carol@acme.example", ["Engineering"], ["Apollo", "Zephyr"], "Tech lead", "Carol Wu"),
    ("wangwei", "wangwei@acme.example", ["Sales", "Finance"], ["Zephyr"], "华东区销售经理", "王伟"),
    ("dave", "dave@acme.example", ["Engineering"], [], "Engineer", "Dave Park"),
]


@dataclass
class DemoCompany:
    tenant: Tenant
    users: dict = field(default_factory=dict)
    new_keys: dict = field(default_factory=dict)


def load_company() -> DemoCompany:
    """The demo company, created once: a user who exists already is left as they are (a
    changed password, department or e-mail survives every later `make run`), and a demo key
    that exists, revoked or not, is not made again."""
    tenant, _ = tenant_create(slug="acme", name="Acme Corp 艾克米")
    company = DemoCompany(tenant=tenant)
    demo_users = [*(row[0] for row in USERS), "admin"]
    mine = get_user_model().objects.filter(profile__username__in=demo_users, profile__tenant=tenant)
    existing = {user.profile.username: user for user in mine.select_related("profile")}
    for username, email, depts, projects, title, display in USERS:
        company.users[username] = existing.get(username) or user_create(
            tenant=tenant,
            username=username,
            email=email,
            departments=depts,
            projects=projects,
            password=PASSWORD,
            title=title,
            display_name=display,
        )
    company.users["admin"] = existing.get("admin") or user_create(
        tenant=tenant, username="admin", email="admin@acme.example", password=PASSWORD, is_admin=True
    )
    for name, connector in (("demo-agent", False), ("demo-connector", True)):
        if not AgentKey.objects.filter(tenant=tenant, name=name).exists():
            _, raw = agentkey_create(tenant=tenant, name=name, can_push_events=connector, actor="demo")
            company.new_keys[name] = raw
    return company
