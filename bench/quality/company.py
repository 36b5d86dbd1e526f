"""Set (c): a small company's exports in the formats the importers read, and the tasks.

Kestrel Systems sells two products (Atlas, Beacon) to five customers (Globex, Initech,
Umbrella Health, 星河汽车, 蓝海银行). `write_exports(folder)` writes a Slack export zip
(public #general, #sales, #eng, #support and the private #finance), an mbox (customer
threads and two private ones), an ICS calendar, a folder of meeting notes and two GitHub
issue exports; `run.py` imports them with the documented `manage.py import_*` commands
and compiles the wiki. TASKS: what each user asks, the strings the answer needs, the
strings that must never reach that user (`private`: data of a container they are not in)
and facts of other customers (`foreign`: off-topic for the task), and the task's entities
(for the context precision proxy).
"""

from __future__ import annotations

import json
import mailbox
import zipfile
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

TENANT = "kestrel"
DOMAIN = "kestrel.example"
# username, display name, department, projects, slack id
PEOPLE = [
    ("anna", "Anna Berg", "Sales", ["Atlas"], "U01ANNA"),
    ("ben", "Ben Okoro", "Finance", [], "U02BEN"),
    ("chenjing", "陈静", "Sales", ["Beacon"], "U03CHEN"),
    ("diego", "Diego Ruiz", "Engineering", ["Atlas"], "U04DIEGO"),
    ("emma", "Emma Novak", "Support", ["Atlas", "Beacon"], "U05EMMA"),
    ("lifei", "李飞", "Engineering", ["Beacon"], "U06LIFEI"),
]
EXTERNAL = {
    "karen": ("Karen Holt", "karen.holt@globex.example"),
    "raj": ("Raj Patel", "raj.patel@initech.example"),
    "lena": ("Dr. Lena Voss", "lena.voss@umbrella-health.example"),
    "zhoutao": ("周涛", "zhoutao@xinghe-auto.example"),
    "liumin": ("刘敏", "liumin@lanhai-bank.example"),
}
ALL = [p[0] for p in PEOPLE]
CHANNELS = {
    # name: (id, public, members, purpose)
    "general": ("C01GEN", True, ALL, "Company-wide announcements"),
    "sales": ("C02SALES", True, ["anna", "chenjing", "ben", "emma"], "Deals and customers"),
    "eng": ("C03ENG", True, ["diego", "lifei", "emma", "anna"], "Engineering: Atlas and Beacon"),
    "support": ("C04SUP", True, ["emma", "diego", "lifei", "anna", "chenjing"], "Customer tickets"),
    "finance": ("G01FIN", False, ["ben", "anna"], "Finance only: prices, floors, margins"),
}
# (channel, day, hour:minute, user, text, thread_parent_index or None)
SLACK = [
    (
        "general",
        "2026-01-05",
        "09:00",
        "ben",
        "Happy new year everyone! Reminder: expense reports for December are due by January 9.",
        None,
    ),
    (
        "general",
        "2026-01-05",
        "09:20",
        "emma",
        "The office Wi-Fi password rotates on the first Monday of every month; check the wiki page.",
        None,
    ),
    (
        "general",
        "2026-01-12",
        "10:00",
        "diego",
        "All-hands on Thursday at 4pm: Atlas 3.2 demo and the Beacon roadmap.",
        None,
    ),
    (
        "general",
        "2026-01-19",
        "08:45",
        "chenjing",
        "下周三上海办公室搬到静安区新址，请大家提前收拾好工位。",
        None,
    ),
    (
        "general",
        "2026-02-02",
        "09:10",
        "ben",
        "Office closed February 16-20 for Lunar New Year in the Shanghai office; Berlin stays open.",
        None,
    ),
    (
        "sales",
        "2026-01-06",
        "11:00",
        "anna",
        "Globex renewal is due March 31. Karen Holt (VP Operations) wants to grow from 250 to 400 seats if SSO with Azure AD lands.",
        None,
    ),
    (
        "sales",
        "2026-01-06",
        "11:05",
        "emma",
        "Globex also had two P2 tickets in December about slow dashboards; both closed.",
        5,
    ),
    (
        "sales",
        "2026-01-08",
        "14:30",
        "anna",
        "Initech signed the Atlas pilot: 40 seats, go-live February 16, champion Raj Patel.",
        None,
    ),
    (
        "sales",
        "2026-01-13",
        "10:15",
        "chenjing",
        "星河汽车 Beacon 项目合同已签，金额120万元，对接人周涛，试点在苏州工厂。",
        None,
    ),
    ("sales", "2026-01-13", "10:20", "chenjing", "他们要求所有数据不出境，必须部署在本地机房。", 8),
    (
        "sales",
        "2026-01-21",
        "16:00",
        "chenjing",
        "蓝海银行 POC 下月启动，对接人刘敏，对方要求通过等保三级测评后才能上线。",
        None,
    ),
    (
        "sales",
        "2026-01-27",
        "09:30",
        "anna",
        "Umbrella Health signed the BAA on January 12; Dr. Lena Voss is our contact. They want Beacon hosted in their own AWS account.",
        None,
    ),
    (
        "sales",
        "2026-02-03",
        "15:00",
        "anna",
        "Initech asked whether the pilot can extend by 30 days because of the CSV export bug.",
        None,
    ),
    (
        "eng",
        "2026-01-07",
        "10:00",
        "diego",
        "Atlas 3.2 is out: faster dashboards, audit log export, and the new permissions screen.",
        None,
    ),
    (
        "eng",
        "2026-01-14",
        "11:30",
        "diego",
        "Azure AD SSO for Globex is scheduled for Atlas 3.3, target date March 1.",
        None,
    ),
    (
        "eng",
        "2026-01-20",
        "13:00",
        "lifei",
        "Beacon 本地化部署方案：双机热备，离线安装包，预计两周完成。",
        None,
    ),
    (
        "eng",
        "2026-01-28",
        "17:20",
        "diego",
        "ATL-212: CSV export truncates at 10,000 rows; Initech hit it. Fix is in review, ships in 3.2.1.",
        None,
    ),
    (
        "eng",
        "2026-02-04",
        "10:40",
        "lifei",
        "Beacon HIPAA audit log is done for Umbrella Health, retention seven years.",
        None,
    ),
    (
        "support",
        "2026-01-15",
        "09:00",
        "emma",
        "Ticket 4471 from Globex: dashboard timeout over 30 seconds on the EU cluster. Workaround: narrow the date range.",
        None,
    ),
    (
        "support",
        "2026-01-22",
        "14:00",
        "emma",
        "蓝海银行 测试环境账号已开通，共10个账号，有效期到3月底。",
        None,
    ),
    (
        "support",
        "2026-02-05",
        "11:00",
        "emma",
        "Umbrella Health reported SAML login loops in Safari; fixed by clearing the old IdP certificate.",
        None,
    ),
    (
        "finance",
        "2026-01-06",
        "12:00",
        "ben",
        "Globex renewal: list $96/seat, floor $80/seat. Below that needs CFO sign-off.",
        None,
    ),
    (
        "finance",
        "2026-01-09",
        "15:00",
        "ben",
        "Initech pilot discount approved at 15%, conditional on a 2-year commitment.",
        None,
    ),
    ("finance", "2026-01-14", "10:00", "anna", "星河汽车 合同毛利率 58%，付款方式 3-3-4。", None),
    ("finance", "2026-01-22", "16:30", "ben", "蓝海银行 报价85万元，底价不低于70万元。", None),
]
# (thread key, subject, [(from, to list, day time, body)])
MAIL = [
    (
        "globex",
        "Globex renewal 2026",
        [
            (
                "anna",
                ["karen"],
                "2026-01-10 09:00",
                "Hi Karen,\n\nAhead of the March 31 renewal: we can include Azure AD SSO in Atlas 3.3 (target March 1). Would 400 seats starting April 1 work for you?\n\nAnna",
            ),
            (
                "karen",
                ["anna"],
                "2026-01-11 15:30",
                "Anna,\n\n400 seats works if SSO is live before the renewal. Our procurement needs the quote by February 20.\n\nKaren Holt\nVP Operations, Globex",
            ),
            (
                "anna",
                ["karen", "ben"],
                "2026-01-12 10:00",
                "Karen, noted: quote by February 20. Ben from our finance team is copied.\n\nAnna",
            ),
        ],
    ),
    (
        "initech",
        "Initech Atlas pilot",
        [
            (
                "anna",
                ["raj"],
                "2026-01-09 11:00",
                "Hi Raj,\n\nWelcome to the Atlas pilot. Go-live is February 16 with 40 seats; training is on February 12.\n\nAnna",
            ),
            (
                "raj",
                ["anna", "diego"],
                "2026-02-02 08:15",
                "Anna, the CSV export stops at 10,000 rows and our finance team needs the full ledger. Can the pilot be extended?\n\nRaj Patel, Initech",
            ),
            (
                "diego",
                ["raj", "anna"],
                "2026-02-03 09:00",
                "Raj, the fix (ATL-212) ships in Atlas 3.2.1 on February 10.\n\nDiego",
            ),
        ],
    ),
    (
        "umbrella",
        "Umbrella Health security review",
        [
            (
                "lena",
                ["anna", "emma"],
                "2026-01-20 13:00",
                "Hello,\n\nFor the Beacon rollout we need the audit log retained for seven years and single-tenant hosting in our AWS account (us-east-2).\n\nDr. Lena Voss, Umbrella Health",
            ),
            (
                "emma",
                ["lena", "anna"],
                "2026-01-21 10:00",
                "Dr. Voss, both are supported; the security review call is on January 29.\n\nEmma",
            ),
        ],
    ),
    (
        "xinghe",
        "星河汽车 Beacon 试点",
        [
            (
                "chenjing",
                ["zhoutao", "lifei"],
                "2026-01-15 10:00",
                "周总您好，\n\nBeacon 试点计划3月15日在苏州工厂上线，李飞负责本地化部署。\n\n陈静",
            ),
            (
                "zhoutao",
                ["chenjing"],
                "2026-01-16 14:00",
                "陈经理，好的。另外我们需要离线升级，工厂网络不能连外网。\n\n周涛",
            ),
        ],
    ),
    (
        "lanhai",
        "蓝海银行 POC",
        [
            (
                "chenjing",
                ["liumin", "emma"],
                "2026-01-23 09:30",
                "刘经理您好，\n\nPOC 定于2月9日启动，测试环境已开通10个账号。\n\n陈静",
            ),
            (
                "liumin",
                ["chenjing"],
                "2026-01-24 11:00",
                "收到。我们的等保三级测评安排在4月，通过后才能上线生产。\n\n刘敏",
            ),
        ],
    ),
    (
        "floor",
        "Globex floor price",
        [
            (
                "ben",
                ["anna"],
                "2026-01-13 17:00",
                "Anna, for Globex do not go below $80/seat; at 400 seats we could offer $85 as a volume price.\n\nBen",
            ),
        ],
    ),
    (
        "salary",
        "Your compensation review",
        [
            (
                "ben",
                ["emma"],
                "2026-02-06 12:00",
                "Emma, your salary adjustment of 6% is effective April 1. Please keep this confidential.\n\nBen",
            ),
        ],
    ),
]
# uid, summary, description, start, end, organizer, attendees, categories
CALENDAR = [
    (
        "globex-renewal-call",
        "Globex renewal call",
        "Renewal terms, 400 seats, SSO timeline with Karen Holt.",
        "20260310T150000Z",
        "20260310T160000Z",
        "anna",
        ["ben", "karen"],
        "customer:Globex,project:Atlas",
    ),
    (
        "initech-golive",
        "Initech go-live review",
        "Atlas pilot go-live check with Raj Patel.",
        "20260216T140000Z",
        "20260216T150000Z",
        "anna",
        ["diego", "raj"],
        "customer:Initech,project:Atlas",
    ),
    (
        "umbrella-security",
        "Umbrella Health security review",
        "HIPAA audit log, hosting in their AWS account.",
        "20260129T170000Z",
        "20260129T180000Z",
        "emma",
        ["anna", "lena"],
        "customer:Umbrella Health,project:Beacon",
    ),
    (
        "xinghe-onsite",
        "星河汽车 苏州工厂现场部署",
        "Beacon 本地化部署与离线安装。",
        "20260310T010000Z",
        "20260312T090000Z",
        "lifei",
        ["chenjing", "zhoutao"],
        "customer:星河汽车,project:Beacon",
    ),
    (
        "lanhai-poc",
        "蓝海银行 POC 启动会",
        "POC 范围、测试账号、等保三级计划。",
        "20260209T020000Z",
        "20260209T030000Z",
        "chenjing",
        ["emma", "liumin"],
        "customer:蓝海银行,project:Beacon",
    ),
]
NOTES = {
    "2026-01-16-atlas-roadmap.md": (
        {
            "title": "Atlas roadmap Q1",
            "date": "2026-01-16",
            "attendees": ["diego", "anna", "emma"],
            "project": "Atlas",
            "public": True,
        },
        "- Atlas 3.2.1 (February 10): ATL-212 CSV export fix.\n- Atlas 3.3 (March 1): Azure AD SSO, needed for the Globex renewal.\n- Atlas 3.4 (May): scheduled reports.",
    ),
    "2026-01-29-umbrella-security-review.md": (
        {
            "title": "Umbrella Health security review",
            "date": "2026-01-29",
            "attendees": ["emma", "anna", "lena"],
            "customer": "Umbrella Health",
            "project": "Beacon",
        },
        "Dr. Lena Voss confirmed: audit log retention seven years, hosting in Umbrella's AWS account us-east-2, quarterly access reviews. Next step: penetration test report by February 27.",
    ),
    "2026-01-18-xinghe-kickoff.md": (
        {
            "title": "星河汽车 Beacon 启动会纪要",
            "date": "2026-01-18",
            "attendees": ["chenjing", "lifei", "zhoutao"],
            "customer": "星河汽车",
            "project": "Beacon",
        },
        "1. 试点范围：苏州工厂两条产线。\n2. 部署方式：本地机房，双机热备，离线升级。\n3. 上线时间：3月15日。\n4. 验收标准：连续运行30天无故障。",
    ),
    "2026-02-04-q1-pipeline.md": (
        {"title": "Q1 pipeline review (finance)", "date": "2026-02-04", "attendees": ["ben", "anna"]},
        "Q1 forecast $1.9M. Globex renewal at $85/seat volume price is the largest deal; Initech discount 15% conditional on a 2-year term.",
    ),
}
GITHUB = {
    "atlas": (
        {"full_name": "kestrel/atlas", "private": True, "collaborators": ["diego", "lifei", "anna", "emma"]},
        [
            (
                212,
                "CSV export truncates at 10,000 rows",
                "Initech's ledger export stops at 10,000 rows. Fix: stream the export in pages.",
                "closed",
                "2026-01-28T17:00:00Z",
                "2026-02-10T12:00:00Z",
                "diego",
                ["customer:Initech", "project:Atlas"],
            ),
            (
                230,
                "Azure AD SSO (SAML) for Globex",
                "Globex requires Azure AD single sign-on before the March 31 renewal. Target: Atlas 3.3 on March 1.",
                "open",
                "2026-01-14T11:00:00Z",
                "2026-02-05T09:00:00Z",
                "diego",
                ["customer:Globex", "project:Atlas"],
            ),
            (
                241,
                "Dashboard timeout on the EU cluster",
                "Globex dashboards time out after 30 seconds for ranges over 90 days. Add query caching.",
                "open",
                "2026-01-15T10:00:00Z",
                "2026-01-30T10:00:00Z",
                "emma",
                ["customer:Globex", "project:Atlas"],
            ),
        ],
    ),
    "beacon": (
        {
            "full_name": "kestrel/beacon",
            "private": True,
            "collaborators": ["lifei", "diego", "chenjing", "emma"],
        },
        [
            (
                57,
                "离线安装包（星河汽车）",
                "星河汽车工厂网络不能连外网，需要离线安装和离线升级包。",
                "open",
                "2026-01-16T15:00:00Z",
                "2026-02-01T10:00:00Z",
                "lifei",
                ["customer:星河汽车", "project:Beacon"],
            ),
            (
                61,
                "HIPAA audit log retention",
                "Umbrella Health needs audit logs retained for seven years.",
                "closed",
                "2026-01-21T12:00:00Z",
                "2026-02-04T10:00:00Z",
                "lifei",
                ["customer:Umbrella Health", "project:Beacon"],
            ),
            (
                66,
                "等保三级整改项",
                "蓝海银行 等保三级测评前需完成：日志审计、双因素登录、数据库加密。",
                "open",
                "2026-01-25T09:00:00Z",
                "2026-02-06T09:00:00Z",
                "lifei",
                ["customer:蓝海银行", "project:Beacon"],
            ),
        ],
    ),
}

