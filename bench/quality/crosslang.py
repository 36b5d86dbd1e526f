"""Set (e): cross-language recall without a shared name (bench/quality/README.md).

One company user's notes, each about one thing, half written in English and half in
Chinese, none naming what another language's query would name. Short questions ask about
them in the other language (zh → an English note, en → a Chinese note) and, as a control,
in the same language; questions about things nobody wrote down must find nothing. The
same notes are written twice: as memories of the user (`memory_create`) and as public
meeting notes (`import_notes` + `wiki_compile`), so that memory recall and wiki search are
measured on the same labels; the context call is a colleague's, who sees the notes but
not the user's memories (only the wiki can bring a note in).

Each fact: (id, language of the note, note text, questions as (language, text)).
Deterministic: nothing is drawn at random.
"""

from __future__ import annotations

from pathlib import Path

TENANT = "qxl"
USER = "quinn"
READER = "rowan"  # a colleague: reads the public notes, none of quinn's memories

FACTS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    # English notes, asked in Chinese (and once in English).
    ("backup", "en", "The nightly database backup runs at 2 am and keeps copies for 14 days.",
     [("zh", "数据库备份几点运行？"), ("en", "When does the database backup run?")]),
    ("wifi", "en", "The guest wifi password in the office is changed every Monday.",
     [("zh", "访客无线网络密码多久更换？"), ("en", "How often is the guest wifi password changed?")]),
    ("parking", "en", "Employees may park in level B2 of the garage; visitors use level B1.",
     [("zh", "员工停车在哪一层？"), ("en", "Where do employees park?")]),
    ("laptop", "en", "New hires receive a 14-inch laptop on their first day from the IT desk.",
     [("zh", "新员工第一天领什么电脑？"), ("en", "What computer do new hires get?")]),
    ("vacation", "en", "Staff get 20 days of paid vacation per year, and up to 5 unused days carry over.",
     [("zh", "每年带薪年假有几天？"), ("en", "How many paid vacation days per year?")]),
    ("onsite", "en", "The quarterly all-hands meeting is held in the large auditorium on the third floor.",
     [("zh", "季度全员大会在哪里开？"), ("en", "Where is the quarterly all-hands held?")]),
    ("release", "en", "Mobile app releases ship every second Thursday after the regression tests pass.",
     [("zh", "手机应用多久发布一次？"), ("en", "How often does the mobile app ship?")]),
    ("deposit", "en", "The office lease requires a security deposit of three months' rent.",
     [("zh", "办公室租约押金是多少？"), ("en", "How large is the office lease deposit?")]),
    ("oncall", "en", "Whoever is on call must acknowledge a production alert within 15 minutes.",
     [("zh", "值班人员多久内要响应生产告警？"), ("en", "How fast must on-call acknowledge an alert?")]),
    ("printer", "en", "The color printer on the second floor needs a badge swipe to print.",
     [("zh", "彩色打印机怎么用？"), ("en", "How do I use the color printer?")]),
    # Chinese notes, asked in English (and once in Chinese).
    ("contract", "zh", "与物流客户签订的年度服务合同金额为250万元，明年一月续签。",
     [("en", "What is the annual contract amount with the logistics customer?"), ("zh", "物流客户的合同金额是多少？")]),
    ("canteen", "zh", "公司食堂午餐时间是十一点半到一点半，每人每餐补贴二十元。",
     [("en", "When is lunch served in the canteen?"), ("zh", "食堂午餐几点开始？")]),
    ("training", "zh", "所有新员工入职一个月内必须完成信息安全培训。",
     [("en", "Which training must new employees finish?"), ("zh", "新员工要完成什么培训？")]),
    ("shuttle", "zh", "班车每天早上七点五十从地铁站出发，开往园区。",
     [("en", "What time does the shuttle bus leave?"), ("zh", "班车几点出发？")]),
    ("gym", "zh", "园区健身房晚上十点关门，周末不开放。",
     [("en", "When does the gym close?"), ("zh", "健身房几点关门？")]),
    ("reimburse", "zh", "出差的交通费用需在回来后两周内提交报销。",
     [("en", "How soon must travel costs be claimed?"), ("zh", "差旅交通费多久内报销？")]),
    ("server", "zh", "测试环境的服务器每周日凌晨三点自动重启。",
     [("en", "When are the test servers restarted?"), ("zh", "测试服务器什么时候重启？")]),
    ("holiday", "zh", "今年春节放假从二月九日到二月十七日，共九天。",
     [("en", "How long is the Spring Festival holiday?"), ("zh", "春节放几天假？")]),
    ("badge", "zh", "门禁卡丢失要在当天向行政部报告并补办，补办费五十元。",
     [("en", "What to do if I lose my access card?"), ("zh", "门禁卡丢了怎么办？")]),
    ("survey", "zh", "客户满意度调查每半年做一次，由市场部负责。",
     [("en", "How often is the customer satisfaction survey done?"), ("zh", "客户满意度调查多久一次？")]),
]  # fmt: skip

