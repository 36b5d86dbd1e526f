"""Set (d): load the generated company (`company_exports`) in three arrival orders and
measure, per source type, whether each source reaches its customer's page and what the
context call gives each question. Imported by `run.py` after `django.setup()`.

Arrival orders (one tenant each, `corvid-<order>`; users `<login>-<order>`):

- `before`: every export is imported, then the compiler runs (`wiki_compile`);
- `during`: the exports are imported in the documented order (Slack, e-mail, calendar,
  notes, GitHub) while the compiler runs: each event is compiled as its ingest commits
  (django-q's sync mode, as a worker keeping up would);
- `after`: the same, in another order (GitHub, notes, calendar, e-mail, Slack).

A source's own files keep their order (the calendar's older snapshot first). Every order
starts and ends with `wiki_compile` (the directory's people and projects, then the sweep
that retries anything that failed).
"""

from __future__ import annotations

import hashlib
import io
import json
import statistics
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django_q.conf import Conf

from almanac.models import Tenant
from almanac.services.tenancy import tenant_create
from almanac.services.users import user_create
from bench.quality import company_exports as gen
from connectors.calendar import normalize as ics
from connectors.services.importer import ingest_all
from connectors.services.sources import source_ensure, sync_success

ORDERS = {
    "before": (("slack", "email", "calendar", "notes", "github"), False),
    "during": (("slack", "email", "calendar", "notes", "github"), True),
    "after": (("github", "notes", "calendar", "email", "slack"), True),
}
COMMANDS = {
    "slack": "import_slack",
    "email": "import_mbox",
    "notes": "import_notes",
    "github": "import_github",
}
MAX_TOKENS = 3000
# The harder kinds (company_kinds) are measured at every budget; the base set at MAX_TOKENS.
BUDGETS = (3000, 1500, 800)


def slug(order: str) -> str:
    return f"corvid-{order}"


def username(login: str, order: str) -> str:
    return f"{login}-{order}"


def fingerprint(co: gen.Company) -> str:
    """Names the generated data in the tenant's name: a tenant loaded by another version of
    the generator (or seed) is reloaded, not measured with these questions."""
    facts = {c.name: {k: str(v) for k, v in c.facts.items()} for c in co.customers}
    data = json.dumps(
        [co.questions, facts, co.facts_company], sort_keys=True, default=str, ensure_ascii=False
    )
    return hashlib.sha256(data.encode()).hexdigest()[:10]


def tenant_name(co: gen.Company, order: str) -> str:
    return f"{gen.COMPANY} ({order}, data {fingerprint(co)})"


def _fresh_tenant(co: gen.Company, order: str) -> Tenant:
    from django.contrib.auth import get_user_model

    old = Tenant.objects.filter(slug=slug(order)).first()
    if old is not None:
        get_user_model().objects.filter(profile__tenant=old).delete()
        old.delete()
    return tenant_create(slug=slug(order), name=tenant_name(co, order))[0]


def _import(tenant: Tenant, kind: str, path: Path, index: int) -> str:
    """One export file through its documented import command; the calendar's snapshots
    through the command's own service with the snapshot's date as "now" (the window of
    recurring events is taken around it), so the data does not depend on the day it runs."""
    if kind != "calendar":
        out = io.StringIO()
        call_command(COMMANDS[kind], str(path), tenant=tenant.slug, no_progress=True, stdout=out, stderr=out)
        return out.getvalue().strip()
    payloads = ics.ics_payloads(tenant=tenant, data=path.read_bytes(), now=gen.CALENDAR_EXPORTS[index])
    source = source_ensure(tenant=tenant, name="calendar", kind="calendar")
    counts = ingest_all(tenant=tenant, payloads=payloads)
    sync_success(source=source)
    return f"calendar: {counts['accepted']} new events, {counts['duplicates']} duplicates, {counts.get('rejected', 0)} rejected"


def load(co: gen.Company, order: str) -> dict:
    """A fresh tenant with the company's people, its exports imported in `order`."""
    settings.WIKI_SUMMARY_ENABLED = False  # no LLM here: the offline summary is not what we measure
    kinds, live = ORDERS[order]
    tenant = _fresh_tenant(co, order)
    for p in co.people:
        projects = list(co.repos) if p.role in ("eng", "support") else []
        user_create(tenant=tenant, username=username(p.login, order), email=p.email, departments=[p.dept],
                    projects=projects, display_name=p.name)  # fmt: skip
    started = time.perf_counter()
    call_command("wiki_compile", tenant.slug, stdout=io.StringIO())  # the directory: people, projects
    lines = []
    sync = Conf.SYNC
    Conf.SYNC = live  # live: each ingest's compile task runs when it commits
    try:
        with tempfile.TemporaryDirectory() as folder:
            files = gen.write_exports(co, Path(folder))
            for kind in kinds:
                for index, path in enumerate(files[kind]):
                    lines.append(_import(tenant, kind, path, index))
    finally:
        Conf.SYNC = sync
    from connectors.models import Event

    failed = Event.objects.filter(tenant=tenant, state=Event.State.FAILED).count()
    pending = Event.objects.filter(tenant=tenant, state=Event.State.PENDING).count()
    call_command("wiki_compile", tenant.slug, stdout=io.StringIO())
    return {
        "imports": lines,
        "events": Event.objects.filter(tenant=tenant).count(),
        "pending_before_sweep": pending,
        "failed_before_sweep": failed,
        "seconds": round(time.perf_counter() - started, 1),
    }


