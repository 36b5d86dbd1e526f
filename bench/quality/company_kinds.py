"""Set (d), the harder kinds: look-alike customers, described-not-named tasks, roles,
aggregation across sources, values changed three times or more, and account owners that
change over the months.

`extend(co, seed)` adds to a built company (`company_exports.build`), with its own random
stream so the base set's draws do not move:

- **look-alikes**: four customers get a twin sharing the head of its name ("Norwick
  Logistics" and "Norwick Foods", "华源物流" and "华源医疗") with its own contact, quote
  and requirement; the twin of one takes the industry of another customer, so a task that
  names only that industry is ambiguous;
- **profiles**: each customer's account manager posts its profile in #sales (industry,
  headquarters city, headcount, who owns the account, their main contact), in the
  manager's language;
- **open items**: for four customers one open risk in #support, one in the contact's mail
  and one open GitHub issue;
- **renewal**: for four customers a renewal price that changes four times across e-mail,
  Slack and a meeting note;
- **owners**: for three customers the account passes from its manager to a second and then
  a third person, announced in #sales.

Questions (`kind`): `lookalike` (a twin's price, its look-alike's figures are
confusions), `lookalike_both` (both prices asked: no confusion), `described` (the task
gives industry and city, not the name), `ambiguous` (an industry two customers share: both
names are needed, as candidates), `role` (their contact and our owner), `aggregate` (every
open item of a customer), `changed3` (the newest renewal price; the older ones are stale),
`membership` (the current owner). `confuse` lists the look-alike's fact strings.
"""

from __future__ import annotations

import random
from datetime import timedelta

from bench.quality import company_exports as gen

KIND_ZH = {"Logistics": "物流", "Health": "医疗", "Foods": "食品", "Energy": "能源", "Capital": "资本",
           "Robotics": "机器人", "Retail": "零售", "Freight": "货运", "Securities": "证券",
           "Manufacturing": "制造"}  # fmt: skip
EN_CITIES = ["Rotterdam", "Lyon", "Denver", "Osaka", "Porto", "Leeds", "Austin", "Gdansk", "Tallinn", "Bergen",
             "Perth", "Calgary", "Turin", "Malmo"]  # fmt: skip
ZH_CITIES = ["南京", "青岛", "厦门", "长沙", "重庆", "天津", "宁波", "昆明", "大连", "济南", "福州", "郑州"]
RISKS = {
    "en": ["SAML certificate expires on {d}", "audit export misses {n} fields", "invoice INV-{n}{n} is disputed",
           "VPN tunnel drops every {n} minutes", "backup window overruns by {n} minutes",
           "{n} users stuck in provisioning"],
    "zh": ["SAML证书将于{d}到期", "审计导出缺少{n}个字段", "发票INV-{n}{n}有争议", "VPN隧道每{n}分钟断开一次",
           "备份窗口超时{n}分钟", "{n}个用户卡在开通流程"],
}  # fmt: skip
KINDS = (
    "lookalike",
    "lookalike_both",
    "described",
    "ambiguous",
    "role",
    "aggregate",
    "changed3",
    "membership",
)


def _pool(co: gen.Company, rng: random.Random) -> gen.Pool:
    """A pool that knows every fact string and issue number the base set drew."""
    pool = gen.Pool(rng)
    for facts in [c.facts for c in co.customers] + [co.facts_company]:
        pool.used += [v[1] for v in facts.values() if isinstance(v, tuple) and isinstance(v[1], str)]
    pool.used += [c.name for c in co.customers] + [c.contact for c in co.customers]
    pool.numbers |= {it["number"] for items in co.github.values() for it in items}
    return pool


def _industry(c: gen.Customer) -> str:
    return next(k for k in gen.ZH_CO_KIND if c.name.endswith(k)) if c.lang == "zh" else c.name.split()[-1]


