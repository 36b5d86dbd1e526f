import pytest
from django_q.conf import Conf

from almanac.buffer import WriteBuffer
from almanac.models import Tenant
from almanac.pgtools import CREDENTIALS, connected_as_owner
from almanac.services.keys import agentkey_create
from almanac.services.tenancy import tenant_create
from almanac.services.users import user_create
from skills import registry

_RUNTIME_CREDENTIALS: dict = {}
_owner_test = [False]  # the test being set up is marked db_owner


def _log_in_as(credentials: dict) -> None:
    from django.db import connections

    connections["default"].close()
    connections["default"].settings_dict.update(credentials)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """The test database is created and migrated as the owner role (as `migrate` does in
    production); a test database an older checkout created as the superuser is handed to
    the owner first (embedded server)."""
    from django.conf import settings
    from django.db import connections

    if not settings.DATABASE_URL:
        from almanac import embedded_pg

        server = embedded_pg.ensure_server(settings.DATA_DIR / "pg")
        embedded_pg.prepare_database(server, connections["default"].creation._get_test_db_name())
    default = connections["default"].settings_dict
    _RUNTIME_CREDENTIALS.update({k: default.get(k) for k in CREDENTIALS})
    _log_in_as({k: settings.DATABASES["owner"].get(k) for k in CREDENTIALS})


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Then the whole suite runs as the runtime role: it proves the app works with least
    privilege. A test that needs the owner uses the `owner` connection explicitly; flushes
    between transactional tests (TRUNCATE is the owner's) run as the owner."""
    from django.conf import settings
    from django.core.management.commands import flush

    _log_in_as(_RUNTIME_CREDENTIALS)
    if _owner_test[0]:  # the session's first test is marked db_owner
        _log_in_as({k: settings.DATABASES["owner"].get(k) for k in CREDENTIALS})
    handle = flush.Command.handle

    def handle_as_owner(self, **options):
        with connected_as_owner(options["database"]):
            return handle(self, **options)

    flush.Command.handle = handle_as_owner
    yield
    flush.Command.handle = handle
    # Without --reuse-db the test database is dropped next, by its owner.
    _log_in_as({k: settings.DATABASES["owner"].get(k) for k in CREDENTIALS})


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "db_owner: the test runs as the database owner role (it changes the schema)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    # Before any fixture opens the test's transaction: the connection is reopened as the owner
    # (when this is the session's first test, by django_db_setup once the database is made).
    _owner_test[0] = bool(item.get_closest_marker("db_owner"))
    if _owner_test[0] and _RUNTIME_CREDENTIALS:
        from django.conf import settings

        _log_in_as({k: settings.DATABASES["owner"].get(k) for k in CREDENTIALS})
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    if _owner_test[0] and _RUNTIME_CREDENTIALS:
        _log_in_as(_RUNTIME_CREDENTIALS)
    _owner_test[0] = False


@pytest.fixture(autouse=True, scope="session")
def _tasks_run_inline():
    # django-q2 reads SYNC once at import; tests run background tasks inline.
    Conf.SYNC = True
    yield


@pytest.fixture(autouse=True)
def _no_buffered_writes_across_tests():
    # Hits and run logs a test buffered belong to its rolled-back transaction: a timer
    # firing later, in another test, would write them to nothing (or to a test without a db).
    yield
    for buffer in WriteBuffer.instances:
        buffer.discard()


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def tenant(db) -> Tenant:
    return tenant_create(slug="acme", name="Acme")[0]


@pytest.fixture
def other_tenant(db) -> Tenant:
    return tenant_create(slug="globex", name="Globex")[0]


@pytest.fixture
def alice(tenant):
    """Owner: Sales, project Apollo."""
    return user_create(
        tenant=tenant, username="alice", email="alice@acme.com", departments=["Sales"], projects=["Apollo"]
    )


@pytest.fixture
def bob(tenant):
    """Shares with alice: Finance, projects Apollo and Zephyr."""
    return user_create(
        tenant=tenant,
        username="bob",
        email="bob@acme.com",
        departments=["Finance"],
        projects=["Apollo", "Zephyr"],
    )


@pytest.fixture
def charlie(tenant):
    """No access to alice's or bob's things: Engineering, no projects."""
    return user_create(
        tenant=tenant, username="charlie", email="charlie@acme.com", departments=["Engineering"]
    )


@pytest.fixture
def mallory(other_tenant):
    """A user of another tenant."""
    return user_create(tenant=other_tenant, username="mallory", email="mallory@globex.com")


@pytest.fixture
def agent_key(tenant) -> str:
    return agentkey_create(tenant=tenant, name="test-agent")[1]


@pytest.fixture
def connector_key(tenant) -> str:
    return agentkey_create(tenant=tenant, name="test-connector", can_push_events=True)[1]


@pytest.fixture
def api(client, agent_key):
    """A test client that sends the agent key on every request."""

    class Api:
        def __init__(self, key):
            self.headers = {"Authorization": f"Bearer {key}"}
            self.client = client

        def get(self, path, **params):
            return client.get(f"/api/v1{path}", params, headers=self.headers)

        def post(self, path, body=None, **kw):
            return client.post(
                f"/api/v1{path}", body or {}, content_type="application/json", headers=self.headers, **kw
            )

        def patch(self, path, body=None):
            return client.patch(
                f"/api/v1{path}", body or {}, content_type="application/json", headers=self.headers
            )

        def delete(self, path, **params):
            from urllib.parse import urlencode

            query = f"?{urlencode(params)}" if params else ""
            return client.delete(f"/api/v1{path}{query}", headers=self.headers)

    return Api(agent_key)


def pytest_sessionfinish(session, exitstatus):
    # A run in which nothing passed (all skipped or deselected) is a failure, not a green CI.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    passed = len(reporter.stats.get("passed", [])) if reporter else 0
    if exitstatus == 0 and passed == 0:
        session.exitstatus = 1


@pytest.fixture
def skill_subscribed():
    """`subscribe(*events)`: the `summarize` skill runs on those domain events (skills.bus);
    returns the list of payloads it ran on. Unsubscribed after the test."""
    events = []

    def subscribe(*names: str) -> list[dict]:
        ran: list[dict] = []
        for name in names:
            registry.subscribe(
                name,
                "summarize",
                to_input=lambda payload: {"text": f"announced {sorted(payload)}", "max_tokens": 20},
                on_output=lambda payload, output: ran.append(payload),
            )
            events.append(name)
        return ran

    yield subscribe
    for name in events:
        registry.unsubscribe(name, "summarize")


def user_admin_form(user, **changes) -> dict:
    """The admin's user change form as posted for `user`, with `changes`."""
    data = {
        "username": user.username, "email": user.email, "first_name": "", "last_name": "",
        "is_active": "on", "last_login_0": "", "last_login_1": "", "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }  # fmt: skip
    return {**data, **changes}