# Strings that belong to one customer only (for `foreign`: facts of other customers).
CUSTOMER_FACTS = {
    "Globex": ["Karen Holt", "400 seats", "Azure AD"],
    "Initech": ["Raj Patel", "ATL-212", "10,000 rows"],
    "Umbrella Health": ["Lena Voss", "us-east-2", "seven years"],
    "星河汽车": ["周涛", "苏州工厂", "120万元"],
    "蓝海银行": ["刘敏", "等保三级", "10个账号"],
}
ALIASES = {
    "Globex": ["Globex", "Karen Holt"],
    "Initech": ["Initech", "Raj Patel"],
    "Umbrella Health": ["Umbrella", "Lena Voss"],
    "星河汽车": ["星河汽车", "Xinghe", "周涛"],
    "蓝海银行": ["蓝海银行", "Lanhai", "刘敏"],
    "Atlas": ["Atlas"],
    "Beacon": ["Beacon"],
}
PRIVATE_FINANCE = ["$80/seat", "15%", "58%", "70万元", "底价", "$85", "1.9M"]
PRIVATE_SALARY = ["6%", "salary adjustment"]


def _task(user, task, needs, customers=(), private=(), entities=None):
    foreign = [f for c, facts in CUSTOMER_FACTS.items() if c not in customers for f in facts if customers]
    ents = entities if entities is not None else [a for c in customers for a in ALIASES.get(c, [c])]
    return {
        "user": user,
        "task": task,
        "needs": list(needs),
        "private": list(private),
        "foreign": foreign,
        "entities": ents,
    }