def _twin(co, c, i, rng, pool, kind_en: str) -> gen.Customer:
    """A customer whose name shares `c`'s head, in another industry, with its own people."""
    am = co.person(rng.choice([p.login for p in co.by_role("am") if p.login != c.am] or [c.am]))
    if c.lang == "en":
        head = c.alias
        name, alias = f"{head} {kind_en}", f"{head} {kind_en}"
        contact = pool.fresh(lambda r: f"{r.choice(gen.EN_FIRST)} {r.choice(gen.EN_LAST)}")
        domain = f"{head.lower()}{kind_en.lower()}.example"
        cmail = f"{contact.split()[0].lower()}.{contact.split()[1].lower()}@{domain}"
        title = rng.choice(gen.EN_TITLES)
    else:
        kind_zh = KIND_ZH[kind_en]
        head = c.name[:2]
        name, alias = head + kind_zh, f"{c.alias.split()[0]} {kind_en}"
        s, g = pool.fresh(lambda r: (r.choice(list(gen.ZH_SURNAMES)), r.choice(list(gen.ZH_GIVEN))),
                          lambda t: t[0] + t[1])  # fmt: skip
        domain = f"{c.alias.split()[0].lower()}{kind_en.lower()}.example"
        contact, cmail = s + g, f"{gen.ZH_SURNAMES[s]}{gen.ZH_GIVEN[g]}@{domain}"
        title = rng.choice(gen.ZH_TITLES)
    start = c.start + timedelta(days=rng.randint(3, 20), minutes=3 * i + 2)
    return gen.Customer(
        name, alias, c.lang, domain, contact, cmail, title, c.product, am.login, start, "calendar"
    )


def _twins(co, rng, pool) -> dict[str, str]:
    """Four twins (two of en customers, two of zh ones); the first takes the industry of
    another customer (an ambiguous industry). {name: look-alike's name}, both ways."""
    base = list(co.customers)
    pairs = {}
    for n, index in enumerate((0, 1, 4, 5)):
        c = base[index]
        own = _industry(c) if c.lang == "en" else gen.ZH_CO_KIND[_industry(c)]
        used = {_industry(x) if x.lang == "en" else gen.ZH_CO_KIND[_industry(x)] for x in co.customers}
        kinds = gen.EN_CO_KIND if c.lang == "en" else list(gen.ZH_CO_KIND.values())
        # the first twin shares another customer's industry (a task naming only it is ambiguous)
        options = [k for k in kinds if (k in used) == (n == 0) and k != own]
        kind_en = rng.choice(options)
        twin = _twin(co, c, 8 + n, rng, pool, kind_en)
        co.customers.append(twin)
        i = len(co.customers) - 1
        am, eng = co.person(twin.am), co.person(co.repos[twin.product][1][i % 2])
        support = co.person(co.repos[twin.product][1][2])
        gen._kickoff(co, twin, i, twin.start, am, eng, True, pool)
        gen._kickoff_notes(co, twin, i, twin.start, am, eng, True, rng, pool)
        gen._slack_requirement(co, twin, twin.start + timedelta(days=2), am, support, rng, pool)
        gen._mail_quote(co, twin, i, twin.start, am, "USD" if twin.lang == "en" else "CNY", rng, pool)
        pairs[twin.name], pairs[c.name] = c.name, twin.name
    return pairs


def _profiles(co, rng, pool, owners: dict[str, str]) -> None:
    """Each customer's profile in #sales, by its manager, in the manager's language."""
    for c in co.customers:
        am = co.person(c.am)
        city = pool.fresh(lambda r, c=c: r.choice(EN_CITIES if c.lang == "en" else ZH_CITIES))
        staff = pool.fresh(lambda r: r.randint(120, 9800), lambda v: f"{v:,}")
        industry = _industry(c)
        en_ind = industry if c.lang == "en" else gen.ZH_CO_KIND[industry]
        text = {"en": f"Account profile: {c.name} is a {en_ind.lower()} company headquartered in {city}, "
                      f"about {staff:,} employees. {am.name} owns the account; their main contact is {c.contact} ({c.title}).",
                "zh": f"客户档案：{c.name}是一家{KIND_ZH.get(en_ind, industry)}企业，总部在{city}，约{staff:,}名员工。"
                      f"{am.name}负责该客户；对方主要联系人是{c.contact}（{c.title}）。"}[am.lang]  # fmt: skip
        co.slack.append(("sales", c.start + timedelta(days=1, hours=1), am.login, text, None))
        c.facts["city"] = ("slack", city)
        c.facts["industry_en"] = en_ind
        c.facts["owner"] = ("slack", am.name)
        owners[c.name] = am.login


