"""Reliability under crashes, access churn and hostile input, over HTTP (`make bench` skips it).

    .venv/bin/python bench/chaos/run.py --minutes 3            # prints a JSON summary
    .venv/bin/python bench/chaos/run.py --minutes 10 --json out.json

It starts its own service on a free local port against its own database
(ALMANAC_DB_NAME=almanac_chaos, migrated first): gunicorn as `manage.py up` runs it, and a
django-q2 worker (`qcluster`). Three phases share the time (half, a quarter, a quarter):

1. crash: memory writes (`POST /memories`) and connector events (`POST /connectors/events`)
   flow while the tool kill -9s, every few seconds, one gunicorn worker, the whole web
   server or the queue worker, and starts them again. Clients retry what got no answer.
   Then the worker drains the inbox (`wiki_compile` finishes what it left after a wait) and
   every acknowledged write is checked: lost (acknowledged, not stored), duplicated (stored
   twice, or compiled into the wiki twice), half-written (a memory without its embedding
   or keywords; an event never compiled).
2. leaks: private channels whose messages carry a per-channel marker, and private memories
   with a per-user marker; random membership changes and public/private switches are pushed
   as events, and after each acknowledged change random users read through the API (wiki
   pages, wiki search, memory search, context). A marker a user may not see (by the tool's
   own record of who is in which channel) is a leak.
3. hostile: malformed, oversized and odd requests at every endpoint while ordinary calls
   run alongside; every 5xx and every dropped connection is counted.

The exit status is 1 when anything was lost, duplicated, half-written or leaked, or a 5xx
was seen. Everything it writes is in the `chaos` tenant of its own database, marked with
the run's id, so runs can follow one another.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("ALMANAC_DB_NAME", "almanac_chaos")

TENANT = "chaos"
USERS = [f"u{i}" for i in range(8)]
SERVER_ENV = {
    "DEBUG": "0",
    "SECRET_KEY": "chaos-only-secret-key-not-for-production-0123456789",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "LOG_LEVEL": "ERROR",
    "OPENBLAS_NUM_THREADS": "1",
    "WEB_WORKERS": "2",
    "WEB_THREADS": "4",
    # A task held by a killed worker is handed out again after `retry` (Q_TIMEOUT + 60 s).
    "Q_TIMEOUT": "30",
}
WORDS = (
    "invoice renewal pricing latency outage roadmap hiring budget contract audit migration "
    "security onboarding forecast churn discount vendor launch incident backlog quota "
    "合同 预算 续约 发票 故障 招聘 路线图 审计 折扣 上线"
).split()


def say(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


# --- the service -----------------------------------------------------------------------------


class Service:
    """The web server and the queue worker, each in its own process group, killable."""

    def __init__(self, port: int):
        self.port, self.web, self.worker = port, None, None
        self.env = {**os.environ, **SERVER_ENV}
        self.kills: Counter = Counter()

    def start_web(self) -> None:
        from almanac.management.commands.up import gunicorn_command

        cmd = gunicorn_command(f"127.0.0.1:{self.port}")
        cmd[cmd.index("--workers") + 1] = SERVER_ENV["WEB_WORKERS"]
        self.web = subprocess.Popen(
            cmd, cwd=ROOT, env=self.env, start_new_session=True, stdout=subprocess.DEVNULL
        )
        self.wait_healthy()

    def start_worker(self) -> None:
        self.worker = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=self.env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def wait_healthy(self, timeout: float = 120) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/api/v1/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise SystemExit("the web server did not come up")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill_one(self, rng: random.Random) -> None:
        """kill -9 a gunicorn worker, the whole web server, or the queue worker; restart."""
        import psutil

        what = rng.choice(["web_worker", "web", "queue_worker"])
        if what == "web_worker":
            children = psutil.Process(self.web.pid).children()
            if children:
                os.kill(rng.choice(children).pid, signal.SIGKILL)  # the master starts another
        elif what == "web":
            _killpg(self.web)
            self.start_web()
        else:
            _killpg(self.worker)
            self.start_worker()
        self.kills[what] += 1

    def stop(self) -> None:
        from almanac.management.commands.up import stop_group

        for proc in (self.web, self.worker):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if proc is not None:
                stop_group(proc.pid, grace=5)


def _killpg(proc) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def setup(run: str) -> dict:
    """Migrate the database, make the tenant, its users and two agent keys."""
    env = {**os.environ, **SERVER_ENV}
    say(f"migrating {os.environ['ALMANAC_DB_NAME']}")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    from almanac.services.keys import agentkey_create
    from almanac.services.tenancy import tenant_create
    from almanac.services.users import user_create

    tenant = tenant_create(slug=TENANT, name="Chaos")[0]
    for name in USERS:
        user_create(tenant=tenant, username=name, email=f"{name}@chaos.example")
    agent = agentkey_create(tenant=tenant, name=f"chaos-{run}", rate_limit="0")[1]
    pusher = agentkey_create(tenant=tenant, name=f"chaos-push-{run}", can_push_events=True, rate_limit="0")[1]
    return {"tenant": tenant, "agent": agent, "pusher": pusher}


# --- phase 1: crashes ----------------------------------------------------------------------


CRASH_5XX: Counter = Counter()


def send(client, method: str, url: str, body, stop_at: float) -> tuple[int | None, dict]:
    """One write, retried until the server answers (it may be down for a restart); a 5xx
    is counted, then retried like no answer."""
    import httpx

    while True:
        try:
            response = client.request(method, url, json=body, timeout=30)
            if response.status_code < 500:
                return response.status_code, _json(response)
            CRASH_5XX[response.status_code] += 1
        except httpx.HTTPError:
            pass
        if time.monotonic() > stop_at + 60:
            return None, {}
        time.sleep(0.3)


def _json(response) -> dict:
    try:
        body = response.json()
        return body if isinstance(body, dict) else {}
    except ValueError:
        return {}


def memory_writer(svc, key, run, n, stop_at, out) -> None:
    import httpx

    rng = random.Random(n)
    with httpx.Client(base_url=svc.base, headers={"Authorization": f"Bearer {key}"}) as client:
        i = 0
        while time.monotonic() < stop_at:
            token = f"cm{run}w{n}n{i}"
            text = f"{token}: " + " ".join(rng.sample(WORDS, 8))
            body = {"user": rng.choice(USERS), "content": text, "scope": "user"}
            status, reply = send(client, "POST", "/api/v1/memories", body, stop_at)
            out.append((token, status, reply.get("id"), reply.get("duplicate_of")))
            i += 1


def event(run: str, *, channel: str, external_id: str, text: str, when: datetime, **over) -> dict:
    body = {
        "source": "slack",
        "external_id": external_id,
        "version": 1,
        "kind": "message",
        "occurred_at": when.isoformat(),
        "container": {"key": f"slack:channel:{channel}", "name": f"#{channel}", "public": True},
        "thread_key": f"slack:thread:{external_id}",
        "author": "u0@chaos.example",
        "text": text,
        "tags": {"customer": f"Chaoscorp {run}"},
    }
    body.update(over)
    return body


def event_pusher(svc, key, run, n, stop_at, out) -> None:
    import httpx

    rng = random.Random(100 + n)
    with httpx.Client(base_url=svc.base, headers={"Authorization": f"Bearer {key}"}) as client:
        i = 0
        while time.monotonic() < stop_at:
            token = f"ce{run}p{n}n{i}"
            body = event(
                run,
                channel=f"X{run}C{i % 3}",
                external_id=f"{token}/1700000000.{i:06d}",
                text=f"{token} " + " ".join(rng.sample(WORDS, 6)),
                when=datetime.now(UTC) - timedelta(minutes=5),
            )
            status, reply = send(client, "POST", "/api/v1/connectors/events", body, stop_at)
            out.append((token, body["external_id"], status, reply))
            i += 1


def crash_phase(svc, keys, run, seconds, rng) -> dict:
    memories, events = [], []
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(target=memory_writer, args=(svc, keys["agent"], run, n, stop_at, memories))
        for n in range(2)
    ] + [
        threading.Thread(target=event_pusher, args=(svc, keys["pusher"], run, n, stop_at, events))
        for n in range(2)
    ]
    for t in threads:
        t.start()
    while time.monotonic() < stop_at - 3:
        time.sleep(rng.uniform(3, 7))
        svc.kill_one(rng)
    for t in threads:
        t.join()
    if svc.web.poll() is not None:
        svc.start_web()
    drained = drain(run, wait=90)
    checked = check_writes(keys["tenant"], run, memories, events)
    return {"kills": dict(svc.kills), "5xx": sum(CRASH_5XX.values()), **drained, **checked}


def drain(run: str, wait: float) -> dict:
    """Wait for the worker to compile this run's events; then `wiki_compile` does the rest."""
    from django.core.management import call_command

    from connectors.models import Event

    started = time.monotonic()
    pending = Event.objects.filter(external_id__startswith=f"ce{run}", state=Event.State.PENDING)
    while pending.exists() and time.monotonic() - started < wait:
        time.sleep(1)
    left = pending.count()
    if left:
        call_command("wiki_compile", verbosity=0, stdout=io.StringIO())
    return {"drain_seconds": round(time.monotonic() - started, 1), "pending_after_wait": left}