TASKS = [
    # Globex
    _task(
        "anna",
        "Prepare for the Globex renewal call: what do they want and by when?",
        ["March 31", "400 seats", "Azure AD"],
        ["Globex"],
    ),
    _task(
        "anna",
        "Who is our contact at Globex and what is her title?",
        ["Karen Holt", "VP Operations"],
        ["Globex"],
    ),
    _task("anna", "When does Globex procurement need our quote?", ["February 20"], ["Globex"]),
    _task("anna", "What is the lowest per-seat price I can offer Globex?", ["$80"], ["Globex"]),
    _task(
        "diego",
        "What pricing did finance set for the Globex renewal?",
        [],
        ["Globex"],
        private=PRIVATE_FINANCE[:2],
    ),
    _task("diego", "When is Azure AD SSO for Globex due?", ["March 1", "Atlas 3.3"], ["Globex"]),
    _task(
        "emma",
        "Summarize open Globex support issues",
        ["30 seconds", "date range"],
        ["Globex"],
        private=PRIVATE_FINANCE[:2],
    ),
    _task(
        "chenjing",
        "Globex 续约需要我们在什么时候前交付单点登录？",
        ["Azure AD", "March 1"],
        ["Globex"],
        private=PRIVATE_FINANCE[:2],
    ),
    _task("ben", "Draft the Globex renewal quote: seats and volume price", ["400 seats", "$85"], ["Globex"]),
    # Initech
    _task(
        "anna",
        "Initech wants to extend the pilot. What is the background?",
        ["10,000 rows", "February 16"],
        ["Initech"],
    ),
    _task(
        "diego",
        "What bug did Initech hit and when does the fix ship?",
        ["ATL-212", "3.2.1", "February 10"],
        ["Initech"],
    ),
    _task(
        "emma",
        "How many seats is the Initech pilot and who is the champion?",
        ["40 seats", "Raj Patel"],
        ["Initech"],
        private=["15%"],
    ),
    _task("lifei", "Initech 的 CSV 导出问题修好了吗？", ["ATL-212", "3.2.1"], ["Initech"], private=["15%"]),
    _task(
        "anna",
        "What discount did finance approve for Initech and on what condition?",
        ["15%", "2-year"],
        ["Initech"],
    ),
    _task("diego", "When is the Initech go-live review?", ["February 16"], ["Initech"], private=["15%"]),
    _task("chenjing", "Initech 试点什么时候上线？", ["February 16"], ["Initech"], private=["15%"]),
    # Umbrella Health
    _task(
        "emma",
        "What did Umbrella Health require in the security review?",
        ["seven years", "us-east-2"],
        ["Umbrella Health"],
    ),
    _task(
        "lifei",
        "How long must Beacon keep audit logs for Umbrella Health?",
        ["seven years"],
        ["Umbrella Health"],
    ),
    _task(
        "anna",
        "When did Umbrella Health sign the BAA and who is the contact?",
        ["January 12", "Lena Voss"],
        ["Umbrella Health"],
    ),
    _task(
        "emma",
        "Umbrella Health users get a SAML login loop in Safari, what was the fix last time?",
        ["IdP certificate"],
        ["Umbrella Health"],
    ),
    _task(
        "diego",
        "What is the next step after the Umbrella Health security review?",
        ["penetration test", "February 27"],
        ["Umbrella Health"],
    ),
    _task("chenjing", "Umbrella Health 的 Beacon 部署在哪里？", ["AWS"], ["Umbrella Health"]),
    # 星河汽车
    _task("chenjing", "星河汽车的合同金额和对接人是谁？", ["120万元", "周涛"], ["星河汽车"]),
    _task("lifei", "星河汽车 Beacon 试点什么时候上线，部署有什么要求？", ["3月15日", "离线"], ["星河汽车"]),
    _task("chenjing", "星河汽车试点的验收标准是什么？", ["30天"], ["星河汽车"]),
    _task("anna", "What margin do we make on the Xinghe Motors (星河汽车) contract?", ["58%"], ["星河汽车"]),
    _task(
        "emma",
        "What are the deployment constraints for 星河汽车?",
        ["本地机房"],
        ["星河汽车"],
        private=["58%"],
    ),
    _task(
        "lifei", "帮我准备星河汽车苏州工厂现场部署的清单", ["双机热备", "离线"], ["星河汽车"], private=["58%"]
    ),
    _task(
        "diego",
        "Is the offline installer for the Xinghe factory done?",
        ["离线安装"],
        ["星河汽车"],
        private=["58%"],
    ),
    # 蓝海银行
    _task(
        "chenjing",
        "蓝海银行 POC 什么时候启动，对方上线前有什么要求？",
        ["2月9日", "等保三级"],
        ["蓝海银行"],
        private=["70万元", "底价"],
    ),
    _task(
        "lifei",
        "蓝海银行等保三级之前我们还要完成哪些整改？",
        ["双因素", "数据库加密"],
        ["蓝海银行"],
        private=["70万元", "底价"],
    ),
    _task(
        "emma",
        "蓝海银行测试账号有几个，什么时候到期？",
        ["10个账号", "3月底"],
        ["蓝海银行"],
        private=["70万元", "底价"],
    ),
    _task("ben", "蓝海银行的报价和底价分别是多少？", ["85万元", "70万元"], ["蓝海银行"]),
    _task(
        "anna", "When is Lanhai Bank's (蓝海银行) security certification scheduled?", ["4月"], ["蓝海银行"]
    ),
    # Products and company
    _task(
        "emma",
        "What shipped in Atlas 3.2?",
        ["audit log export", "permissions screen"],
        entities=["Atlas 3.2"],
    ),
    _task(
        "anna",
        "What is on the Atlas roadmap for this quarter?",
        ["3.2.1", "Azure AD", "scheduled reports"],
        entities=["Atlas"],
    ),
    _task(
        "diego", "Beacon 本地化部署方案是什么？", ["双机热备", "离线安装包"], entities=["Beacon", "本地化"]
    ),
    _task(
        "lifei",
        "When is the Shanghai office closed for Lunar New Year?",
        ["February 16-20"],
        entities=["Lunar New Year", "Shanghai"],
    ),
    _task("chenjing", "上海办公室搬到哪里了？", ["静安区"], entities=["上海办公室", "静安"]),
    _task("anna", "When are December expense reports due?", ["January 9"], entities=["expense"]),
    _task(
        "ben",
        "What is the Q1 forecast and the largest deal?",
        ["$1.9M", "Globex"],
        entities=["Q1", "forecast"],
    ),
    _task(
        "anna", "What is Emma's salary adjustment?", [], entities=["Emma", "salary"], private=PRIVATE_SALARY
    ),
    _task("emma", "When is my salary adjustment effective?", ["6%", "April 1"], entities=["salary"]),
    _task(
        "diego", "What is the Q1 sales forecast?", [], entities=["Q1", "forecast"], private=["1.9M", "$85"]
    ),
]
# Tasks with nothing in the company's data: the context should be empty (with a warning).
NOTHING_TASKS = [
    _task("anna", "Draft the renewal proposal for Vercel", [], entities=["Vercel"]),
    _task("chenjing", "华为的私有化部署进展如何？", [], entities=["华为"]),
    _task("diego", "ZZQX-nothing-qqq xylophone quasar", [], entities=[]),
]


