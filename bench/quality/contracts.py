"""Set (f): generated contracts in English and Chinese with known clauses, read offline by
`contract_clauses` after a round trip through a PDF (written by `contracts_pdf`, read by
pypdf): clause recall and precision, per clause type and language. And the time from
upload to memories for a 20-page PDF (`--timing`, against the database).

    .venv/bin/python bench/quality/contracts.py                 # recall / precision (no database)
    ALMANAC_DB_NAME=almanac_bench_quality .venv/bin/python bench/quality/contracts.py --timing

A clause counts as found when its type is right and its value is (the date for start, term,
renewal and notice; the amount for fees; the period for payment terms; the jurisdiction for
governing law; the names for parties; termination only needs the clause). Wording varies per
contract (several phrasings of each clause, in both languages), clauses are left out at random,
and each contract carries clauses of other kinds (confidentiality, definitions) that must
yield nothing.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.quality.contracts_pdf import pdf_bytes  # noqa: E402

RESULTS = Path(__file__).with_name("contracts-results.json")
EN_PARTIES = ["Northwind Analytics Ltd.", "Contoso Retail Inc.", "Fabrikam Logistics LLC", "Tailspin Toys Corp.",
              "Litware Software GmbH", "Adatum Health Pty Ltd"]  # fmt: skip
ZH_PARTIES = ["北京星河科技有限公司", "上海云帆信息技术有限公司", "深圳蓝海电子有限公司", "杭州青木网络科技有限公司",
              "成都锦程物流有限公司", "南京明德咨询有限公司"]  # fmt: skip
EN_LAWS = ["England and Wales", "Singapore", "the State of New York", "Ireland"]
ZH_LAWS = ["中华人民共和国", "中华人民共和国香港特别行政区"]
EN_WORDS = {1: "one", 2: "two", 3: "three", 12: "twelve", 15: "fifteen", 24: "twenty-four", 30: "thirty", 36: "thirty-six",
            45: "forty-five", 60: "sixty", 90: "ninety"}  # fmt: skip
ZH_NUM = {1: "一", 2: "两", 3: "三", 10: "十", 12: "十二", 15: "十五", 24: "二十四", 30: "三十", 36: "三十六", 45: "四十五",
          60: "六十", 90: "九十"}  # fmt: skip
EN_FILLER = [
    "Each party shall keep the other party's Confidential Information secret and use it only for this Agreement.",
    "Capitalised terms have the meanings given to them in Schedule 1.",
    "Neither party may assign this Agreement without the prior written consent of the other party.",
    "The Provider shall perform the Services with reasonable skill and care.",
]
ZH_FILLER = [
    "双方应对在合作过程中知悉的对方商业秘密承担保密义务。",
    "未经对方书面同意，任何一方不得转让本合同项下的权利和义务。",
    "乙方应按照本合同约定的标准和要求提供技术服务。",
    "本合同一式两份，双方各执一份，具有同等法律效力。",
]


def _en_date(when: dt.date, rng: random.Random) -> str:
    return rng.choice([when.strftime("%B %-d, %Y"), when.strftime("%-d %B %Y"), when.isoformat()])


def _zh_date(when: dt.date) -> str:
    return f"{when.year}年{when.month}月{when.day}日"


def _terms(rng: random.Random) -> dict:
    start = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(0, 900))
    start = start.replace(day=1) if rng.random() < 0.5 else start
    months = rng.choice([12, 24, 36])
    from dateutil.relativedelta import relativedelta

    end = start + relativedelta(months=months) - dt.timedelta(days=1)
    notice = rng.choice([30, 60, 90])
    return {
        "start": start, "months": months, "end": end, "renewal": rng.random() < 0.75, "notice": notice,
        "fee": rng.choice([48_000, 120_000, 250_000, 1_200_000]), "yearly": rng.random() < 0.6,
        "pay_days": rng.choice([15, 30, 45]), "termination": rng.random() < 0.85,
    }  # fmt: skip


def _gold(t: dict, parties: list[str], law: str, fee: str, pay: str) -> dict:
    gold = {
        "parties": "; ".join(parties), "start_date": t["start"].isoformat(), "term": t["end"].isoformat(),
        "fee": fee, "payment_terms": pay, "governing_law": law,
    }  # fmt: skip
    if t["renewal"]:
        gold["renewal"] = (t["end"] + dt.timedelta(days=1)).isoformat()
        gold["notice"] = (t["end"] - dt.timedelta(days=t["notice"])).isoformat()
    if t["termination"]:
        gold["termination"] = True
    return gold


def _english(rng: random.Random, number: int) -> dict:
    t, (a, b), law = _terms(rng), rng.sample(EN_PARTIES, 2), rng.choice(EN_LAWS)
    years = t["months"] // 12
    span = rng.choice([f"{EN_WORDS[t['months']]} ({t['months']}) months", f"{EN_WORDS[years]} ({years}) year"
                       + ("s" if years > 1 else "")])  # fmt: skip
    term = rng.choice([
        f"This Agreement commences on {_en_date(t['start'], rng)} and continues for an initial term of {span}.",
        f"The Effective Date of this Agreement is {_en_date(t['start'], rng)}. The initial term is {span}.",
        f"This Agreement shall take effect on {_en_date(t['start'], rng)} and shall remain in force until "
        f"{_en_date(t['end'], rng)}.",
    ])  # fmt: skip
    clauses = ["1. Term", term]
    if t["renewal"]:
        days = f"{EN_WORDS[t['notice']]} ({t['notice']}) days'"
        clauses += ["2. Renewal", rng.choice([
            f"This Agreement renews automatically for successive one-year periods unless either party gives at "
            f"least {days} written notice of non-renewal before the end of the then-current term.",
            f"Upon expiry, the term shall be extended automatically by one year unless a party notifies the other "
            f"in writing no later than {t['notice']} days prior to the expiration of the term.",
        ])]  # fmt: skip
    amount = f"USD {t['fee']:,}" if rng.random() < 0.6 else f"EUR {t['fee']:,}"
    yearly = t["yearly"]
    fee_sentence = rng.choice([
        f"Customer shall pay {'an annual' if yearly else 'a one-time'} fee of {amount}.",
        f"The total contract price is {amount}{' per year' if yearly else ''}, exclusive of taxes.",
    ])  # fmt: skip
    pay = rng.choice([
        f"Invoices are payable within {EN_WORDS.get(t['pay_days'], t['pay_days'])} ({t['pay_days']}) days of the "
        "invoice date.",
        f"Payment is due net {t['pay_days']} from receipt of a valid invoice.",
    ])  # fmt: skip
    clauses += ["3. Fees", fee_sentence, "4. Payment", pay, rng.choice(EN_FILLER)]
    if t["termination"]:
        clauses += ["5. Termination", rng.choice([
            "Either party may terminate this Agreement for material breach if the breach is not cured within "
            "thirty (30) days after written notice.",
            "The Customer may terminate this Agreement for convenience upon ninety (90) days' prior written notice.",
        ])]  # fmt: skip
    clauses += [
        "6. Governing Law",
        f"This Agreement is governed by the laws of {law}.",
        rng.choice(EN_FILLER),
    ]
    head = [f"SERVICES AGREEMENT No. {number}",
            f'This Agreement is entered into by and between {a} ("Provider") and {b} ("Customer").']  # fmt: skip
    currency = "usd" if amount.startswith("USD") else "eur"
    fee = f"{t['fee']}·{currency}" + ("/year" if yearly else "")
    gold_law = law.removeprefix("the ")
    return {
        "lang": "en",
        "lines": head + clauses,
        "gold": _gold(t, [a, b], gold_law, fee, f"{t['pay_days']} days"),
    }


def _chinese(rng: random.Random, number: int) -> dict:
    t, (a, b), law = _terms(rng), rng.sample(ZH_PARTIES, 2), rng.choice(ZH_LAWS)
    years = t["months"] // 12
    span = rng.choice([f"{ZH_NUM[years]}年", f"{ZH_NUM[t['months']]}个月"])
    term = rng.choice([
        f"本合同期限为{span}，自{_zh_date(t['start'])}起至{_zh_date(t['end'])}止。",
        f"本合同自{_zh_date(t['start'])}起生效，有效期{span}。",
    ])  # fmt: skip
    lines = [f"技术服务合同（编号：{number}）", f"甲方：{a}", f"乙方：{b}", "第一条 合同期限", term]
    if t["renewal"]:
        lines += ["第二条 续约", rng.choice([
            f"合同期满后自动续期一年，除非任何一方在期满前{ZH_NUM[t['notice']]}日书面通知对方不再续约。",
            f"如任何一方不再续约，应于合同到期前{t['notice']}天以书面形式通知对方，否则本合同自动续期一年。",
        ])]  # fmt: skip
    wan = t["fee"] // 10_000
    shown = f"人民币{wan}万元" if t["fee"] % 10_000 == 0 else f"人民币{t['fee']:,}元"
    fee_sentence = rng.choice([
        f"本合同服务费{'每年' if t['yearly'] else '总额'}为{shown}。",
        f"甲方应向乙方支付{'年度' if t['yearly'] else ''}技术服务费{shown}。",
    ])  # fmt: skip
    days = t["pay_days"]
    pay = rng.choice([f"甲方应在收到乙方发票后{ZH_NUM.get(days, days)}日内付款。",
                      f"甲方应于收到发票之日起{days}天内支付相应款项。"])  # fmt: skip
    lines += ["第三条 费用", fee_sentence, "第四条 付款方式", pay, rng.choice(ZH_FILLER)]
    if t["termination"]:
        lines += ["第五条 合同解除", rng.choice([
            "任何一方严重违约且在收到书面通知后十日内未纠正的，守约方有权解除本合同。",
            "甲方可提前三十日书面通知乙方解除本合同。",
        ])]  # fmt: skip
    lines += ["第六条 适用法律", f"本合同适用{law}法律。", rng.choice(ZH_FILLER)]
    fee = f"{t['fee']}·cny" + ("/year" if t["yearly"] else "")
    pay_text = f"{days} days"
    return {"lang": "zh", "lines": lines, "gold": _gold(t, [a, b], law, fee, pay_text)}


def build(n: int = 40, seed: int = 31) -> list[dict]:
    """`n` contracts, half English, half Chinese, each laid out on 2 pages."""
    rng = random.Random(seed)
    contracts = []
    for number in range(n):
        contract = (_english if number % 2 == 0 else _chinese)(rng, 1000 + number)
        half = len(contract["lines"]) // 2
        contract["pages"] = ["\n".join(contract["lines"][:half]), "\n".join(contract["lines"][half:])]
        contract["title"] = f"contract-{1000 + number}.pdf"
        contracts.append(contract)
    return contracts


def _value(clause: dict):
    return {
        "parties": clause.get("value"), "start_date": clause.get("date"), "term": clause.get("date"),
        "renewal": clause.get("date"), "notice": clause.get("date"), "fee": clause.get("amount"),
        "payment_terms": clause.get("duration"), "governing_law": clause.get("value"), "termination": True,
    }[clause["type"]]  # fmt: skip


def read_pdf(data: bytes) -> list[dict]:
    from pypdf import PdfReader

    pages = PdfReader(io.BytesIO(data)).pages
    return [{"page": number, "text": page.extract_text() or ""} for number, page in enumerate(pages, start=1)]


def evaluate(contracts: list[dict]) -> dict:
    """Clause recall and precision of the offline rules, overall, per language and per type."""
    from skills.builtin.contract_clauses import clauses_offline

    counts: dict[str, dict[str, int]] = {}
    misses = []

    def bump(key: str, field: str) -> None:
        counts.setdefault(key, {"gold": 0, "found": 0, "right": 0})[field] += 1

    for contract in contracts:
        pages = read_pdf(pdf_bytes(contract["pages"], width=80))
        found = clauses_offline({"pages": pages, "title": contract["title"]})
        gold = contract["gold"]
        for kind in gold:
            for key in ("all", contract["lang"], kind):
                bump(key, "gold")
        for clause in found:
            right = clause["type"] in gold and _value(clause) == gold[clause["type"]]
            for key in ("all", contract["lang"], clause["type"]):
                bump(key, "found")
                if right:
                    bump(key, "right")
            if not right:
                misses.append({"title": contract["title"], "type": clause["type"], "got": _value(clause),
                               "want": gold.get(clause["type"])})  # fmt: skip
        missing = set(gold) - {c["type"] for c in found}
        misses += [
            {"title": contract["title"], "type": kind, "got": None, "want": gold[kind]} for kind in missing
        ]
    table = {
        key: {"recall": round(c["right"] / c["gold"], 3) if c["gold"] else None,
              "precision": round(c["right"] / c["found"], 3) if c["found"] else None, **c}
        for key, c in counts.items()
    }  # fmt: skip
    return {"contracts": len(contracts), "clauses": table, "misses": misses[:40]}


def time_upload(*, pages: int = 20, username: str = "contracts-bench", seed: int = 0) -> dict:
    """Seconds from upload to clause memories for a `pages`-page PDF (tasks inline) of the
    contract `seed` draws, in a tenant of its own; the document is deleted afterwards. Needs
    Django set up and a database."""
    from django_q.conf import Conf

    from almanac.services.tenancy import tenant_create
    from almanac.services.users import user_create
    from documents.models import Document
    from documents.services.documents import document_delete, document_upload

    Conf.SYNC = True  # the reading and the skill run inline: the time is the whole way
    tenant = tenant_create(slug="contracts-bench", name="Contracts bench")[0]
    user = (
        user_create(tenant=tenant, username=username, email=f"{username}@example.com")
        if not (tenant.profiles.filter(user__username=username).exists())
        else tenant.profiles.get(user__username=username).user
    )
    contract = build(2, seed=seed)[0]
    body = [line for line in contract["lines"]]
    filler = EN_FILLER * 12
    pages_text = ["\n".join(body[: len(body) // 2] + filler)] + ["\n".join(filler)] * (pages - 2)
    pages_text.append("\n".join(body[len(body) // 2 :] + filler))
    data = pdf_bytes(pages_text, width=90)
    started = time.perf_counter()
    document, _ = document_upload(user=user, data=data, filename=f"bench-{time.time_ns()}.pdf")
    elapsed = time.perf_counter() - started
    document = Document.objects.get(pk=document.pk)
    result = {"pages": document.pages, "characters": document.characters, "bytes": len(data),
              "status": document.status, "seconds": round(elapsed, 3),
              "memories": document_memories_count(document)}  # fmt: skip
    document_delete(document=document, user=user, reason="bench")
    return result


def document_memories_count(document) -> int:
    from documents.services.documents import document_memories

    return document_memories(document=document).count()


def run(quick: bool = False) -> dict:
    """The set's numbers for bench/quality/run.py (no database needed)."""
    return evaluate(build(12 if quick else 40))


def report(result: dict) -> str:
    """The set's lines in bench/quality/run.py's report."""
    table = result["clauses"]
    lines = [f"\n(f) Contract clauses, offline ({result['contracts']} contracts through a PDF)"]
    for key in ("all", "en", "zh", *sorted(k for k in table if k not in ("all", "en", "zh"))):
        row = table[key]
        lines.append(f"  {key:14} recall {row['recall']}  precision {row['precision']}  "
                     f"({row['right']}/{row['gold']} gold, {row['found']} found)")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    import argparse
    import os

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timing", action="store_true", help="also time a 20-page PDF, upload to memories")
    parser.add_argument("--n", type=int, default=40, help="contracts in the set (half zh, half en)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("ALMANAC_DB_NAME", "almanac_bench_quality")
    import django

    django.setup()
    results = {"offline": evaluate(build(args.n))}
    if args.timing:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        time_upload(pages=3)  # warm up: the encoder, the readers
        results["upload_20_pages"] = [time_upload(pages=20) for _ in range(3)]
    print(report(results["offline"]))
    if args.timing:
        print("upload to memories, 20 pages:", json.dumps(results["upload_20_pages"]))
    RESULTS.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