def reach(co: gen.Company, order: str) -> dict:
    """For each customer and source: sections on the customer's page from that source
    (every section, whoever may read it; stale ones counted apart)."""
    from wiki.models import Page, PageSection

    tenant = Tenant.objects.get(slug=slug(order))
    out = {}
    for c in co.customers:
        pages = [
            p.pk
            for p in Page.objects.filter(tenant=tenant, kind="customer")
            if p.title.lower() in {c.name.lower(), c.alias.lower()}
        ]
        counts = dict.fromkeys(gen.SOURCES, 0)
        stale = dict.fromkeys(gen.SOURCES, 0)
        for key, is_stale in PageSection.objects.filter(page_id__in=pages).values_list(
            "container_key", "stale"
        ):
            kind = {"slack": "slack", "email": "email", "calendar": "calendar", "notes": "notes",
                    "github": "github"}.get(key.split(":", 1)[0])  # fmt: skip
            if kind:
                (stale if is_stale else counts)[kind] += 1
        out[c.name] = {"pages": len(pages), "sections": counts, "stale_sections": stale}
    return out


def ask(
    co: gen.Company, order: str, questions: list[dict], no_touch: dict, max_tokens: int = MAX_TOKENS
) -> list[dict]:
    from django.contrib.auth import get_user_model

    from context.services import context_build
    from wiki.search import page_search

    tenant = Tenant.objects.get(slug=slug(order))
    users = {}
    rows = []
    for q in questions:
        name = username(q["user"], order)
        if name not in users:
            users[name] = get_user_model().objects.select_related("profile").get(username=name)
        user = users[name]
        ctx = context_build(user=user, tenant=tenant, task=q["task"], max_tokens=max_tokens, **no_touch)
        low = (ctx["prompt"] or "").lower()
        pages = page_search(user=user, query=q["task"], top_k=5)
        page_text = "\n".join(h.section.content for p in pages for h in p["hits"]).lower()
        found = [s for s in q["needs"] if s.lower() in low]
        stale = [s for s in q["stale"] if s.lower() in low]
        rows.append({
            "id": q["id"], "user": q["user"], "lang": q["lang"], "source": q["source"], "kind": q["kind"],
            "customer": q["customer"], "task": q["task"],
            "fact_recall": len(found) / len(q["needs"]) if q["needs"] else None,
            "missing": [s for s in q["needs"] if s not in found],
            "leaks": [s for s in q["must_not"] if s.lower() in low],
            "wiki_leaks": [s for s in q["must_not"] if s.lower() in page_text],
            "stale_shown": stale,
            "confusions": [s for s in q.get("confuse", []) if s.lower() in low],
            "newest_wins": (len(found) == len(q["needs"]) and not stale) if q["stale"] else None,
            "tokens": ctx["budget"]["used"],
        })  # fmt: skip
    return rows


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.fmean(values), 3) if values else None


def summarize(co: gen.Company, rows: list[dict], reached: dict) -> dict:
    langs = {c.name: c.lang for c in co.customers}
    by_source = {}
    for source in gen.SOURCES:
        mine = [r for r in rows if r["source"] == source]
        pairs = [v["sections"][source] > 0 for v in reached.values()]
        by_source[source] = {
            "reach": round(sum(pairs) / len(pairs), 3),
            "fact_recall": _mean(r["fact_recall"] for r in mine),
            "all_facts": _mean(r["fact_recall"] == 1 for r in mine if r["fact_recall"] is not None),
            "leaks": sum(len(r["leaks"]) for r in mine),
            "newest_wins": _mean(r["newest_wins"] for r in mine),
            "questions": len(mine),
        }
    cross = [r for r in rows if r["customer"] and langs[r["customer"]] != r["lang"]]
    return {
        "fact_recall": _mean(r["fact_recall"] for r in rows),
        "all_facts": _mean(r["fact_recall"] == 1 for r in rows if r["fact_recall"] is not None),
        "leaks": sum(len(r["leaks"]) for r in rows),
        "wiki_search_leaks": sum(len(r["wiki_leaks"]) for r in rows),
        "newest_wins": _mean(r["newest_wins"] for r in rows),
        "stale_shown": sum(bool(r["stale_shown"]) for r in rows),
        "reach": _mean(v["sections"][s] > 0 for v in reached.values() for s in gen.SOURCES),
        "fact_recall_by_task_lang": {lang: _mean(r["fact_recall"] for r in rows if r["lang"] == lang) for lang in ("en", "zh")},
        "fact_recall_cross_lingual": _mean(r["fact_recall"] for r in cross),
        "tokens_mean": round(statistics.fmean(r["tokens"] for r in rows)),
        "by_source": by_source,
    }  # fmt: skip