def _email(username: str) -> tuple[str, str]:
    if username in EXTERNAL:
        return EXTERNAL[username]
    person = next(p for p in PEOPLE if p[0] == username)
    return person[1], f"{username}@{DOMAIN}"


def _ts(day: str, hhmm: str) -> float:
    return datetime.fromisoformat(f"{day}T{hhmm}:00+00:00").timestamp()


def write_slack(path: Path) -> None:
    users = [
        {"id": sid, "name": u, "real_name": name, "deleted": False, "is_bot": False,
         "profile": {"real_name": name, "display_name": u, "email": f"{u}@{DOMAIN}"}}
        for u, name, _, _, sid in PEOPLE
    ]  # fmt: skip
    ids = {p[0]: p[4] for p in PEOPLE}
    public, private = [], []
    for name, (cid, is_public, members, purpose) in CHANNELS.items():
        row = {"id": cid, "name": name, "created": 1767225600, "members": [ids[m] for m in members],
               "purpose": {"value": purpose}}  # fmt: skip
        (public if is_public else private).append(
            row | ({"is_general": name == "general"} if is_public else {"is_private": True})
        )
    days: dict[tuple[str, str], list[dict]] = {}
    for channel, day, hhmm, user, text, parent in SLACK:
        ts = f"{_ts(day, hhmm):.6f}"
        message = {"type": "message", "user": ids[user], "text": text, "ts": ts}
        if parent is not None:
            p = SLACK[parent]
            message["thread_ts"] = f"{_ts(p[1], p[2]):.6f}"
            message["parent_user_id"] = ids[p[3]]
        days.setdefault((channel, day), []).append(message)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("users.json", json.dumps(users, ensure_ascii=False, indent=1))
        z.writestr("channels.json", json.dumps(public, ensure_ascii=False, indent=1))
        z.writestr("groups.json", json.dumps(private, ensure_ascii=False, indent=1))
        for (channel, day), messages in sorted(days.items()):
            z.writestr(f"{channel}/{day}.json", json.dumps(messages, ensure_ascii=False, indent=1))


