"""The demo company. Other apps add their own data through `<app>.demo.load(company)`."""

from __future__ import annotations

from dataclasses import dataclass, field

from almanac.models import AgentKey, Tenant
from almanac.services import agentkey_create, tenant_create, user_create

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
    tenant, _ = tenant_create(slug="acme", name="Acme Corp 艾克米")
    company = DemoCompany(tenant=tenant)
    for username, email, depts, projects, title, display in USERS:
        company.users[username] = user_create(
            tenant=tenant,
            username=username,
            email=email,
            departments=depts,
            projects=projects,
            password=PASSWORD,
            title=title,
            display_name=display,
        )
    company.users["admin"] = user_create(
        tenant=tenant, username="admin", email="admin@acme.example", password=PASSWORD, is_admin=True
    )
    for name, connector in (("demo-agent", False), ("demo-connector", True)):
        if not AgentKey.objects.filter(tenant=tenant, name=name, revoked_at__isnull=True).exists():
            _, raw = agentkey_create(tenant=tenant, name=name, can_push_events=connector, actor="demo")
            company.new_keys[name] = raw
    return company
