"""Set (d): a generated company's exports (English and Chinese) in the real formats, and
the questions asked over them.

`build(seed)` makes, deterministically, a company of ten people and eight customers (four
named in English, four in Chinese) with a timeline over the autumn of 2026 in all five
sources: a Slack export zip (public channels and the private #deal-desk), an mbox (customer
threads, a private thread, and order forms recalled and sent again), two snapshots of an
ICS feed (weekly series; in the later one an occurrence was moved and a one-off meeting
rescheduled), Granola-style meeting notes and the GitHub exports of two private
repositories (issues and pull requests). Names, values and dates are drawn from pools by
the seed and rendered by templates in both languages; nothing is keyed to a word list.

Each customer is first named in a private place (a private repo's label, a calendar
invite's categories, a meeting note's front matter) and then discussed in e-mail and
Slack; two are mailed before that first tag. Some values change later (a price negotiated
down, an order form recalled and corrected, a meeting moved): the question lists the
newest value in `needs` and a replaced one in `stale` (served, it is wrong). `must_not`
lists what the asking user may not see (a private channel or repository they are not in).

`write_exports(company, folder)` writes the files; `run.py --sets d` imports them with the
documented commands, in three arrival orders (see README.md).
"""

from __future__ import annotations

import json
import mailbox
import random
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

SEED = 0
DOMAIN = "corvid.example"
COMPANY = "Corvid Analytics"
START = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
# The two calendar snapshots are expanded as of their own export dates (the window of
# recurring events is taken around the import's "now").
CALENDAR_EXPORTS = (datetime(2026, 10, 12, tzinfo=UTC), datetime(2026, 11, 27, tzinfo=UTC))
SOURCES = ("email", "slack", "calendar", "notes", "github")

EN_FIRST = ["Mia", "Owen", "Priya", "Lucas", "Hannah", "Tomas", "Grace", "Felix", "Nora", "Samir", "Elena",
            "Jonas", "Ruth", "Marco", "Leah", "Victor"]  # fmt: skip
EN_LAST = ["Lindqvist", "Adeyemi", "Moreau", "Kowalski", "Brennan", "Sato", "Haddad", "Fischer", "Oduya",
           "Castillo", "Novak", "Pereira", "Whitlock", "Iversen"]  # fmt: skip
ZH_SURNAMES = {"王": "wang", "李": "li", "张": "zhang", "刘": "liu", "陈": "chen", "杨": "yang", "赵": "zhao",
               "黄": "huang", "周": "zhou", "吴": "wu", "徐": "xu", "孙": "sun"}  # fmt: skip
ZH_GIVEN = {"伟": "wei", "芳": "fang", "娜": "na", "敏": "min", "静": "jing", "磊": "lei", "洋": "yang",
            "艳": "yan", "勇": "yong", "杰": "jie", "婷": "ting", "强": "qiang", "霞": "xia", "涛": "tao",
            "琳": "lin", "浩": "hao"}  # fmt: skip
EN_CO_HEAD = ["Nor", "Hal", "Bri", "Quin", "Tal", "Ver", "Cor", "Mar", "Ash", "Dun", "Fen", "Kel"]
EN_CO_TAIL = ["wick", "ford", "stone", "ridge", "vale", "mont", "haven", "field"]
EN_CO_KIND = ["Logistics", "Health", "Foods", "Energy", "Capital", "Robotics", "Retail", "Freight"]
ZH_CO_HEAD = {"华": "Hua", "云": "Yun", "金": "Jin", "海": "Hai", "天": "Tian", "瑞": "Rui", "博": "Bo",
              "恒": "Heng", "嘉": "Jia", "鼎": "Ding"}  # fmt: skip
ZH_CO_TAIL = {"源": "yuan", "泰": "tai", "锐": "rui", "达": "da", "川": "chuan", "通": "tong", "信": "xin"}
ZH_CO_KIND = {"物流": "Logistics", "医疗": "Health", "能源": "Energy", "证券": "Securities",
              "制造": "Manufacturing", "零售": "Retail", "食品": "Foods"}  # fmt: skip
PRODUCTS = ["Lumen", "Orbit", "Harbor", "Pulse", "Vega", "Quarry"]
EN_TITLES = [
    "VP Operations",
    "Head of IT",
    "Procurement Lead",
    "Chief Technology Officer",
    "Director of Finance",
]
ZH_TITLES = ["采购总监", "信息部经理", "运营副总裁", "技术负责人", "财务总监"]
IDPS = ["Okta", "Azure AD", "Ping Identity", "OneLogin", "Keycloak", "JumpCloud", "Auth0", "Duo"]
REGIONS = ["eu-central-1", "ap-southeast-1", "us-west-2", "eu-west-3", "ap-northeast-2", "ca-central-1",
           "sa-east-1", "me-south-1"]  # fmt: skip
INTEGRATIONS = ["Salesforce", "SAP S/4HANA", "NetSuite", "Snowflake", "BigQuery", "Workday", "ServiceNow",
                "HubSpot", "Zendesk", "Databricks", "Oracle EBS", "Dynamics 365", "Tableau", "Jira"]  # fmt: skip