def write_mbox(path: Path) -> None:
    box = mailbox.mbox(str(path))
    for key, subject, messages in MAIL:
        root = None
        refs: list[str] = []
        for i, (sender, to, when, body) in enumerate(messages):
            msg = EmailMessage()
            msgid = make_msgid(idstring=f"{key}{i}", domain=DOMAIN)
            name, addr = _email(sender)
            msg["Message-ID"] = msgid
            msg["From"] = f"{name} <{addr}>"
            msg["To"] = ", ".join(f"{_email(t)[0]} <{_email(t)[1]}>" for t in to)
            msg["Date"] = format_datetime(datetime.fromisoformat(when).replace(tzinfo=UTC))
            msg["Subject"] = subject if i == 0 else f"Re: {subject}"
            if root:
                msg["In-Reply-To"] = refs[-1]
                msg["References"] = " ".join(refs)
            msg.set_content(body)
            box.add(mailbox.mboxMessage(msg))
            root = root or msgid
            refs.append(msgid)
    box.flush()
    box.close()


def write_ics(path: Path) -> None:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Kestrel//Almanac bench//EN"]
    for uid, summary, description, start, end, organizer, attendees, categories in CALENDAR:
        org_name, org_mail = _email(organizer)
        lines += [
            "BEGIN:VEVENT", f"UID:{uid}@{DOMAIN}", "DTSTAMP:20260101T000000Z", f"DTSTART:{start}", f"DTEND:{end}",
            f"SUMMARY:{summary}", f"DESCRIPTION:{description}", f"CATEGORIES:{categories}",
            f"ORGANIZER;CN={org_name}:mailto:{org_mail}",
        ]  # fmt: skip
        for a in attendees:
            name, mail = _email(a)
            lines.append(f"ATTENDEE;CN={name}:mailto:{mail}")
        lines += ["SEQUENCE:0", "END:VEVENT"]
    lines.append("END:VCALENDAR")
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")


