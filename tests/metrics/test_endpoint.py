"""`GET /metrics`: the Prometheus text format, the token, loopback, and values summed over
processes (docs/operations.md, "Metrics")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from metrics import recorder
from metrics.rollup import rollup

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def families(response) -> dict:
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return {family.name: family for family in text_string_to_metric_families(response.content.decode())}


def samples(family, **labels) -> list:
    return [s for s in family.samples if all(s.labels.get(k) == v for k, v in labels.items())]


def test_the_text_format_names_and_tenant_labels(api, client, tenant, other_tenant, alice):
    assert api.post(
        "/memories", {"user": "alice", "content": "Acme renewal price is 120k USD"}
    ).status_code in (200, 201)
    assert api.post("/context", {"user": "alice", "task": "Acme renewal price"}).status_code == 200
    recorder.flush()
    rollup()

    found = families(client.get("/metrics"))

    assert all(name.startswith("almanac_") for name in found if not name.startswith(("python_", "process_")))
    assert samples(found["almanac_memories"], tenant="acme", scope="user", status="active")[0].value == 1
    assert samples(found["almanac_context_calls_today"], tenant="acme", via="api")[0].value == 1
    assert samples(found["almanac_context_calls_by_key_today"], tenant="acme", key="test-agent")[0].value == 1
    assert samples(found["almanac_repeated_question_rate"], tenant="acme")[0].value == 0
    assert found["almanac_queue_depth"].samples[0].labels == {}  # installation-wide: no tenant
    # users are never labels (unbounded); tenants only by slug
    labels = {key for family in found.values() for s in family.samples for key in s.labels}
    assert not labels & {"user", "username", "user_id"}
    assert not samples(found["almanac_memories"], tenant="globex")


def test_loopback_only_without_a_token(client, settings, db):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    refused = client.get("/metrics", REMOTE_ADDR="10.1.2.3")
    assert refused.status_code == 401
    assert refused["Content-Type"] == "application/json"
    assert "METRICS_TOKEN" in refused.json()["detail"]


def test_the_bearer_token(client, settings, db):
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    remote = {"REMOTE_ADDR": "10.1.2.3"}
    assert client.get("/metrics", **remote).status_code == 401
    assert (
        client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 401
    )  # the token applies on loopback too
    wrong = client.get("/metrics", headers={"Authorization": "Bearer s3cret-scrape-tokeN"}, **remote)
    assert wrong.status_code == 401 and wrong.json()["detail"]
    assert (
        client.get("/metrics", headers={"Authorization": "Basic s3cret-scrape-token"}, **remote).status_code
        == 401
    )
    ok = client.get("/metrics", headers={"Authorization": "Bearer s3cret-scrape-token"}, **remote)
    families(ok)
    assert client.post("/metrics", headers={"Authorization": "Bearer s3cret-scrape-token"}).status_code == 405


WRITER = """
import django, json, os, sys
django.setup()
from metrics.instruments import CONTEXT_CALLS, CONTEXT_LATENCY
calls, seconds = json.loads(sys.argv[1])
for _ in range(calls):
    CONTEXT_CALLS.labels(tenant="acme", via="api").inc()
    CONTEXT_LATENCY.labels(via="api").observe(seconds)
print(os.getpid())
"""


def test_processes_are_summed_in_one_scrape(client, tmp_path, monkeypatch, db):
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    pids = [
        subprocess.run(
            [sys.executable, "-c", WRITER, json.dumps(work)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for work in ([3, 0.04], [4, 2.0])
    ]
    assert len(set(pids)) == 2 and len(list(tmp_path.glob("*.db"))) >= 2  # one file set per process
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))

    found = families(client.get("/metrics"))

    assert samples(found["almanac_context_calls"], tenant="acme", via="api")[0].value == 7
    latency = found["almanac_context_latency_seconds"]
    assert samples(latency, via="api", le="0.05")[0].value == 3
    assert samples(latency, via="api", le="+Inf")[0].value == 7
    assert [s.value for s in latency.samples if s.name.endswith("_count")] == [7]


def test_the_grafana_dashboard_reads_only_exported_names(client, db):
    from metrics.instruments import CONTEXT_CALLS, CONTEXT_LATENCY, TASKS

    dashboard = json.loads((ROOT / "docs" / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    used = {
        re.sub(r"_(bucket|total)$", "", name) for expr in exprs for name in re.findall(r"almanac_\w+", expr)
    }
    exported = set(families(client.get("/metrics"))) | {
        m._name for m in (CONTEXT_CALLS, CONTEXT_LATENCY, TASKS)
    }
    assert used and used <= exported, used - exported