# Questions about things nobody wrote down: nothing should be returned.
UNANSWERABLE: list[tuple[str, str]] = [
    ("zh", "公司吉祥物叫什么名字？"),
    ("zh", "董事长喜欢什么颜色？"),
    ("zh", "火星基地的氧气配额是多少？"),
    ("zh", "谁赢了去年的钢琴比赛？"),
    ("zh", "乐队的鼓手是谁？"),
    ("en", "What is the name of the company mascot?"),
    ("en", "Which color does the chairman like?"),
    ("en", "What is the oxygen quota on the Mars base?"),
    ("en", "Who won last year's piano contest?"),
    ("en", "Who is the drummer of the band?"),
]


def questions() -> list[dict]:
    """Every question: id, language, text, the fact it asks about (None: unanswerable),
    and its direction ("zh→en": a Chinese question about an English note...)."""
    out = []
    for fact_id, note_lang, _, asked in FACTS:
        for i, (lang, text) in enumerate(asked):
            out.append({"id": f"{fact_id}-{i}", "lang": lang, "text": text, "fact": fact_id,
                        "direction": f"{lang}→{note_lang}"})  # fmt: skip
    for i, (lang, text) in enumerate(UNANSWERABLE):
        out.append({"id": f"none-{i}", "lang": lang, "text": text, "fact": None, "direction": f"{lang}→none"})
    return out


def write_notes(folder: Path) -> list[Path]:
    """Each note as a public meeting note of its own (front matter, one paragraph)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, (fact_id, lang, text, _) in enumerate(FACTS):
        title = f"周会 {i + 1}" if lang == "zh" else f"Weekly sync {i + 1}"  # names nothing a question asks
        front = [f"title: {title}", f"date: 2026-03-{i + 1:02d}", f"attendees: [{USER}@quill.example]",
                 "public: true"]  # fmt: skip
        (folder / f"{fact_id}.md").write_text(
            "---\n" + "\n".join(front) + "\n---\n" + text + "\n", encoding="utf-8"
        )
    return [folder]


# --- loading and measuring (called by run.py) ---------------------------------------------


def load(fresh_tenant, write_memories) -> dict[str, int]:
    """The notes as the user's memories and as public wiki notes; fact id -> memory id."""
    import tempfile

    from django.core.management import call_command

    from almanac.services.users import user_create
    from memories.models import Memory

    tenant = fresh_tenant(TENANT, "Quality bench: cross-language")
    user = user_create(tenant=tenant, username=USER, email=f"{USER}@quill.example", display_name="Quinn")
    user_create(tenant=tenant, username=READER, email=f"{READER}@quill.example", display_name="Rowan")
    rows = [{"id": fact_id, "content": text} for fact_id, _, text, _ in FACTS]
    ids = write_memories(user, rows, memory_type=Memory.Type.SEMANTIC)
    with tempfile.TemporaryDirectory() as folder:
        for path in write_notes(Path(folder) / "notes"):
            call_command("import_notes", str(path), tenant=TENANT, no_progress=True, verbosity=0)
    call_command("wiki_compile", TENANT, verbosity=0)
    return ids


def _needle(text: str) -> str:
    """What shows that a prompt or a hit holds the note: its first 16 characters."""
    return text[:16]


def _wiki_lanes(user, question: dict, notes: dict[str, str]) -> dict:
    """The note's section: its rank in each wiki lane (keyword lane counted only above its
    coverage floor) and whether wiki search's top-5 pages hold it; pages returned."""
    from django.conf import settings

    from wiki.search import page_search, section_search

    needle = _needle(notes[question["fact"]]) if question["fact"] else None
    ranked = section_search(user=user, query=question["text"], top_k=100)
    gold = [h for h in ranked if needle and needle in h.section.content]
    b = gold[0].breakdown if gold else {}
    # The closest hit of each script pair (for an unanswerable question: what a floor must cut).
    closest: dict[str, float] = {}
    for hit in ranked:
        pair, similarity = hit.breakdown.get("script_pair"), hit.breakdown.get("vector_similarity")
        if pair and similarity is not None:
            closest[pair] = max(closest.get(pair, -1.0), similarity)
    keyword_hit = (b.get("keyword_coverage") or 0) >= settings.WIKI_MIN_KEYWORD_COVERAGE
    pages = page_search(user=user, query=question["text"], top_k=5)
    found = any(needle and needle in h.section.content for p in pages for h in p["hits"])
    return {
        "keyword@5": bool(keyword_hit and (b.get("keyword_rank") or 99) <= 5),
        "vector@5": (b.get("vector_rank") or 99) <= 5,
        "vector_similarity": b.get("vector_similarity"),
        "pipeline@5": found,
        "pages": len(pages),
        "closest": closest,
    }