def check_writes(tenant, run, memories, events) -> dict:
    from connectors.models import Event
    from memories.models import Memory
    from wiki.models import PageSection

    acked = {mid for _, status, mid, _ in memories if status == 201 and mid}
    stored = Memory.objects.filter(tenant=tenant, content__startswith=f"cm{run}")
    per_token = Counter(content.split(":", 1)[0] for content in stored.values_list("content", flat=True))
    half = stored.filter(embedding__isnull=True).count() + stored.filter(tokens="").count()
    ok_events = [(token, ext) for token, ext, status, _ in events if status == 202]
    stored_events = Event.objects.filter(external_id__startswith=f"ce{run}")
    by_ext = Counter(stored_events.values_list("external_id", flat=True))
    texts = list(
        PageSection.objects.filter(tenant=tenant, content__contains=f"ce{run}").values_list(
            "content", flat=True
        )
    )
    compiled = Counter()
    for text in texts:
        for token, _ in ok_events:
            compiled[token] += text.count(f"{token} ")
    return {
        "memory_writes": {
            "sent": len(memories),
            "acknowledged": len(acked),
            "merged_as_near_duplicate": sum(1 for _, s, _, dup in memories if s == 200 and dup),
            "no_answer": sum(1 for _, s, _, _ in memories if s is None),
            "lost": len(acked - set(stored.filter(pk__in=acked).values_list("pk", flat=True))),
            "duplicated": sum(n - 1 for n in per_token.values() if n > 1),
            "half_written": half,
        },
        "events": {
            "sent": len(events),
            "acknowledged": len(ok_events),
            "no_answer": sum(1 for *_, s, _ in events if s is None),
            "lost": sum(1 for _, ext in ok_events if by_ext[ext] == 0),
            "duplicated": sum(n - 1 for n in by_ext.values() if n > 1),
            "not_compiled": stored_events.exclude(state=Event.State.COMPILED).count(),
            "missing_from_wiki": sum(1 for token, _ in ok_events if compiled[token] == 0),
            "compiled_twice": sum(1 for token, _ in ok_events if compiled[token] > 1),
        },
    }


