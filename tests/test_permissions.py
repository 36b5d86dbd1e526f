"""Every permission check lives in a `permissions.py` module, one per app.

Read from the code's syntax tree (like tests/test_layers.py): outside `<app>/permissions.py`,
no module of an app may

- read `.is_staff` or `.is_superuser` (an attribute read: in a condition, a comparison, a
  `return`, anywhere an expression is evaluated);
- call `.has_perm(…)`, `.has_perms(…)` or `.has_module_perms(…)`;
- use django-guardian's checks (`get_perms`, `get_user_perms`, `get_group_perms`,
  `get_objects_for_user`, `ObjectPermissionChecker`).

What is data, not a check, is allowed anywhere: setting the flags (`user.is_staff = True`),
passing them as keywords (`create_user(is_staff=True)`, `filter(is_superuser=False)`) or
naming them in strings (an admin's `list_display`). An admin class keeps the
`has_view_permission`-style methods Django calls; their rule is a call to a permissions
module (and, where Django's own model permissions apply, `super()`'s method). Tests and
migrations are not app code.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("almanac", "skills", "connectors", "wiki", "memories", "documents", "context", "web", "config")
FLAGS = {"is_staff", "is_superuser"}
PERM_CALLS = {"has_perm", "has_perms", "has_module_perms"}
GUARDIAN = {
    "get_perms",
    "get_user_perms",
    "get_group_perms",
    "get_objects_for_user",
    "ObjectPermissionChecker",
}


def checks(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each permission check in `tree`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in FLAGS and isinstance(node.ctx, ast.Load):
            found.append((node.lineno, f".{node.attr}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in PERM_CALLS
        ):
            found.append((node.lineno, f".{node.func.attr}()"))
        elif isinstance(node, ast.Name) and node.id in GUARDIAN:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in GUARDIAN:
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("guardian"):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name in GUARDIAN]
    return found


def app_modules() -> list[Path]:
    return [
        path
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts and path.name != "permissions.py"
    ]


def test_permission_checks_live_in_permissions_modules():
    outside = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in app_modules()
        for line, what in checks(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not outside, "permission checks outside a permissions.py module:\n" + "\n".join(outside)


def test_the_scan_finds_each_kind_of_check():
    code = """
if request.user.is_superuser: pass
ok = user.is_staff and user.has_perm("wiki.change_page")
user.has_perms(["a.b"])
from guardian.shortcuts import get_objects_for_user
"""
    assert sorted(what for _, what in checks(ast.parse(code))) == sorted(
        [".is_superuser", ".is_staff", ".has_perm()", ".has_perms()", "get_objects_for_user"]
    )


def test_the_scan_leaves_data_alone():
    code = """
user.is_staff = user.is_superuser = True
User.objects.create_user("ann", is_staff=True)
qs.filter(is_superuser=False)
list_display = ["username", "is_staff"]
"""
    assert checks(ast.parse(code)) == []


def test_each_app_has_its_permissions_module():
    for app in ("almanac", "skills", "connectors", "wiki", "memories"):
        assert (ROOT / app / "permissions.py").is_file(), app