def _risk(pool, lang: str, when) -> str:
    def make(r):
        tpl = r.choice(RISKS[lang])
        return tpl.format(n=r.randint(11, 97), d=gen.day(when + timedelta(days=r.randint(20, 80)), lang))

    return pool.fresh(make)


def _open_items(co, c, i, rng, pool) -> None:
    """One open risk in #support, one in the contact's mail, one open GitHub issue."""
    collaborators = co.repos[c.product][1]
    support, eng = co.person(collaborators[2]), co.person(collaborators[0])
    when = c.start + timedelta(days=50)
    r1 = _risk(pool, support.lang, when)
    co.slack.append(("support", when, support.login,
                     {"en": f"Open risk for {c.name}: {r1}.", "zh": f"{c.name} 的未决风险：{r1}。"}[support.lang], None))  # fmt: skip
    r2 = _risk(pool, c.lang, when)
    body = {"en": f"Hello,\n\nOne open point on our side: {r2}. Can you look into it?\n\n{c.contact}, {c.name}",
            "zh": f"您好，\n\n我们这边还有一个未解决的问题：{r2}。请帮忙跟进。\n\n{c.contact}，{c.name}"}[c.lang]  # fmt: skip
    subject = {"en": f"Open point – {c.name}", "zh": f"{c.name} 待解决问题"}[c.lang]
    co.mail.append(dict(key=f"open-{i}", n=0, subject=subject, sender=c.contact_email, to=[c.am, support.login],
                        when=when + timedelta(days=4), body=body))  # fmt: skip
    r3 = _risk(pool, eng.lang, when)
    title = {"en": f"{c.name}: {r3}", "zh": f"{c.name}：{r3}"}[eng.lang]
    gen._issue(co, c, number=pool.number(100, 999), when=when + timedelta(days=8), author=eng, title=title,
               body={"en": "Still open.", "zh": "仍未解决。"}[eng.lang], closed=None)  # fmt: skip
    c.facts["open_items"] = [r1, r2, r3]
    c.facts["open_readers"] = [support.login]


def _renewal(co, c, i, rng, pool) -> None:
    """A renewal price that changes four times: e-mail, Slack, e-mail, then a meeting note."""
    am = co.person(c.am)
    currency = "USD" if c.lang == "en" else "CNY"
    low, high = (130, 190) if currency == "USD" else (950, 1400)
    values = [pool.fresh(lambda r, lang=lang: gen.price(r.randint(low, high), currency, lang), str)
              for lang in (c.lang, am.lang, c.lang, am.lang)]  # fmt: skip
    t = c.start + timedelta(days=60)
    subject = {"en": f"Renewal – {c.name}", "zh": f"{c.name} 续约"}[c.lang]
    bodies = {"en": [f"Hi,\n\nFor the renewal we propose {values[0]}.\n\n{am.name}",
                     f"Hi,\n\nAfter your counter we can do {values[2]} for the renewal.\n\n{am.name}"],
              "zh": [f"您好，\n\n续约报价为{values[0]}。\n\n{am.name}",
                     f"您好，\n\n根据贵司的反馈，续约价可以调整为{values[2]}。\n\n{am.name}"]}[c.lang]  # fmt: skip
    co.mail.append(dict(key=f"renew-{i}", n=0, subject=subject, sender=am.login, to=[c.contact_email], when=t,
                        body=bodies[0]))  # fmt: skip
    co.slack.append(("sales", t + timedelta(days=3), am.login,
                     {"en": f"{c.name} pushed back on the renewal; we are now at {values[1]}.",
                      "zh": f"{c.name} 对续约价有异议，目前谈到{values[1]}。"}[am.lang], None))  # fmt: skip
    co.mail.append(dict(key=f"renew-{i}", n=1, subject=subject, sender=am.login, to=[c.contact_email],
                        when=t + timedelta(days=7), body=bodies[1]))  # fmt: skip
    t4 = t + timedelta(days=12)
    body = {"en": f"## Summary\nRenewal call with {c.contact}.\n\n## Decisions\n- Renewal agreed at {values[3]}.",
            "zh": f"## 摘要\n与{c.contact}的续约沟通。\n\n## 决定\n- 续约价最终定为{values[3]}。"}[am.lang]  # fmt: skip
    gen._note(co, f"{t4:%Y-%m-%d}-renewal-{i}.md", {"en": f"{c.name} renewal call", "zh": f"{c.name} 续约沟通"}[am.lang],
              t4, [am.login, c.contact_email], body, customer=c.name)  # fmt: skip
    c.facts["renewal"] = ("notes", values[3])
    c.facts["renewal_old"] = values[:3]