# --- phase 2: leaks ----------------------------------------------------------------------


class Truth:
    """Who may read which channel, as the tool has told the service (dated, in order)."""

    def __init__(self, run: str, rng: random.Random):
        self.run, self.rng = run, rng
        self.channels = [f"X{run}L{i}" for i in range(4)]
        self.members = {c: set(rng.sample(USERS, 3)) for c in self.channels}
        self.public = dict.fromkeys(self.channels, False)
        self.clock = datetime.now(UTC) - timedelta(hours=3)
        self.n = 0

    def tick(self) -> datetime:
        self.clock += timedelta(seconds=1)
        return self.clock

    def marker(self, channel: str) -> str:
        return f"lk{channel.lower()}"

    def may_read(self, user: str, channel: str) -> bool:
        return self.public[channel] or user in self.members[channel]

    def message(self, channel: str) -> dict:
        self.n += 1
        ext = f"lk{self.run}{channel}/{self.n}"
        text = f"{self.marker(channel)} Chaosleak {self.run} " + " ".join(self.rng.sample(WORDS, 5))
        body = event(self.run, channel=channel, external_id=ext, text=text, when=self.tick())
        body["container"] = {
            "key": f"slack:channel:{channel}",
            "name": f"#{channel}",
            "public": self.public[channel],
        }
        body["tags"] = {"customer": f"Chaosleak {self.run}"}
        return body

    def first_messages(self) -> list[dict]:
        bodies = []
        for channel in self.channels:
            body = self.message(channel)
            body["container"]["members"] = [f"{u}@chaos.example" for u in sorted(self.members[channel])]
            bodies.append(body)
        return bodies

    def mutate(self) -> dict:
        """A random change, applied to the record; returns the event that tells the service."""
        channel = self.rng.choice(self.channels)
        change = self.rng.choice(["add", "remove", "toggle"])
        if change == "toggle":
            self.public[channel] = not self.public[channel]
            return self.message(channel)
        outside = [u for u in USERS if u not in self.members[channel]]
        if change == "add" and outside or not self.members[channel]:
            who, kind = self.rng.choice(outside), "membership_added"
            self.members[channel].add(who)
        else:
            who, kind = self.rng.choice(sorted(self.members[channel])), "membership_removed"
            self.members[channel].discard(who)
        self.n += 1
        ext = f"lk{self.run}{channel}/m{self.n}"
        return event(
            self.run, channel=channel, external_id=ext, text="", when=self.tick(), kind=kind,
            container={"key": f"slack:channel:{channel}", "name": f"#{channel}",
                       "members": [f"{who}@chaos.example"], "public": self.public[channel]},
        )  # fmt: skip