CITIES = ["苏州", "成都", "杭州", "武汉", "合肥", "西安", "无锡", "佛山"]
WEEKDAYS_EN = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
WEEKDAYS_ZH = ["周一", "周二", "周三", "周四", "周五"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip


@dataclass
class Person:
    login: str
    name: str
    lang: str
    dept: str
    role: str
    slack_id: str

    @property
    def email(self) -> str:
        return f"{self.login}@{DOMAIN}"


@dataclass
class Customer:
    name: str
    alias: str  # the short or romanized name people also use
    lang: str
    domain: str
    contact: str
    contact_email: str
    title: str
    product: str
    am: str  # login of the account manager
    start: datetime
    first_named_in: str  # calendar | notes | github
    facts: dict = field(default_factory=dict)  # key -> (source, string)


@dataclass
class Company:
    seed: int
    people: list[Person]
    customers: list[Customer]
    channels: dict  # name -> (id, public, members)
    repos: dict  # product -> (full_name, collaborators)
    slack: list = field(default_factory=list)  # (channel, when, author, text, parent index | None)
    mail: list = field(default_factory=list)  # dicts: key, subject, sender, to, when, body, reply_to, recall
    calendar: list = field(default_factory=list)  # dicts per VEVENT, with "snapshot" (0, 1 or both)
    notes: list = field(default_factory=list)  # (file name, front matter dict, body)
    github: dict = field(default_factory=dict)  # product -> list of issue/PR dicts
    questions: list = field(default_factory=list)
    facts_company: dict = field(default_factory=dict)  # key -> (source, string)

    def person(self, login: str) -> Person:
        return next(p for p in self.people if p.login == login)

    def by_role(self, role: str) -> list[Person]:
        return [p for p in self.people if p.role == role]


# --- small renderers -----------------------------------------------------------------------


def day(when: datetime, lang: str) -> str:
    return f"{MONTHS[when.month - 1]} {when.day}" if lang == "en" else f"{when.month}月{when.day}日"


def stamp(when: datetime) -> str:
    """A calendar time as the importer writes it in an event's text ("When: ...")."""
    return when.strftime("%Y-%m-%d %H:%M")


def price(value: int, currency: str, lang: str) -> str:
    if currency == "USD":
        return f"${value}/seat"
    return f"每席位{value}元" if lang == "zh" else f"CNY {value}/seat"


def total(value: int, currency: str, lang: str) -> str:
    if currency == "USD":
        return f"${value:,}"
    return f"{value:,}元" if lang == "zh" else f"CNY {value:,}"


class Pool:
    """Draws fact strings that contain no earlier fact string and are contained in none, so
    a fact found in a prompt is that fact and not a piece of another."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: list[str] = []
        self.numbers: set[int] = set()

    def fresh(self, make, render=str):
        """A value from `make(rng)` whose rendering (the fact string) is new."""
        for _ in range(1000):
            value = make(self.rng)
            text = render(value)
            if not any(text in u or u in text for u in self.used):
                self.used.append(text)
                return value
        raise RuntimeError("no fresh value left")

    def number(self, low: int, high: int) -> int:
        """An issue or PR number not drawn before (not a fact string)."""
        while (n := self.rng.randint(low, high)) in self.numbers:
            pass
        self.numbers.add(n)
        return n


# --- the company ---------------------------------------------------------------------------


ROLES = [  # role, department, language
    ("head_sales", "Sales", "en"), ("am", "Sales", "en"), ("am", "Sales", "zh"), ("am", "Sales", "en"),
    ("finance", "Finance", "zh"), ("eng", "Engineering", "en"), ("eng", "Engineering", "zh"),
    ("eng", "Engineering", "en"), ("support", "Support", "zh"), ("support", "Support", "en"),
]  # fmt: skip


def _people(rng: random.Random) -> list[Person]:
    people, logins = [], set()
    en_first, en_last = rng.sample(EN_FIRST, 8), rng.sample(EN_LAST, 8)
    zh_sur, zh_giv = rng.sample(list(ZH_SURNAMES), 6), rng.sample(list(ZH_GIVEN), 6)
    for i, (role, dept, lang) in enumerate(ROLES):
        if lang == "en":
            first, last = en_first.pop(), en_last.pop()
            name, login = f"{first} {last}", first.lower()
        else:
            s, g = zh_sur.pop(), zh_giv.pop()
            name, login = s + g, ZH_SURNAMES[s] + ZH_GIVEN[g]
        while login in logins:
            login += "x"
        logins.add(login)
        people.append(Person(login, name, lang, dept, role, f"U{i + 1:02d}{login.upper()[:6]}"))
    return people


def _customers(rng: random.Random, pool: Pool, people: list[Person], products: list[str]) -> list[Customer]:
    ams = [p for p in people if p.role == "am"]
    en_am = [a for a in ams if a.lang == "en"]
    zh_am = [a for a in ams if a.lang == "zh"]
    # Three en customers for the first en AM, three zh for the zh AM, one of each for the other.
    owners = [en_am[0], en_am[0], en_am[0], en_am[1]] + [zh_am[0], zh_am[0], zh_am[0], en_am[1]]
    first = ["github", "calendar", "notes"] * 3
    rng.shuffle(first)
    out = []
    for i, am in enumerate(owners):
        lang = "en" if i < 4 else "zh"
        if lang == "en":
            head, tail, kind = pool.fresh(
                lambda r: (r.choice(EN_CO_HEAD), r.choice(EN_CO_TAIL), r.choice(EN_CO_KIND)),
                lambda t: t[0] + t[1],
            )
            short = head + tail
            name, alias, domain = f"{short} {kind}", short, f"{short.lower()}.example"
            contact = pool.fresh(lambda r: f"{r.choice(EN_FIRST)} {r.choice(EN_LAST)}")
            cmail = f"{contact.split()[0].lower()}.{contact.split()[1].lower()}@{domain}"
            title = rng.choice(EN_TITLES)
        else:
            head, tail, kind = pool.fresh(
                lambda r: (
                    r.choice(list(ZH_CO_HEAD)),
                    r.choice(list(ZH_CO_TAIL)),
                    r.choice(list(ZH_CO_KIND)),
                ),
                lambda t: t[0] + t[1],
            )
            roman = ZH_CO_HEAD[head] + ZH_CO_TAIL[tail]
            name, alias, domain = (
                head + tail + kind,
                f"{roman} {ZH_CO_KIND[kind]}",
                f"{roman.lower()}.example",
            )
            s, g = pool.fresh(
                lambda r: (r.choice(list(ZH_SURNAMES)), r.choice(list(ZH_GIVEN))), lambda t: t[0] + t[1]
            )
            contact, cmail = s + g, f"{ZH_SURNAMES[s]}{ZH_GIVEN[g]}@{domain}"
            title = rng.choice(ZH_TITLES)
        # minutes differ per customer: no two customers' messages share a timestamp
        start = START + timedelta(days=rng.randint(0, 40), hours=rng.randint(0, 6), minutes=7 * i + 1)
        out.append(Customer(name, alias, lang, domain, contact, cmail, title, products[i % 2], am.login, start,
                            first[i]))  # fmt: skip
    return out


def build(seed: int = SEED) -> Company:
    rng = random.Random(seed)
    pool = Pool(rng)
    people = _people(rng)
    products = rng.sample(PRODUCTS, 2)
    customers = _customers(rng, pool, people, products)
    role = {r: [p.login for p in people if p.role == r] for r, _, _ in ROLES}
    everyone = [p.login for p in people]
    channels = {
        "general": ("C01GENERAL", True, everyone),
        "sales": ("C02SALES", True, role["head_sales"] + role["am"] + role["finance"] + role["support"]),
        "support": ("C03SUPPORT", True, role["support"] + role["eng"] + role["am"]),
        "eng": ("C04ENG", True, role["eng"] + role["support"]),
        # private: finance, the head of sales and two of the three account managers
        "deal-desk": ("G01DEALDESK", False, role["finance"] + role["head_sales"] + role["am"][:2]),
    }
    repos = {
        products[0]: (f"corvid/{products[0].lower()}", [role["eng"][0], role["eng"][1], role["support"][0], role["am"][0]]),
        products[1]: (f"corvid/{products[1].lower()}", [role["eng"][1], role["eng"][2], role["support"][1], role["am"][1]]),
    }  # fmt: skip
    company = Company(seed, people, customers, channels, repos, github={p: [] for p in products})
    for i, customer in enumerate(customers):
        _customer_story(company, customer, i, rng, pool)
    _company_story(company, rng, pool)
    company.slack.sort(key=lambda m: m[1])
    return company


# --- one customer's story ------------------------------------------------------------------


def _customer_story(co: Company, c: Customer, i: int, rng: random.Random, pool: Pool) -> None:
    am = co.person(c.am)
    currency = "USD" if c.lang == "en" else "CNY"
    eng = co.person(co.repos[c.product][1][0] if i % 2 else co.repos[c.product][1][1])
    support = co.person(co.repos[c.product][1][2])
    t0 = c.start
    tagged = {"calendar": c.first_named_in == "calendar" or rng.random() < 0.4,
              "notes": c.first_named_in == "notes" or rng.random() < 0.4}  # fmt: skip
    # 0. first named in a private place
    if c.first_named_in == "github":
        _issue(co, c, number=pool.number(100, 999), when=t0, author=eng,
               title={"en": f"Pilot environment for {c.name}", "zh": f"{c.name} 试点环境"}[eng.lang],
               body={"en": f"Set up the {c.product} pilot tenant for {c.name}.",
                     "zh": f"为 {c.name} 搭建 {c.product} 试点租户。"}[eng.lang], closed=t0 + timedelta(days=3))  # fmt: skip
    if c.first_named_in == "notes":
        body = {"en": f"## Summary\nDiscovery call with {c.name}. They evaluate {c.product} against their in-house tool.",
                "zh": f"## 摘要\n与{c.name}的初次沟通，对方在评估 {c.product} 和自研工具。"}[am.lang]  # fmt: skip
        _note(co, f"{t0:%Y-%m-%d}-discovery-{i}.md", {"en": f"Discovery call: {c.name}", "zh": f"{c.name} 初次沟通"}[am.lang],
              t0, [am.login, c.contact_email], body, customer=c.name)  # fmt: skip
    kickoff = t0 if c.first_named_in == "calendar" else t0 + timedelta(days=7)
    _kickoff(co, c, i, kickoff, am, eng, tagged["calendar"], pool)
    _kickoff_notes(co, c, i, kickoff, am, eng, tagged["notes"], rng, pool)
    # 1. Slack: the requirement in #sales (public), the floor in #deal-desk (private)
    _slack_requirement(co, c, t0 + timedelta(days=2), am, support, rng, pool)
    finance = co.by_role("finance")[0]
    floor_s = pool.fresh(
        lambda r: price(
            r.randint(40, 69) if currency == "USD" else r.randint(300, 449), currency, finance.lang
        )
    )
    text = {"en": f"{c.name} floor: {floor_s}. Anything lower needs CFO sign-off.",
            "zh": f"{c.name} 底价 {floor_s}，再低需要 CFO 审批。"}[finance.lang]  # fmt: skip
    co.slack.append(("deal-desk", t0 + timedelta(days=4, hours=3), finance.login, text, None))
    c.facts["floor"] = ("slack", floor_s)
    # 2. E-mail: a quote, then a lower price; for some, an order form recalled and resent
    _mail_quote(co, c, i, t0, am, currency, rng, pool)
    if i in (0, 4, 7):
        _mail_recall(co, c, i, t0 + timedelta(days=22), am, currency, pool)
    if i in (2, 5):  # mailed before the customer was first tagged anywhere
        _mail_intro(co, c, i, t0 - timedelta(days=3), am, pool)
    # 3. Calendar: a weekly series with a moved occurrence, or a one-off meeting moved
    if i in (1, 4, 6):
        _weekly(co, c, i, t0 + timedelta(days=10), am, support, pool)
    elif i in (0, 3):
        _qbr_moved(co, c, i, t0 + timedelta(days=45), am, pool)
    # 4. GitHub: a bug and the pull request that fixes it
    _bug(co, c, i, t0 + timedelta(days=12), eng, support, rng, pool)


def _kickoff(co, c, i, when, am, eng, tagged, pool) -> None:
    when = when.replace(hour=14 + i % 3, minute=0)
    system = pool.fresh(lambda r: r.choice(INTEGRATIONS))
    desc = {"en": f"Kickoff with {c.contact} ({c.title}): scope, timeline, and the {system} integration.",
            "zh": f"与{c.contact}（{c.title}）的启动会：范围、时间表，以及与 {system} 的集成。"}[am.lang]  # fmt: skip
    co.calendar.append(dict(
        uid=f"kickoff-{i}", summary={"en": f"{c.name} kickoff", "zh": f"{c.name} 启动会"}[am.lang],
        description=desc, start=when, minutes=60, organizer=am.login, attendees=[eng.login, c.contact_email],
        categories=f"customer:{c.name},project:{c.product}" if tagged else "", snapshots=(0, 1)))  # fmt: skip
    c.facts["integration"] = ("calendar", system)
    c.facts["kickoff_attendees"] = [am.login, eng.login]


def _kickoff_notes(co, c, i, when, am, eng, tagged, rng, pool) -> None:
    owner = co.person(am.login)
    lang = am.lang
    days_s = pool.fresh(lambda r: f"{r.randint(14, 120)} days" if lang == "en" else f"{r.randint(14, 120)}天")
    golive_s = pool.fresh(lambda r: day(when + timedelta(days=r.randint(30, 60)), lang))
    if lang == "en":
        body = (
            f"## Summary\nKickoff with {c.contact} ({c.title}). {c.name} will pilot {c.product}.\n\n"
            f"## Decisions\n- The pilot runs {days_s}.\n- Target: {golive_s}.\n\n"
            f"## Action items\n- [ ] {owner.name}: send the order form.\n- [ ] {eng.name}: set up SSO in the pilot."
        )
        title = f"{c.name} kickoff notes"
    else:
        body = (
            f"## 摘要\n与{c.contact}（{c.title}）的启动会，{c.name} 将试用 {c.product}。\n\n"
            f"## 决定\n- 试点期 {days_s}。\n- 目标：{golive_s}。\n\n"
            f"## 待办\n- [ ] {owner.name}：发送订单。\n- [ ] {eng.name}：在试点环境配置单点登录。"
        )
        title = f"{c.name} 启动会纪要"
    _note(co, f"{when:%Y-%m-%d}-kickoff-{i}.md", title, when, [am.login, eng.login, c.contact_email], body,
          customer=c.name if tagged else None, project=c.product if tagged else None)  # fmt: skip
    c.facts["pilot_days"] = ("notes", days_s)
    c.facts["golive"] = ("notes", golive_s)
    c.facts["notes_attendees"] = [am.login, eng.login]


def _slack_requirement(co, c, when, am, support, rng, pool) -> None:
    if c.lang == "en" or am.lang == "en":
        kind = rng.choice(["idp", "region"])
        value = pool.fresh(lambda r: r.choice(IDPS if kind == "idp" else REGIONS))
        need = {"idp": {"en": f"SSO with {value}", "zh": f"对接 {value} 单点登录"},
                "region": {"en": f"its data kept in {value}", "zh": f"数据存放在 {value}"}}[kind]  # fmt: skip
    else:
        value = pool.fresh(lambda r: r.choice(CITIES) + "机房")
        need = {"en": f"an on-premises install in their {value} data centre", "zh": f"本地部署在{value}"}
    text = {"en": f"{c.name} wants {need['en']} before they sign. {c.contact} ({c.title}) is driving it.",
            "zh": f"{c.name} 要求{need['zh']}才签约，对方由{c.contact}（{c.title}）负责。"}[am.lang]  # fmt: skip
    co.slack.append(("sales", when, am.login, text, None))
    reply = {"en": "Noted, I'll add it to the onboarding checklist.", "zh": "收到，我加到上线检查清单里。"}[
        support.lang
    ]
    co.slack.append(("sales", when + timedelta(minutes=20), support.login, reply, ("sales", when)))
    c.facts["requirement"] = ("slack", value)


def _mail_quote(co, c, i, t0, am, currency, rng, pool) -> None:
    lang = c.lang
    seats_s = pool.fresh(
        lambda r: f"{r.randint(12, 95) * 10:,} seats" if lang == "en" else f"{r.randint(12, 95) * 10:,}个席位"
    )
    p1 = pool.fresh(
        lambda r: r.randint(80, 120) if currency == "USD" else r.randint(600, 900),
        lambda v: price(v, currency, lang),
    )
    p2 = pool.fresh(
        lambda r: p1 - (r.randint(5, 15) if currency == "USD" else r.randint(40, 120)),
        lambda v: price(v, currency, lang),
    )
    p1_s, p2_s = price(p1, currency, lang), price(p2, currency, lang)
    due_s = pool.fresh(lambda r: day(t0 + timedelta(days=r.randint(35, 55)), lang))
    head = co.by_role("head_sales")[0].login
    fin = co.by_role("finance")[0].login
    subject = {"en": f"{c.product} proposal – {c.name}", "zh": f"{c.name} {c.product} 方案报价"}[lang]
    key = f"quote-{i}"
    when = t0 + timedelta(days=5)
    if lang == "en":
        bodies = [
            (am.login, [c.contact_email, head], when,
             f"Hi {c.contact.split()[0]},\n\nAs discussed: {seats_s} of {c.product} at {p1_s} per year. "
             f"Your procurement needs the signed order by {due_s} ({c.alias}), so I'll keep that date.\n\n{am.name}"),
            (c.contact_email, [am.login], when + timedelta(days=2),
             f"Thanks. {p1_s} is above our budget; can you do better for a two-year term?\n\n{c.contact}\n{c.title}, {c.name}"),
            (am.login, [c.contact_email, fin], when + timedelta(days=9),
             f"Hi {c.contact.split()[0]},\n\nFor a two-year term we can offer {p2_s}. Everything else stays as quoted.\n\n{am.name}"),
        ]  # fmt: skip
    else:
        bodies = [
            (am.login, [c.contact_email, head], when,
             f"{c.contact}您好，\n\n按照沟通：{c.product} {seats_s}，报价{p1_s}（每年）。贵司采购要求{due_s}（{c.name}）前签署订单。\n\n{am.name}"),
            (c.contact_email, [am.login], when + timedelta(days=2),
             f"收到。{p1_s}超出了我们的预算，签两年能否再优惠？\n\n{c.contact}\n{c.name} {c.title}"),
            (am.login, [c.contact_email, fin], when + timedelta(days=9),
             f"{c.contact}您好，\n\n签两年的话可以给到{p2_s}，其他条款不变。\n\n{am.name}"),
        ]  # fmt: skip
    for n, (sender, to, sent, body) in enumerate(bodies):
        co.mail.append(dict(key=key, n=n, subject=subject, sender=sender, to=to, when=sent, body=body))
    c.facts["seats"] = ("email", seats_s)
    c.facts["deadline"] = ("email", due_s)
    c.facts["price_old"] = ("email", p1_s)
    c.facts["price"] = ("email", p2_s)
    c.facts["quote_readers"] = [am.login, head, fin]


def _mail_recall(co, c, i, when, am, currency, pool) -> None:
    lang = c.lang

    def amount(r):
        return total(
            r.randint(180, 990) * (1000 if currency == "USD" else 10000) + r.randint(1, 9) * 10,
            currency,
            lang,
        )

    w, r_ = pool.fresh(amount), pool.fresh(amount)
    subject = {"en": f"Order form – {c.name}", "zh": f"{c.name} 订单"}[lang]
    body = {"en": "Hi,\n\nAttached is the order form. Total for the first year: {}.\n\n" + am.name,
            "zh": "您好，\n\n附件是订单，首年总价：{}。\n\n" + am.name}[lang]  # fmt: skip
    co.mail.append(dict(key=f"order-{i}", n=0, subject=subject, sender=am.login, to=[c.contact_email],
                        when=when, body=body.format(w)))  # fmt: skip
    recall = {"en": "Recall: ", "zh": "撤回："}[lang] + subject
    co.mail.append(dict(key=f"recall-{i}", n=0, subject=recall, sender=am.login, to=[c.contact_email],
                        when=when + timedelta(hours=1), body={"en": f"{am.name} would like to recall the message.",
                        "zh": f"{am.name} 希望撤回此邮件。"}[lang]))  # fmt: skip
    co.mail.append(dict(key=f"order-fixed-{i}", n=0, subject=subject, sender=am.login, to=[c.contact_email],
                        when=when + timedelta(hours=2), body=body.format(r_)))  # fmt: skip
    c.facts["order_total"] = ("email", r_)
    c.facts["order_total_recalled"] = ("email", w)


def _mail_intro(co, c, i, when, am, pool) -> None:
    sites_s = pool.fresh(
        lambda r: f"{r.randint(13, 97)} warehouses" if c.lang == "en" else f"{r.randint(13, 97)}个仓库"
    )
    subject = {"en": f"Introduction – {c.name}", "zh": f"{c.name} 业务介绍"}[c.lang]
    body = {"en": f"Hello {am.name.split()[0]},\n\nWe run {sites_s} and want one view of stock across them.\n\n{c.contact}, {c.name}",
            "zh": f"{am.name}您好，\n\n我们有{sites_s}，希望统一查看各仓库的库存。\n\n{c.contact}，{c.name}"}[c.lang]  # fmt: skip
    co.mail.append(dict(key=f"intro-{i}", n=0, subject=subject, sender=c.contact_email, to=[am.login], when=when,
                        body=body))  # fmt: skip
    c.facts["sites"] = ("email", sites_s)


def _weekly(co, c, i, first, am, support, pool) -> None:
    start = first.replace(hour=8 + i % 5, minute=0)
    moved_from = pool.fresh(lambda r: start + timedelta(weeks=r.randint(3, 8)), stamp)
    moved_to = pool.fresh(
        lambda r: moved_from + timedelta(days=r.choice([-1, 1]), hours=r.choice([-2, 3])), stamp
    )
    summary = {"en": f"{c.name} weekly sync", "zh": f"{c.name} 周例会"}[am.lang]
    desc = {"en": f"Weekly status with {c.contact}: open tickets, rollout, next steps.",
            "zh": f"与{c.contact}的每周例会：工单、上线进度、下一步。"}[am.lang]  # fmt: skip
    base = dict(uid=f"weekly-{i}", summary=summary, description=desc, start=start, minutes=30, organizer=am.login,
                attendees=[support.login, c.contact_email], categories="", rrule="FREQ=WEEKLY;COUNT=12")  # fmt: skip
    co.calendar.append(base | {"snapshots": (0, 1)})
    note = {"en": f"Moved to {stamp(moved_to)} UTC at {c.contact}'s request.",
            "zh": f"应{c.contact}要求改到 {stamp(moved_to)} UTC。"}[am.lang]  # fmt: skip
    co.calendar.append(base | {"rrule": "", "recurrence_id": moved_from, "start": moved_to, "sequence": 1,
                               "description": note + " " + desc, "snapshots": (1,)})  # fmt: skip
    c.facts["meeting_new"] = ("calendar", stamp(moved_to))
    c.facts["meeting_old"] = ("calendar", stamp(moved_from))
    c.facts["meeting_readers"] = [am.login, support.login]
    c.facts["meeting_kind"] = "weekly"
    c.facts["meeting_day"] = moved_from


def _qbr_moved(co, c, i, when, am, pool) -> None:
    old = pool.fresh(
        lambda r: when.replace(hour=10 + i % 4, minute=0) + timedelta(days=r.randint(0, 9)), stamp
    )
    new = pool.fresh(lambda r: old + timedelta(days=r.choice([-2, -1, 2, 3]), hours=r.choice([-1, 2])), stamp)
    fin = co.by_role("finance")[0]
    summary = {"en": f"{c.name} quarterly business review", "zh": f"{c.name} 季度业务回顾"}[am.lang]
    desc = {
        "en": f"QBR with {c.contact}: usage, renewal, roadmap.",
        "zh": f"与{c.contact}的季度回顾：使用情况、续约、路线图。",
    }[am.lang]
    base = dict(uid=f"qbr-{i}", summary=summary, description=desc, start=old, minutes=60, organizer=am.login,
                attendees=[fin.login, c.contact_email], categories="")  # fmt: skip
    co.calendar.append(base | {"snapshots": (0,)})
    note = {"en": f"Moved to {stamp(new)} UTC.", "zh": f"改到 {stamp(new)} UTC。"}[am.lang]
    co.calendar.append(
        base | {"start": new, "sequence": 1, "description": note + " " + desc, "snapshots": (1,)}
    )
    c.facts["meeting_new"] = ("calendar", stamp(new))
    c.facts["meeting_old"] = ("calendar", stamp(old))
    c.facts["meeting_readers"] = [am.login, fin.login]
    c.facts["meeting_kind"] = "qbr"


def _bug(co, c, i, when, eng, support, rng, pool) -> None:
    product = c.product
    number, pr = pool.number(100, 999), pool.number(100, 999)
    if rng.random() < 0.5:
        value = pool.fresh(lambda r: f"{r.randint(11, 99)},000 rows")
        symptom = {
            "en": f"CSV export stops at {value} for {c.name}",
            "zh": f"{c.name} 的 CSV 导出到 {value} 就中断",
        }
    else:
        value = pool.fresh(lambda r: f"{r.randint(31, 179)} seconds")
        symptom = {
            "en": f"dashboards time out after {value} for {c.name}",
            "zh": f"{c.name} 的仪表盘 {value} 后超时",
        }
    version = pool.fresh(lambda r: f"{product} {r.randint(3, 6)}.{r.randint(1, 9)}.{r.randint(1, 9)}")
    lang = support.lang
    title = {"en": symptom["en"][0].upper() + symptom["en"][1:], "zh": symptom["zh"]}[lang]
    body = {"en": f"Reported by {c.contact}. Workaround: narrow the date range.",
            "zh": f"{c.contact} 反馈。临时方案：缩小日期范围。"}[lang]  # fmt: skip
    _issue(co, c, number=number, when=when, author=support, title=title, body=body, closed=None)
    fixed = when + timedelta(days=rng.randint(3, 9))
    merged = i % 2 == 0
    pr_body = {"en": f"Fixes #{number}. Ships in {version}.", "zh": f"修复 #{number}，随 {version} 发布。"}[
        eng.lang
    ]
    _issue(co, c, number=pr, when=fixed, author=eng, pull=True, closed=fixed + timedelta(days=1) if merged else None,
           title={"en": "Fix: " + symptom["en"].split(" for ")[0], "zh": "修复：" + symptom["zh"]}[eng.lang],
           body=pr_body, label_customer=i % 3 != 2)  # fmt: skip
    c.facts["bug"] = ("github", value)
    c.facts["fix_version"] = ("github", version)
    c.facts["repo_readers"] = co.repos[product][1]


def _issue(co, c, *, number, when, author, title, body, closed, pull=False, label_customer=True) -> None:
    full = co.repos[c.product][0]
    labels = ([f"customer:{c.name}"] if label_customer else []) + [f"project:{c.product}"]
    co.github[c.product].append(dict(number=number, title=title, body=body, author=author.login, created=when,
                                     closed=closed, pull=pull, labels=labels, url=f"https://github.com/{full}/{'pull' if pull else 'issues'}/{number}"))  # fmt: skip


def _note(co, name, title, when, attendees, body, customer=None, project=None, public=False) -> None:
    meta = {"title": title, "date": f"{when:%Y-%m-%d}", "attendees": attendees}
    if customer:
        meta["customer"] = customer
    if project:
        meta["project"] = project
    if public:
        meta["public"] = True
    co.notes.append((name, meta, body))


# --- the rest of the company: filler, internal meetings, a private thread ---------------------


def _company_story(co: Company, rng: random.Random, pool: Pool) -> None:
    people = co.people
    allhands = pool.fresh(lambda r: (START + timedelta(days=r.randint(50, 70))).replace(hour=16, minute=5),
                          lambda d: day(d, "en") + " at 4pm")  # fmt: skip
    ceo_ish = co.by_role("head_sales")[0]
    ah = day(allhands, "en") + " at 4pm"
    co.slack.append(("general", allhands - timedelta(days=6), ceo_ish.login,
                     f"All-hands on {ah}: Q4 numbers and the roadmap for {', '.join(co.repos)}.", None))  # fmt: skip
    co.facts_company = {"allhands": ("slack", ah)}
    chatter = [
        ("en", "Reminder: expense reports for last month are due Friday."),
        ("zh", "本周五下午茶在三楼，欢迎大家参加。"),
        ("en", "The office Wi-Fi password rotates on the first Monday of the month."),
        ("zh", "下周起上海办公室的门禁卡需要重新登记。"),
        ("en", "Parking on level -2 is closed for repairs this week."),
        ("zh", "年假申请请在系统里提交，不再走邮件。"),
    ]
    for n, (lang, text) in enumerate(chatter * 2):
        author = rng.choice([p for p in people if p.lang == lang])
        co.slack.append(("general", START + timedelta(days=7 * n + rng.randint(0, 4), hours=rng.randint(0, 8)),
                         author.login, text, None))  # fmt: skip
    # internal weekly meetings (no customer, no project)
    eng = co.by_role("eng")
    co.calendar.append(dict(uid="eng-standup", summary="Engineering standup", description="Blockers and releases.",
                            start=START.replace(hour=8), minutes=15, organizer=eng[0].login,
                            attendees=[p.login for p in eng[1:]], categories="", rrule="FREQ=WEEKLY;BYDAY=MO,TH;COUNT=24",
                            snapshots=(0, 1)))  # fmt: skip
    # a retro note naming no customer or project
    retro = START + timedelta(days=rng.randint(30, 60))
    decision = pool.fresh(lambda r: f"releases move to {r.choice(WEEKDAYS_EN)}s")
    _note(co, f"{retro:%Y-%m-%d}-retro.md", "Engineering retro", retro, [p.login for p in eng],
          f"## Summary\nRelease process retro.\n\n## Decisions\n- Agreed: {decision}, except in the week before a public holiday.\n\n"
          "## Action items\n- [ ] Update the release calendar.")  # fmt: skip
    co.facts_company["retro"] = ("notes", decision)
    # a private thread between finance and the head of sales
    fin = co.by_role("finance")[0]
    rate = pool.fresh(lambda r: f"{r.randint(6, 14)}.{r.randint(1, 9)}%")
    co.mail.append(dict(key="commission", n=0, subject="Q4 commission plan", sender=fin.login, to=[ceo_ish.login],
                        when=START + timedelta(days=45), body=f"The Q4 commission rate is {rate} of first-year revenue. Confidential until the all-hands.\n\n{fin.name}"))  # fmt: skip
    co.facts_company["commission"] = ("email", rate)


# --- questions ---------------------------------------------------------------------------------


def _q(co, user, lang, text, needs, *, customer=None, source, kind="fact", must_not=(), stale=()) -> None:
    co.questions.append({
        "id": f"d{len(co.questions):03d}", "user": user, "lang": lang, "task": text, "customer": customer,
        "source": source, "kind": kind, "needs": list(needs), "must_not": list(must_not), "stale": list(stale),
    })  # fmt: skip


def _lang(co: Company, login: str, rng: random.Random) -> str:
    """The asker's language; about one task in three is asked in the other one."""
    own = co.person(login).lang
    return own if rng.random() < 0.67 else ("zh" if own == "en" else "en")


def _ref(c: Customer, lang: str) -> str:
    """How a task names the customer: its name, or in the other language its alias with the name."""
    if c.lang == lang:
        return c.name
    return f"{c.alias} ({c.name})" if lang == "en" else f"{c.name}"


def questions(co: Company, seed: int) -> None:
    rng = random.Random(seed + 1)
    deal_desk = set(co.channels["deal-desk"][2])
    for c in co.customers:
        F = {k: v[1] for k, v in c.facts.items() if isinstance(v, tuple)}
        am = c.am

        def ask(user, templates, needs, c=c, **kw):
            lang = _lang(co, user, rng)
            _q(co, user, lang, templates[lang].format(c=_ref(c, lang)), needs, customer=c.name, **kw)

        readers = c.facts["quote_readers"]
        ask(am, {"en": "What did we quote {c} and by when does their procurement need the order?",
                 "zh": "我们给{c}的报价是多少席位，对方采购要求什么时候前签单？"},
            [F["seats"], F["deadline"]], source="email")  # fmt: skip
        ask(rng.choice(readers), {"en": "What per-seat price did we last offer {c}?", "zh": "我们最后给{c}的单价是多少？"},
            [F["price"]], source="email", kind="update")  # fmt: skip
        if "order_total" in F:
            ask(am, {"en": "What is the first-year total on the {c} order form?", "zh": "{c}订单的首年总价是多少？"},
                [F["order_total"]], source="email", kind="update", stale=[F["order_total_recalled"]])  # fmt: skip
        if "sites" in F:
            ask(
                am,
                {"en": "How many warehouses does {c} run?", "zh": "{c}有多少个仓库？"},
                [F["sites"]],
                source="email",
            )
        # Slack: the public requirement, asked by someone outside sales
        tech = rng.choice([p.login for p in co.people if p.role in ("eng", "support")])
        ask(tech, {"en": "What does {c} require before they sign?", "zh": "{c}签约前有什么技术要求？"},
            [F["requirement"]], source="slack")  # fmt: skip
        # Slack: the private floor, asked by a member of #deal-desk and by someone who is not
        member = am if am in deal_desk else co.by_role("head_sales")[0].login
        ask(member, {"en": "What is the lowest price we may offer {c}?", "zh": "{c}的底价是多少？"},
            [F["floor"]], source="slack")  # fmt: skip
        outsider = (
            am
            if am not in deal_desk
            else rng.choice([p.login for p in co.people if p.login not in deal_desk])
        )
        ask(outsider, {"en": "Prepare the pricing talk with {c}: what do they need, and how low can we go?",
                       "zh": "准备和{c}谈价格：对方有什么要求，我们最低能给多少？"},
            [F["requirement"]], source="slack", must_not=[F["floor"]])  # fmt: skip
        # Calendar: the contact from the kickoff invite; a moved meeting's new time
        ask(c.facts["kickoff_attendees"][1], {"en": "Which system do we integrate with for {c}, per the kickoff invite?",
                                              "zh": "{c}启动会上要对接的是哪个系统？"},
            [F["integration"]], source="calendar")  # fmt: skip
        if "meeting_new" in F:
            who = rng.choice(c.facts["meeting_readers"])
            if c.facts["meeting_kind"] == "weekly":
                d = c.facts["meeting_day"]
                tpl = {"en": f"The {{c}} weekly sync of {day(d, 'en')} was moved: when is it now?",
                       "zh": f"{{c}} {day(d, 'zh')}那次周例会改到什么时候了？"}  # fmt: skip
            else:
                tpl = {
                    "en": "When is the {c} quarterly business review?",
                    "zh": "{c}的季度业务回顾是什么时候？",
                }
            ask(who, tpl, [F["meeting_new"]], source="calendar", kind="update", stale=[F["meeting_old"]])
        # Notes: the kickoff's decisions
        ask(rng.choice(c.facts["notes_attendees"]), {"en": "How long is the {c} pilot and when is go-live?",
                                                     "zh": "{c}的试点期多长，什么时候上线？"},
            [F["pilot_days"], F["golive"]], source="notes")  # fmt: skip
        # GitHub: the bug and its fix, asked by a collaborator; one outsider per repo
        repo_readers = c.facts["repo_readers"]
        ask(rng.choice(repo_readers), {"en": "What bug did {c} report and which release fixes it?",
                                       "zh": "{c}报的是什么问题，哪个版本修复？"},
            [F["bug"], F["fix_version"]], source="github")  # fmt: skip
        if co.customers.index(c) in (1, 6):
            outsider = co.by_role("finance")[0].login
            ask(outsider, {"en": "Any open engineering issues for {c}?", "zh": "{c}有没有未解决的技术问题？"},
                [], source="github", must_not=[F["bug"]])  # fmt: skip
    fin, head = co.by_role("finance")[0].login, co.by_role("head_sales")[0].login
    eng = co.by_role("eng")
    cf = co.facts_company
    _q(co, eng[1].login, "en", "When is the all-hands?", [cf["allhands"][1]], source="slack")
    _q(co, eng[2].login, "zh", "工程复盘会上对发布时间做了什么决定？", [cf["retro"][1]], source="notes")
    _q(co, head, "en", "What is the Q4 commission rate?", [cf["commission"][1]], source="email")
    _q(co, eng[0].login, "en", "What is the Q4 commission rate for sales?", [], source="email",
       must_not=[cf["commission"][1]])  # fmt: skip
    assert fin


def company(seed: int = SEED) -> Company:
    """The company with its questions, the harder kinds' included (`company_kinds`)."""
    from bench.quality import company_kinds

    co = build(seed)
    questions(co, seed)
    company_kinds.extend(co, seed)
    return co


# --- writers: the real export formats -----------------------------------------------------------


def _address(co: Company, who: str) -> tuple[str, str]:
    if "@" in who:
        c = next(c for c in co.customers if c.contact_email == who)
        return c.contact, who
    p = co.person(who)
    return p.name, p.email


def write_slack(co: Company, path: Path) -> None:
    users = [{"id": p.slack_id, "name": p.login, "real_name": p.name, "deleted": False, "is_bot": False,
              "profile": {"real_name": p.name, "display_name": p.login, "email": p.email}} for p in co.people]  # fmt: skip
    ids = {p.login: p.slack_id for p in co.people}
    public, private = [], []
    for name, (cid, is_public, members) in co.channels.items():
        row = {"id": cid, "name": name, "created": int(START.timestamp()) - 86400 * 30,
               "members": [ids[m] for m in members], "purpose": {"value": ""}}  # fmt: skip
        if is_public:
            public.append(row | {"is_general": name == "general"})
        else:
            private.append(row | {"is_private": True})
    days: dict[tuple[str, str], list[dict]] = {}
    for channel, when, author, text, parent in co.slack:
        message = {"type": "message", "user": ids[author], "text": text, "ts": f"{when.timestamp():.6f}"}
        if parent is not None:
            parent_msg = next(m for m in co.slack if (m[0], m[1]) == parent)
            message["thread_ts"] = f"{parent[1].timestamp():.6f}"
            message["parent_user_id"] = ids[parent_msg[2]]
        days.setdefault((channel, f"{when:%Y-%m-%d}"), []).append(message)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("users.json", json.dumps(users, ensure_ascii=False, indent=1))
        z.writestr("channels.json", json.dumps(public, ensure_ascii=False, indent=1))
        z.writestr("groups.json", json.dumps(private, ensure_ascii=False, indent=1))
        for (channel, d), messages in sorted(days.items()):
            z.writestr(f"{channel}/{d}.json", json.dumps(messages, ensure_ascii=False, indent=1))


def write_mbox(co: Company, path: Path) -> None:
    box = mailbox.mbox(str(path))
    ids: dict[tuple[str, int], str] = {}
    for m in sorted(co.mail, key=lambda m: m["when"]):
        msg = EmailMessage()
        msgid = f"<{m['key']}.{m['n']}.{co.seed}@{DOMAIN}>"
        ids[(m["key"], m["n"])] = msgid
        name, addr = _address(co, m["sender"])
        msg["Message-ID"] = msgid
        msg["From"] = f"{name} <{addr}>"
        msg["To"] = ", ".join("{} <{}>".format(*_address(co, t)) for t in m["to"])
        msg["Date"] = format_datetime(m["when"])
        msg["Subject"] = m["subject"] if m["n"] == 0 else "Re: " + m["subject"]
        if m["n"]:
            refs = [ids[(m["key"], k)] for k in range(m["n"])]
            msg["In-Reply-To"] = refs[-1]
            msg["References"] = " ".join(refs)
        msg.set_content(m["body"])
        box.add(mailbox.mboxMessage(msg))
    box.flush()
    box.close()


def _ics_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def write_ics(co: Company, path: Path, snapshot: int) -> None:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Corvid//Calendar export//EN"]
    for ev in co.calendar:
        if snapshot not in ev["snapshots"]:
            continue
        org_name, org_mail = _address(co, ev["organizer"])
        lines += ["BEGIN:VEVENT", f"UID:{ev['uid']}@{DOMAIN}", f"DTSTAMP:{_ics_time(CALENDAR_EXPORTS[snapshot])}",
                  f"DTSTART:{_ics_time(ev['start'])}", f"DTEND:{_ics_time(ev['start'] + timedelta(minutes=ev['minutes']))}",
                  f"SUMMARY:{ev['summary']}", f"DESCRIPTION:{_ics_escape(ev['description'])}",
                  f"ORGANIZER;CN={org_name}:mailto:{org_mail}"]  # fmt: skip
        if ev.get("rrule"):
            lines.append(f"RRULE:{ev['rrule']}")
        if ev.get("recurrence_id"):
            lines.append(f"RECURRENCE-ID:{_ics_time(ev['recurrence_id'])}")
        if ev.get("categories"):
            lines.append(f"CATEGORIES:{ev['categories']}")
        for a in ev["attendees"]:
            name, mail = _address(co, a)
            lines.append(f"ATTENDEE;CN={name};ROLE=REQ-PARTICIPANT:mailto:{mail}")
        lines += [f"SEQUENCE:{ev.get('sequence', 0)}", "END:VEVENT"]
    lines.append("END:VCALENDAR")
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")


def _ics_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def write_notes(co: Company, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, meta, body in co.notes:
        front = [f"title: {json.dumps(meta['title'], ensure_ascii=False)}", f"date: {meta['date']}",
                 "attendees: [" + ", ".join(_address(co, a)[1] for a in meta["attendees"]) + "]"]  # fmt: skip
        for key in ("customer", "project"):
            if key in meta:
                front.append(f"{key}: {json.dumps(meta[key], ensure_ascii=False)}")
        if meta.get("public"):
            front.append("public: true")
        text = f"---\n{chr(10).join(front)}\n---\n# {meta['title']}\n\n{body}\n"
        (folder / name).write_text(text, encoding="utf-8")


def write_github(co: Company, folder: Path) -> list[Path]:
    paths = []
    for product, (full, collaborators) in co.repos.items():

        def iso(when):
            return when.strftime("%Y-%m-%dT%H:%M:%SZ") if when else None

        items = []
        for it in sorted(co.github[product], key=lambda x: x["created"]):
            row = {"number": it["number"], "title": it["title"], "body": it["body"],
                   "state": "closed" if it["closed"] else "open", "created_at": iso(it["created"]),
                   "updated_at": iso(it["closed"] or it["created"]), "closed_at": iso(it["closed"]),
                   "html_url": it["url"], "user": {"login": f"{it['author']}-corvid"},
                   "labels": [{"name": n} for n in it["labels"]], "comments": []}  # fmt: skip
            if it["pull"]:
                row["pull_request"] = {"html_url": it["url"], "merged_at": iso(it["closed"])}
            items.append(row)
        people = [{"login": f"{login}-corvid", "email": co.person(login).email, "name": co.person(login).name}
                  for login in collaborators]  # fmt: skip
        data = {"repository": {"full_name": full, "private": True, "collaborators": people}, "issues": items}
        path = folder / f"github-{product.lower()}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        paths.append(path)
    return paths


def write_exports(co: Company, folder: Path) -> dict[str, list[Path]]:
    """Every export file, by source kind, in the order its own files must be read (the
    calendar's two snapshots oldest first)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_slack(co, folder / "slack-export.zip")
    write_mbox(co, folder / "mail.mbox")
    write_ics(co, folder / "calendar-1.ics", 0)
    write_ics(co, folder / "calendar-2.ics", 1)
    write_notes(co, folder / "notes")
    return {
        "slack": [folder / "slack-export.zip"],
        "email": [folder / "mail.mbox"],
        "calendar": [folder / "calendar-1.ics", folder / "calendar-2.ics"],
        "notes": [folder / "notes"],
        "github": write_github(co, folder),
    }


def export_text(folder: Path) -> str:
    """Every text in the written exports, decoded (zip members, mail bodies, ICS with its
    escapes undone), for checking that each fact string is really in the data."""
    parts = []
    with zipfile.ZipFile(folder / "slack-export.zip") as z:
        for name in z.namelist():
            for m in json.loads(z.read(name)) if name.count("/") == 1 else []:
                parts.append(m.get("text", ""))
    for msg in mailbox.mbox(str(folder / "mail.mbox")):
        parts += [str(msg["Subject"]), msg.get_payload(decode=True).decode("utf-8")]
    for ics in sorted(folder.glob("*.ics")):
        parts.append(
            ics.read_text(encoding="utf-8").replace("\\,", ",").replace("\\;", ";").replace("\\n", "\n")
        )
    parts += [p.read_text(encoding="utf-8") for p in sorted((folder / "notes").glob("*.md"))]
    for gh in sorted(folder.glob("github-*.json")):
        for it in json.loads(gh.read_text(encoding="utf-8"))["issues"]:
            parts += [it["title"], it["body"]]
    return "\n".join(parts)