def run(eval_memories, no_touch: dict, ids: dict[str, int]) -> dict:
    """Memory lanes by direction (zh→en, en→zh, en→en, zh→zh, *→none), wiki search and the
    context call (the note's text in the prompt; nothing for an unanswerable question)."""
    import statistics

    from django.contrib.auth import get_user_model

    from context.services import context_build

    qs = questions()
    memories = eval_memories(
        qs,
        user_of=lambda q: USER,
        text_of=lambda q: q["text"],
        gold_of=lambda q: {ids[q["fact"]]} if q["fact"] else set(),
        category_of=lambda q: q["direction"],
    )
    users = get_user_model().objects.select_related("profile")
    reader = users.get(username=READER)
    notes = {fact_id: text for fact_id, _, text, _ in FACTS}
    by_direction: dict[str, list[dict]] = {}
    for q in qs:
        row = _wiki_lanes(reader, q, notes)
        # The colleague's context: only the wiki can bring the note in.
        ctx = context_build(
            user=reader, tenant=reader.profile.tenant, task=q["text"], max_tokens=1500, **no_touch
        )
        prompt = ctx.get("prompt", "")
        row["context"] = bool(q["fact"]) and _needle(notes[q["fact"]]) in prompt
        row["context_items"] = len(ctx.get("items", []))
        by_direction.setdefault(q["direction"], []).append(row)
    wiki = {}
    for direction, rows in sorted(by_direction.items()):
        if direction.endswith("none"):
            closest = {p: max(r["closest"].get(p, -1.0) for r in rows) for p in ("en", "zh", "cross")}
            wiki[direction] = {"pages_returned": sum(r["pages"] for r in rows),
                               "context_items": sum(r["context_items"] for r in rows),
                               "closest_similarity_max": {p: round(v, 4) for p, v in closest.items() if v > -1},
                               "n": len(rows)}  # fmt: skip
            continue
        sims = sorted(r["vector_similarity"] for r in rows if r["vector_similarity"] is not None)
        wiki[direction] = {
            **{
                k: round(statistics.fmean(r[k] for r in rows), 3)
                for k in ("keyword@5", "vector@5", "pipeline@5")
            },
            "context_recall": round(statistics.fmean(r["context"] for r in rows), 3),
            "gold_similarity_min": round(sims[0], 4) if sims else None,
            "gold_similarity_p25": round(sims[len(sims) // 4], 4) if sims else None,
            "n": len(rows),
        }
    memories.pop("queries", None)
    return {"memories": memories["lanes"], "wiki": wiki}


def report(result: dict) -> str:
    out = ["\n(e) Cross-language notes (memories: R@1 / R@5 / MRR per lane; unanswerable: results returned)"]
    lanes = result["memories"]
    for direction in sorted(lanes["pipeline"]["by_category"]):
        cells = []
        for lane in ("keyword", "vector", "pipeline"):
            m = lanes[lane]["by_category"][direction]
            cells.append(f"{lane} {m['r@1']:.3f}/{m['r@5']:.3f}/{m['mrr']:.3f}")
        out.append(f"  {direction:6} " + "; ".join(cells))
    out.append(
        "  unanswerable returned (mean): "
        + ", ".join(
            f"{lane} {lanes[lane]['unanswerable_returned_mean']}"
            for lane in ("keyword", "vector", "pipeline")
        )
    )
    out.append("  wiki (top-5 pages) and context:")
    for direction, w in result["wiki"].items():
        if direction.endswith("none"):
            out.append(
                f"  {direction:6} pages returned {w['pages_returned']}, context items {w['context_items']} ({w['n']} questions)"
            )
        else:
            out.append(
                f"  {direction:6} keyword {w['keyword@5']:.3f}; vector {w['vector@5']:.3f}; "
                f"search {w['pipeline@5']:.3f}; context {w['context_recall']:.3f}; "
                f"gold similarity min {w['gold_similarity_min']}, p25 {w['gold_similarity_p25']}"
            )
    return "\n".join(out)