def reads(client, run: str, user: str) -> list[str]:
    """What `user` gets back from the read paths, as text."""
    bodies = []
    pages = client.get("/api/v1/wiki/pages", params={"user": user, "q": f"Chaosleak {run}"})
    bodies.append(pages.text)
    listed = pages.json() if pages.status_code == 200 else []
    items = listed.get("items", []) if isinstance(listed, dict) else listed
    for page in items[:3]:
        bodies.append(client.get(f"/api/v1/wiki/pages/{page['slug']}", params={"user": user}).text)
    query = f"Chaosleak {run} lk"
    bodies.append(client.post("/api/v1/wiki/search", json={"user": user, "query": query}).text)
    bodies.append(client.post("/api/v1/memories/search", json={"user": user, "query": f"pm{run} notes"}).text)
    bodies.append(client.post("/api/v1/context", json={"user": user, "task": query, "max_tokens": 1500}).text)
    return bodies


def leak_phase(svc, keys, run, seconds, rng) -> dict:
    import httpx

    truth = Truth(run, rng)
    leaks, examples, mutations, checked, seen = 0, [], 0, 0, 0
    agent = httpx.Client(base_url=svc.base, headers={"Authorization": f"Bearer {keys['agent']}"}, timeout=60)
    pusher = httpx.Client(
        base_url=svc.base, headers={"Authorization": f"Bearer {keys['pusher']}"}, timeout=60
    )
    for user in USERS:  # a private memory each: nobody else may ever see it
        body = {
            "user": user,
            "content": f"pm{run}{user} notes: my private {rng.choice(WORDS)}",
            "scope": "user",
        }
        agent.post("/api/v1/memories", json=body)
    pusher.post("/api/v1/connectors/events", json={"events": truth.first_messages()}).raise_for_status()
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        response = pusher.post("/api/v1/connectors/events", json=truth.mutate())
        if response.status_code != 202:
            raise SystemExit(f"a change was refused: {response.status_code} {response.text[:300]}")
        mutations += 1
        for user in rng.sample(USERS, 2):
            text = "\n".join(reads(agent, run, user))
            checked += 1
            for channel in truth.channels:
                if truth.marker(channel) not in text:
                    continue
                if truth.may_read(user, channel):
                    seen += 1  # the check has teeth: what a user may read does come back
                else:
                    leaks += 1
                    examples.append({"user": user, "channel": channel, "after_change": mutations})
            for other in USERS:
                if other != user and f"pm{run}{other}" in text:
                    leaks += 1
                    examples.append({"user": user, "memory_of": other})
    agent.close()
    pusher.close()
    return {
        "changes": mutations,
        "reads": checked,
        "allowed_markers_seen": seen,
        "leaks": leaks,
        "examples": examples[:10],
    }