def write_notes(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, (meta, body) in NOTES.items():
        front = [f"title: {meta['title']}", f"date: {meta['date']}",
                 "attendees: [" + ", ".join(_email(a)[1] for a in meta["attendees"]) + "]"]  # fmt: skip
        for field in ("customer", "project"):
            if field in meta:
                front.append(f"{field}: {meta[field]}")
        if meta.get("public"):
            front.append("public: true")
        (folder / name).write_text("---\n" + "\n".join(front) + "\n---\n" + body + "\n", encoding="utf-8")


def write_github(folder: Path) -> list[Path]:
    paths = []
    for name, (repo, issues) in GITHUB.items():
        collaborators = [
            {"login": f"{u}-kestrel", "email": f"{u}@{DOMAIN}", "name": _email(u)[0]}
            for u in repo["collaborators"]
        ]
        out = []
        for number, title, body, state, created, updated, author, labels in issues:
            out.append(
                {"number": number, "title": title, "body": body, "state": state, "created_at": created,
                 "updated_at": updated, "closed_at": updated if state == "closed" else None,
                 "html_url": f"https://github.com/{repo['full_name']}/issues/{number}",
                 "user": {"login": f"{author}-kestrel"}, "labels": [{"name": n} for n in labels], "comments": []}
            )  # fmt: skip
        path = folder / f"github-{name}.json"
        data = {
            "repository": {
                "full_name": repo["full_name"],
                "private": repo["private"],
                "collaborators": collaborators,
            },
            "issues": out,
        }
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        paths.append(path)
    return paths


def write_exports(folder: Path) -> dict[str, list[Path]]:
    """Every export file, by the import command that reads it."""
    folder.mkdir(parents=True, exist_ok=True)
    write_slack(folder / "slack-export.zip")
    write_mbox(folder / "mail.mbox")
    write_ics(folder / "calendar.ics")
    write_notes(folder / "notes")
    return {
        "import_slack": [folder / "slack-export.zip"],
        "import_mbox": [folder / "mail.mbox"],
        "import_ics": [folder / "calendar.ics"],
        "import_notes": [folder / "notes"],
        "import_github": write_github(folder),
    }
