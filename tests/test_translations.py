"""Every text of our apps is translated: each msgid in their code and templates, and each
field label and help text the admin shows (almanac.admin_labels), has a non-empty,
non-fuzzy msgstr in locale/zh_Hans/LC_MESSAGES/django.po.

The msgids are extracted as `makemessages` does (xgettext over the Python files, templates
turned into Python by Django's `templatize`), into a temporary folder: the shared catalogue
is only read."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.utils.translation.template import templatize

from almanac.admin_labels import OUR_APPS, field_label_msgids

ROOT = Path(settings.BASE_DIR)
CATALOGUE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
# Django's own keywords (makemessages), besides xgettext's defaults for Python (_, gettext, ngettext).
KEYWORDS = ["gettext_noop", "gettext_lazy", "ngettext_lazy:1,2", "pgettext:1c,2", "npgettext:1c,2,3",
            "pgettext_lazy:1c,2", "npgettext_lazy:1c,2,3"]  # fmt: skip


def _sources() -> tuple[list[Path], list[Path]]:
    python, templates = [], []
    for app in OUR_APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                python.append(path)
        templates += sorted((ROOT / app).rglob("templates/**/*.html"))
    templates += sorted((ROOT / "templates").rglob("*.html"))
    return python, templates


def _parse_po(text: str) -> dict[tuple[str, str], tuple[list[str], bool]]:
    """{(msgctxt, msgid): (msgstrs, fuzzy)} of a PO file (the header left out)."""
    entries, current, key, fuzzy = {}, {}, None, False

    def flush():
        if current.get("msgid"):
            strs = [v for k, v in sorted(current.items()) if k.startswith("msgstr")]
            entries[(current.get("msgctxt", ""), current["msgid"])] = (strs, fuzzy)

    for line in [*text.splitlines(), ""]:
        line = line.strip()
        if not line:
            flush()
            current, key, fuzzy = {}, None, False
        elif line.startswith("#,"):
            fuzzy = fuzzy or "fuzzy" in line
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            current[key] += ast.literal_eval(line)
        else:
            key, _, value = line.partition(" ")
            current[key] = ast.literal_eval(value)
    return entries


def _extracted(tmp_path: Path) -> dict[tuple[str, str], tuple[list[str], bool]]:
    python, templates = _sources()
    files = [str(p) for p in python]
    for i, path in enumerate(templates):
        out = tmp_path / f"template_{i}.py"
        out.write_text(templatize(path.read_text(encoding="utf-8"), origin=str(path)), encoding="utf-8")
        files.append(str(out))
    labels = tmp_path / "field_labels.py"
    labels.write_text("".join(f"gettext({m!r})\n" for m in sorted(field_label_msgids())), encoding="utf-8")
    files.append(str(labels))
    pot = tmp_path / "django.pot"
    subprocess.run(
        ["xgettext", "-L", "Python", "--from-code=UTF-8", "-o", str(pot), *(f"--keyword={k}" for k in KEYWORDS),
         *files],
        check=True,
    )  # fmt: skip
    return _parse_po(pot.read_text(encoding="utf-8"))


def test_every_msgid_of_our_apps_is_translated_to_chinese(tmp_path):
    catalogue = _parse_po(CATALOGUE.read_text(encoding="utf-8"))
    missing = []
    for key in sorted(_extracted(tmp_path)):
        strs, fuzzy = catalogue.get(key, ([], False))
        if fuzzy or not strs or not all(s.strip() for s in strs):
            missing.append(f"{key[0]}|{key[1]}" if key[0] else key[1])
    assert not missing, f"{len(missing)} msgids without a zh_Hans translation:\n" + "\n".join(missing)


def test_the_catalogue_compiles():
    subprocess.run(["msgfmt", "--check", "-o", "/dev/null", str(CATALOGUE)], check=True)


@pytest.mark.django_db
def test_the_admin_speaks_chinese_to_a_chinese_reader(admin_client, alice):
    from memories.services.memories import memory_create

    memory_create(owner=alice, content="我喜欢喝美式咖啡")  # the actions show over a non-empty list
    headers = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    index = admin_client.get("/admin/", **headers).content.decode()
    assert "<title>" in index and "Django" not in index.split("</title>")[0]
    memories = admin_client.get("/admin/memories/memory/", **headers).content.decode()
    assert "将所选导出为 JSON" in memories and "选择 记忆 来修改" in memories.replace(
        "选择记忆", "选择 记忆 "
    )
    assert "Export selected as JSON" not in memories
    sources = admin_client.get("/admin/connectors/source/add/", **headers).content.decode()
    assert "拉取间隔（分钟）" in sources and "Poll minutes" not in sources  # a field label from its name
    english = admin_client.get("/admin/memories/memory/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Export selected as JSON" in english and "Almanac" in english


def test_every_model_of_our_apps_names_itself_in_the_readers_language():
    from django.apps import apps
    from django.utils.functional import Promise
    from django.utils.translation import override

    ours = [
        m
        for m in apps.get_models()
        if m._meta.app_label in OUR_APPS and not m.__name__.startswith("Historical")
    ]
    unnamed = [m._meta.label for m in ours if not isinstance(m._meta.verbose_name_plural, Promise)]
    assert not unnamed, f"models without a translatable name: {unnamed}"
    with override("zh-hans"):
        assert str(apps.get_model("connectors.ExternalIdentity")._meta.verbose_name_plural) == "外部身份"
    with override("en"):
        assert (
            str(apps.get_model("connectors.ExternalIdentity")._meta.verbose_name_plural)
            == "external identities"
        )


def test_every_app_of_ours_in_the_admin_names_itself_in_the_readers_language():
    """The admin's index, sidebar and breadcrumbs show each app's verbose_name: a plain
    string ("Tenancy and access") stays English on every zh page."""
    from django.apps import apps
    from django.contrib import admin
    from django.utils.functional import Promise
    from django.utils.translation import override

    shown = {model._meta.app_label for model in admin.site._registry}
    ours = [apps.get_app_config(label) for label in OUR_APPS if label in shown]
    assert {c.label for c in ours} >= {"almanac", "connectors", "memories", "wiki"}
    plain = [c.label for c in ours if not isinstance(c.verbose_name, Promise)]
    assert not plain, f"apps whose name is not translatable: {plain}"
    with override("zh-hans"):
        assert str(apps.get_app_config("almanac").verbose_name) == "租户与访问"


@pytest.mark.django_db
def test_the_user_admin_speaks_chinese(admin_client, alice):
    headers = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    listed = admin_client.get("/admin/auth/user/", **headers).content.decode()
    assert "租户内名称" in listed and "Profile username" not in listed
    change = admin_client.get(f"/admin/auth/user/{alice.pk}/change/", **headers).content.decode()
    assert "若另一个租户已有同名用户" in change and "When another tenant" not in change
    assert "租户与访问" in admin_client.get("/admin/", **headers).content.decode()