# --- phase 3: hostile input under load -------------------------------------------------------

ODD = [
    None, True, -1, 0, 2**63, 1e308, "", " ", "\x00", "a\x00b", "\ud800x", "😀" * 500, "x" * 70_000,
    "' OR 1=1 --", "%_%", "../../etc/passwd", "‮rtl", "\u200b", "<script>", [], {}, [[[[[]]]]],
    {"$ne": 1}, "2026-13-45T99:99:99Z", "NaN", "-0", "𠀀" * 1000,
]  # fmt: skip
ENDPOINTS = [
    ("POST", "/api/v1/memories", {"user": "u1", "content": "ok", "scope": "user"}),
    ("POST", "/api/v1/memories/search", {"user": "u1", "query": "budget", "top_k": 5}),
    ("POST", "/api/v1/wiki/search", {"user": "u1", "query": "budget", "top_k": 5}),
    ("POST", "/api/v1/context", {"user": "u1", "task": "budget", "max_tokens": 500, "cursor": None}),
    ("POST", "/api/v1/sessions", {"user": "u1"}),
    ("POST", "/api/v1/connectors/events", event("h", channel="H", external_id="h/1", text="t", when=datetime.now(UTC))),
    ("GET", "/api/v1/memories", {"user": "u1", "limit": 5, "q": "budget"}),
    ("GET", "/api/v1/wiki/pages", {"user": "u1", "q": "x"}),
    ("GET", "/api/v1/me", {"user": "u1"}),
]  # fmt: skip


def hostile_request(rng: random.Random) -> tuple[str, str, dict]:
    """(method, path, httpx keyword arguments) of one odd request."""
    method, path, good = rng.choice(ENDPOINTS)
    body = json.loads(json.dumps(good, default=str))
    field = rng.choice(list(body))
    trick = rng.randrange(8)
    if trick == 0:
        return method, path, {"content": rng.choice([b"{", b"[1,", b"\xff\xfe", b"null", b"{}" * 5000])}
    if trick == 1:
        return method, path + "/" + rng.choice(["99999999999999999999", "-1", "%00", "x" * 9000, "..%2f"]), {}
    if trick == 2:
        return (
            method,
            path,
            {"headers": {"X-Odd": "y" * rng.choice([100, 9000]), "Content-Type": "text/plain"}},
        )
    if trick == 3:  # deep nesting, written out: json.dumps itself would recurse too deep
        depth = rng.choice([50, 5000, 100_000])
        body[field] = "@@"
        raw = json.dumps(body).replace('"@@"', "[" * depth + "]" * depth)
        return method, path, {"content": raw.encode()}
    if trick == 4:
        body["unexpected"] = rng.choice(ODD)
    else:
        body[field] = rng.choice(ODD)
    if method == "GET":
        params = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in body.items()}
        return method, path, {"params": params}
    return method, path, {"content": json.dumps(body).encode("utf-8", "surrogatepass")}