def by_kind(rows: list[dict]) -> dict:
    """Per question kind: fact recall, all facts, leaks, confusions (questions whose prompt
    holds a look-alike's figures, over those that have a look-alike), newest wins."""
    out = {}
    for kind in dict.fromkeys(r["kind"] for r in rows):
        mine = [r for r in rows if r["kind"] == kind]
        paired = [r for r in mine if r["has_lookalike"]]
        out[kind] = {
            "fact_recall": _mean(r["fact_recall"] for r in mine),
            "all_facts": _mean(r["fact_recall"] == 1 for r in mine if r["fact_recall"] is not None),
            "leaks": sum(len(r["leaks"]) for r in mine),
            "confused": sum(bool(r["confusions"]) for r in paired),
            "paired": len(paired),
            "newest_wins": _mean(r["newest_wins"] for r in mine),
            "questions": len(mine),
        }
    return out


def budgets(co: gen.Company, order: str, questions: list[dict], no_touch: dict) -> dict:
    """Every question at each of BUDGETS: per kind and overall."""
    out = {}
    for max_tokens in BUDGETS:
        rows = ask(co, order, questions, no_touch, max_tokens)
        for r, q in zip(rows, questions, strict=True):
            r["has_lookalike"] = bool(q.get("confuse"))
        out[str(max_tokens)] = {
            "all": by_kind([r | {"kind": "all"} for r in rows])["all"],
            "by_kind": by_kind(rows),
            "missing": {r["id"]: r["missing"] for r in rows if r["missing"]},
            "confusions": {r["id"]: r["confusions"] for r in rows if r["confusions"]},
        }
    return out


def run(*, quick: bool, reload: bool, no_touch: dict, details: bool, orders: str = ",".join(ORDERS)) -> dict:
    co = gen.company()
    questions = co.questions[::4] if quick else co.questions
    present = {
        t.slug
        for t in Tenant.objects.filter(slug__in=[slug(o) for o in ORDERS])
        if t.name == tenant_name(co, t.slug.split("-", 1)[1])
    }
    out = {
        "questions": len(questions),
        "customers": len(co.customers),
        "max_tokens": MAX_TOKENS,
        "budgets": list(BUDGETS),
        "orders": {},
    }
    for order in [o for o in ORDERS if o in orders.split(",")]:
        loaded = load(co, order) if reload or slug(order) not in present else None
        reached = reach(co, order)
        rows = ask(co, order, questions, no_touch)
        result = summarize(co, rows, reached) | {"reach_detail": reached}
        result["by_budget"] = budgets(co, order, questions, no_touch)
        if loaded:
            result["load"] = loaded
        if details:
            result["details"] = rows
        else:
            result["missing"] = {r["id"]: r["missing"] for r in rows if r["missing"]}
            result["leaked"] = {r["id"]: r["leaks"] for r in rows if r["leaks"]}
        out["orders"][order] = result
    return out


def report(d: dict) -> str:
    lines = [
        f"\n(d) Generated company: {d['customers']} customers, {d['questions']} questions, context at {d['max_tokens']} tokens"
    ]
    lines.append(
        f"  {'order':<7} {'source':<9} {'reach':>6} {'recall':>7} {'all':>6} {'leaks':>6} {'newest':>7} {'n':>4}"
    )
    for order, r in d["orders"].items():
        for source, s in r["by_source"].items():
            nw = "-" if s["newest_wins"] is None else f"{s['newest_wins']:.3f}"
            fr = "-" if s["fact_recall"] is None else f"{s['fact_recall']:.3f}"
            al = "-" if s["all_facts"] is None else f"{s['all_facts']:.3f}"
            lines.append(
                f"  {order:<7} {source:<9} {s['reach']:>6.3f} {fr:>7} {al:>6} {s['leaks']:>6} {nw:>7} {s['questions']:>4}"
            )
        lines.append(
            f"  {order:<7} {'all':<9} {r['reach']:>6.3f} {r['fact_recall']:>7.3f} {r['all_facts']:>6.3f} {r['leaks']:>6} "
            f"{r['newest_wins']:>7.3f} {d['questions']:>4}   (en {r['fact_recall_by_task_lang']['en']}, "
            f"zh {r['fact_recall_by_task_lang']['zh']}, cross-lingual {r['fact_recall_cross_lingual']}; "
            f"stale shown {r['stale_shown']}; wiki search leaks {r['wiki_search_leaks']}; tokens {r['tokens_mean']})"
        )  # fmt: skip
        lines.append(
            f"  {order}: by kind and budget (recall / all facts / leaks / confused of paired / newest)"
        )
        for budget, b in r.get("by_budget", {}).items():
            for kind, k in [*b["by_kind"].items(), ("all", b["all"])]:
                nw = "-" if k["newest_wins"] is None else f"{k['newest_wins']:.2f}"
                lines.append(
                    f"    {budget:>5} {kind:<15} {k['fact_recall']:.3f} {k['all_facts']:.3f} {k['leaks']:>3} "
                    f"{k['confused']:>3}/{k['paired']:<3} {nw:>5} n={k['questions']}"
                )
    return "\n".join(lines)
