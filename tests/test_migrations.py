"""Each app's migrations start from one squashed initial migration that replaces the
migrations before it (docs/operations.md, "Upgrading"): a new database is made by the
squashed ones alone, and a database that applied the replaced ones is left as it is —
nothing runs again, only what came after the squash."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

APPS = ("almanac", "connectors", "memories", "skills", "wiki")


def _squashed(loader: MigrationLoader) -> dict[tuple[str, str], list[tuple[str, str]]]:
    return {key: m.replaces for key, m in loader.disk_migrations.items() if key[0] in APPS and m.replaces}


def test_each_app_starts_from_one_squashed_initial_migration():
    squashed = _squashed(MigrationLoader(None, ignore_no_migrations=True))
    assert sorted(app for app, _ in squashed) == sorted(APPS)
    loader = MigrationLoader(None, ignore_no_migrations=True)
    for (app, name), replaces in squashed.items():
        assert loader.disk_migrations[(app, name)].initial, name
        assert all(replaced[0] == app for replaced in replaces)
        assert not set(replaces) & set(loader.disk_migrations), "the replaced files are gone"


def test_a_new_database_is_made_by_the_squashed_migrations_then_what_followed():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    plan = set()
    for leaf in loader.graph.leaf_nodes():
        plan.update(key for key in loader.graph.forwards_plan(leaf) if key[0] in APPS)
    squashed = _squashed(loader)
    replaced = {key for replaces in squashed.values() for key in replaces}
    assert set(squashed) <= plan
    assert not plan & replaced, "no replaced migration runs on a new database"


@pytest.mark.django_db(transaction=False)
@pytest.mark.db_owner
def test_a_database_that_applied_the_replaced_migrations_is_left_as_it_is():
    """The test database's record of applied migrations is rewritten, inside the test's
    transaction, to what an installation made before the squash holds: every replaced
    migration and nothing else of ours."""
    recorder = MigrationRecorder(connection)
    squashed = _squashed(MigrationLoader(None, ignore_no_migrations=True))
    recorder.migration_qs.filter(app__in=APPS).delete()
    for replaces in squashed.values():
        for app, name in replaces:
            recorder.record_applied(app, name)
    executor = MigrationExecutor(connection)
    applied = set(executor.loader.applied_migrations)
    assert set(squashed) <= applied, "the squashed migrations count as applied"
    targets = executor.loader.graph.leaf_nodes()
    pending = [migration.name for migration, _ in executor.migration_plan(targets)]
    after_squash = {
        key[1]
        for key in executor.loader.graph.nodes
        if key[0] in APPS and key not in squashed and key not in applied
    }
    assert set(pending) == after_squash, "only what came after the squash would run"
    assert not any(name in {n for r in squashed.values() for _, n in r} for name in pending)