def hostile_phase(svc, keys, run, seconds, rng) -> dict:
    import httpx

    statuses: Counter = Counter()
    legit: Counter = Counter()
    examples: list = []
    dropped, unsendable, dropped_examples = [0], [0], []
    stop_at = time.monotonic() + seconds
    headers = {"Authorization": f"Bearer {keys['pusher']}", "Content-Type": "application/json"}

    def odd(n: int) -> None:
        local = random.Random(f"{run}-{n}")
        with httpx.Client(base_url=svc.base, headers=headers, timeout=60) as client:
            while time.monotonic() < stop_at:
                method, path, kwargs = hostile_request(local)
                # One connection each: a refusal that closes it is then not blamed on the next.
                kwargs["headers"] = {**kwargs.get("headers", {}), "Connection": "close"}
                sent = {"method": method, "path": path[:120], "sent": str(kwargs)[:200]}
                try:
                    status = client.request(method, path, **kwargs).status_code
                except (UnicodeError, httpx.InvalidURL):
                    unsendable[0] += 1  # the client itself refuses it (a lone surrogate in a URL)
                    continue
                except httpx.HTTPError as exc:
                    dropped[0] += 1
                    if len(dropped_examples) < 5:
                        dropped_examples.append({**sent, "error": type(exc).__name__})
                    continue
                statuses[status] += 1
                if status >= 500 and len(examples) < 10:
                    examples.append({**sent, "status": status})

    def ordinary(n: int) -> None:
        local = random.Random(f"{run}-legit-{n}")
        with httpx.Client(base_url=svc.base, headers=headers, timeout=60) as client:
            while time.monotonic() < stop_at:
                user = local.choice(USERS)
                body = {"user": user, "task": " ".join(local.sample(WORDS, 3)), "max_tokens": 800}
                try:
                    status = client.post("/api/v1/context", json=body).status_code
                except httpx.HTTPError:
                    dropped[0] += 1
                    continue
                legit[status] += 1
                if status >= 500 and len(examples) < 10:
                    examples.append(
                        {"method": "POST", "path": "/api/v1/context", "status": status, "sent": str(body)}
                    )

    threads = [threading.Thread(target=odd, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=ordinary, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "odd_requests": sum(statuses.values()),
        "by_status": {str(k): v for k, v in sorted(statuses.items())},
        "5xx": sum(v for k, v in statuses.items() if k >= 500) + sum(v for k, v in legit.items() if k >= 500),
        "5xx_of_ordinary_calls": sum(v for k, v in legit.items() if k >= 500),
        "dropped_connections": dropped[0],
        "examples_dropped": dropped_examples,
        "unsendable_by_the_client": unsendable[0],
        "ordinary_calls": sum(legit.values()),
        "ordinary_not_200": sum(v for k, v in legit.items() if k != 200),
        "examples_5xx": examples,
    }


# --- main ------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="total time of the three phases")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--json", type=Path, help="write the summary here too")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    run = f"{int(time.time()) % 10_000_000:07d}"  # marks this run's rows, whatever the seed
    keys = setup(run)
    import logging

    from almanac.embedded_pg import forget_dead_users

    logging.getLogger("httpx").setLevel(logging.WARNING)
    svc = Service(port=_free_port())
    seconds = args.minutes * 60
    summary: dict = {
        "run": run,
        "seed": args.seed,
        "minutes": args.minutes,
        "database": os.environ["ALMANAC_DB_NAME"],
    }
    try:
        say(f"starting the service on {svc.base}")
        svc.start_web()
        svc.start_worker()
        say(f"crash phase, {seconds * 0.5:.0f} s")
        summary["crash"] = crash_phase(svc, keys, run, seconds * 0.5, rng)
        say(f"leak phase, {seconds * 0.25:.0f} s")
        summary["leaks"] = leak_phase(svc, keys, run, seconds * 0.25, rng)
        say(f"hostile phase, {seconds * 0.25:.0f} s")
        summary["hostile"] = hostile_phase(svc, keys, run, seconds * 0.25, rng)
    finally:
        svc.stop()
        from django.conf import settings

        if not settings.DATABASE_URL:
            forget_dead_users(settings.DATA_DIR / "pg")  # what kill -9 left in its user list
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    crash = summary["crash"]
    bad = (
        sum(crash["memory_writes"][k] for k in ("lost", "duplicated", "half_written"))
        + sum(crash["events"][k] for k in ("lost", "duplicated", "not_compiled", "compiled_twice"))
        + summary["leaks"]["leaks"]
        + summary["hostile"]["5xx"]
        + crash["5xx"]
    )
    return 1 if bad else 0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    raise SystemExit(main())