def _owners(co, c, rng, owners: dict[str, str]) -> None:
    """The account passes from its manager to a second and then a third person."""
    head = co.by_role("head_sales")[0]
    chain = [c.am] + rng.sample([p.login for p in co.people if p.dept == "Sales" and p.login != c.am], 2)
    p1, p2, p3 = (co.person(x) for x in chain)
    t = c.start + timedelta(days=35)
    texts = [{"en": f"From today {p2.name} takes over the {c.name} account from {p1.name}.",
              "zh": f"从今天起，{c.name} 这个客户由{p2.name}接手（原负责人{p1.name}）。"},
             {"en": f"Change of owner again: {p3.name} now owns {c.name}; {p2.name} moves to new business.",
              "zh": f"客户负责人再次调整：{c.name} 现在由{p3.name}负责，{p2.name}转去做新客户。"}]  # fmt: skip
    for n, text in enumerate(texts):
        co.slack.append(("sales", t + timedelta(days=30 * n), head.login, text[head.lang], None))
    c.facts["owner_now"] = ("slack", p3.name)
    owners[c.name] = p3.login


def extend(co: gen.Company, seed: int = gen.SEED) -> None:
    """The harder kinds' data and questions (see the module's docstring)."""
    rng = random.Random(seed + 7)
    pool = _pool(co, rng)
    pairs = _twins(co, rng, pool)
    owners: dict[str, str] = {}
    _profiles(co, rng, pool, owners)
    customers = co.customers
    for q in co.questions:  # every question about one of a pair: the other's figures are confusions
        if q["customer"] in pairs:
            twin = next(c for c in customers if c.name == pairs[q["customer"]])
            q["confuse"] = [s for s in _facts_of(twin) if s not in q["needs"]]
    for i, c in enumerate(customers):
        if i in (1, 6, 8, 10):
            _open_items(co, c, i, rng, pool)
        if i in (2, 4, 9, 11):
            _renewal(co, c, i, rng, pool)
    for i in (3, 7, 5):
        _owners(co, customers[i], rng, owners)
    co.slack.sort(key=lambda m: m[1])
    _questions(co, rng, pairs)


def _facts_of(c: gen.Customer) -> list[str]:
    return [v[1] for k, v in c.facts.items() if isinstance(v, tuple) and k != "owner"]


def _questions(co, rng, pairs) -> None:
    by_name = {c.name: c for c in co.customers}
    deal_desk = set(co.channels["deal-desk"][2])
    sales = [p.login for p in co.people if p.dept == "Sales"]

    def ask(c, user, templates, needs, kind, source, **kw):
        lang = gen._lang(co, user, rng)
        twin = by_name.get(pairs.get(c.name, ""))
        confuse = [s for s in _facts_of(twin) if s not in needs] if twin and kind != "lookalike_both" else []
        text = templates[lang].format(c=gen._ref(c, lang))
        gen._q(co, user, lang, text, needs, customer=c.name, source=source, kind=kind, **kw)
        co.questions[-1]["confuse"] = confuse

    for name in pairs:
        c = by_name[name]
        F = {k: v[1] for k, v in c.facts.items() if isinstance(v, tuple)}
        who = rng.choice(c.facts["quote_readers"])
        ask(c, who, {"en": "What per-seat price did we last offer {c}, and for how many seats?",
                     "zh": "我们最后给{c}的单价是多少，多少个席位？"}, [F["price"], F["seats"]], "lookalike", "email")  # fmt: skip
    for twin in list(pairs)[:4:2]:
        a, b = by_name[twin], by_name[pairs[twin]]
        head = co.by_role("head_sales")[0].login
        lang = gen._lang(co, head, rng)
        text = {"en": "Compare the last per-seat prices we offered {a} and {b}.",
                "zh": "对比一下我们最后给{a}和{b}的单价。"}[lang].format(a=gen._ref(a, lang), b=gen._ref(b, lang))  # fmt: skip
        gen._q(
            co,
            head,
            lang,
            text,
            [a.facts["price"][1], b.facts["price"][1]],
            source="email",
            kind="lookalike_both",
        )
        co.questions[-1]["confuse"] = []
    _described(co, rng, by_name, pairs, ask)
    for c in co.customers[::2]:
        if "owner_now" in c.facts:
            continue
        ask(c, rng.choice(sales), {"en": "For {c}: who is their main contact, and who owns the account on our side?",
                                   "zh": "{c}那边的主要联系人是谁？我们这边谁负责这个客户？"},
            [c.contact, c.facts["owner"][1]], "role", "slack")  # fmt: skip
    for c in co.customers:
        if "open_items" in c.facts:
            ask(c, c.facts["open_readers"][0], {"en": "List all open risks and issues for {c}, with where each came from.",
                                                "zh": "列出{c}所有未解决的风险和问题，并注明来源。"},
                c.facts["open_items"], "aggregate", "github")  # fmt: skip
        if "renewal" in c.facts:
            ask(c, c.am, {"en": "What renewal price did we finally agree with {c}?", "zh": "{c}的续约价最后定在多少？"},
                [c.facts["renewal"][1]], "changed3", "notes", stale=c.facts["renewal_old"])  # fmt: skip
        if "owner_now" in c.facts:
            ask(c, rng.choice(sales), {"en": "Who owns the {c} account on our side now?", "zh": "现在我们这边谁负责{c}？"},
                [c.facts["owner_now"][1]], "membership", "slack")  # fmt: skip
    assert deal_desk


def _described(co, rng, by_name, pairs, ask) -> None:
    """Tasks that describe the customer (industry and city) instead of naming it, and one
    per shared industry that only names the industry (both customers are candidates)."""
    for c in co.customers:
        F = {k: v[1] for k, v in c.facts.items() if isinstance(v, tuple)}
        ind = c.facts["industry_en"]
        # Asked by someone who may read the kickoff and its notes (where the answer is); the
        # draw is kept so that the questions after these keep theirs.
        drawn = rng.choice(c.facts["quote_readers"])
        who = drawn if drawn in set(c.facts["kickoff_attendees"]) & set(c.facts["notes_attendees"]) else c.am
        lang = gen._lang(co, who, rng)
        text = {"en": f"For our {ind.lower()} customer headquartered in {F['city']}: which system do we integrate with, and how long is their pilot?",
                "zh": f"总部在{F['city']}的那家{KIND_ZH[ind]}客户：我们要对接哪个系统，试点期多长？"}[lang]  # fmt: skip
        twin = by_name.get(pairs.get(c.name, ""))
        gen._q(co, who, lang, text, [F["integration"], F["pilot_days"]], customer=c.name, source="calendar",
               kind="described")  # fmt: skip
        co.questions[-1]["confuse"] = [s for s in _facts_of(twin)] if twin else []
    industries: dict[str, list] = {}
    for c in co.customers:
        industries.setdefault(c.facts["industry_en"], []).append(c)
    for ind, group in industries.items():
        if len(group) > 1:
            head = co.by_role("head_sales")[0].login
            for lang in ("en", "zh"):
                text = {"en": f"What did we last quote our {ind.lower()} customer per seat?",
                        "zh": f"我们最后给那家{KIND_ZH[ind]}客户的单价是多少？"}[lang]  # fmt: skip
                gen._q(co, head, lang, text, [c.name for c in group], source="email", kind="ambiguous")
                co.questions[-1]["confuse"] = []
