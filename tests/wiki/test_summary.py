"""Page summaries: one per set of sections a reader sees, made from those sections only."""

import pytest

from almanac.models import AccessGroup
from almanac.services.tenancy import membership_remove
from skills.services import SkillOutput
from tests.wiki.conftest import slack
from wiki.models import Page, PageSection, PageSummary
from wiki.services.summary import page_summarize, page_summary_for_reader

PRIVATE = ("30%", "22%", "margin")  # what only bob's #finance-internal section says


def _stored_summaries_say_only_their_sections(page) -> None:
    """No stored summary holds a word of a section outside its set (`PRIVATE` is one's)."""
    private_ids = {s.pk for s in PageSection.objects.filter(page=page, container_key="slack:channel:C200")}
    for row in PageSummary.objects.filter(page=page):
        if not private_ids & set(row.section_ids):
            assert not any(word in row.summary for word in PRIVATE), row.summary


def test_every_reader_gets_a_summary_of_the_sections_they_see(api, vercel_world, alice, bob, charlie):
    page = Page.objects.get(slug="vercel")
    summaries = {
        u: api.get("/wiki/pages/vercel", user=u).json()["summary"] for u in ("alice", "bob", "charlie")
    }
    assert "SSO" in summaries["alice"] and not any(w in summaries["alice"] for w in PRIVATE)
    assert summaries["charlie"] == summaries["alice"]  # the same sections: the same summary
    assert "SSO" in summaries["bob"] and "22%" in summaries["bob"]
    # one stored summary per set of sections: alice and charlie share theirs, bob has his own
    assert PageSummary.objects.filter(page=page).count() == 2
    _stored_summaries_say_only_their_sections(page)


def test_a_reader_who_loses_a_section_gets_a_summary_without_it_at_once(api, vercel_world, bob):
    assert "22%" in api.get("/wiki/pages/vercel", user="bob").json()["summary"]
    membership_remove(user=bob, group=AccessGroup.objects.get(key="slack:channel:C200"))
    summary = api.get("/wiki/pages/vercel", user="bob").json()["summary"]
    assert "SSO" in summary and not any(word in summary for word in PRIVATE)
    _stored_summaries_say_only_their_sections(Page.objects.get(slug="vercel"))


def test_a_changed_section_gives_a_new_summary_and_the_old_one_is_dropped(api, vercel_world, push, alice):
    page = Page.objects.get(slug="vercel")
    api.get("/wiki/pages/vercel", user="alice")
    before = set(PageSummary.objects.filter(page=page).values_list("id", flat=True))
    push(slack("Vercel signed the renewal contract", tags={"customer": "Vercel"}, minutes=50))
    assert "signed" in api.get("/wiki/pages/vercel", user="alice").json()["summary"]
    page_summarize(page_id=page.pk)  # as after the compile: drops what no reader sees any more
    assert not before & set(PageSummary.objects.filter(page=page).values_list("id", flat=True))
    assert page_summarize(page_id=page.pk) is False  # nothing left to drop


def test_a_channel_made_private_leaves_no_stored_summary_of_its_old_readers(api, vercel_world, push, alice):
    page = Page.objects.get(slug="vercel")
    assert "SSO" in api.get("/wiki/pages/vercel", user="alice").json()["summary"]
    (public_only,) = PageSummary.objects.filter(page=page).values_list("id", flat=True)
    push(slack("Vercel renewal follow-up", channel="C100", public=False, members=["bob@acme.com"],
               tags={"customer": "Vercel"}, minutes=60))  # fmt: skip
    assert api.get("/wiki/pages/vercel", user="alice").status_code == 404
    page_summarize(page_id=page.pk)  # its sections' readers changed: alice's summary goes
    assert not PageSummary.objects.filter(id=public_only).exists()


def test_summaries_off_show_none(api, vercel_world, settings):
    settings.WIKI_SUMMARY_ENABLED = False
    assert api.get("/wiki/pages/vercel", user="bob").json()["summary"] == ""


def test_the_llm_rewrites_a_summary_off_the_request_path_and_only_if_it_keeps_the_facts(
    api, vercel_world, alice, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from wiki.services import summary as page_summary

    page = Page.objects.get(slug="vercel")
    settings.LLM_BASE_URL = "http://llm.invalid/v1"
    monkeypatch.setattr(page_summary, "summaries_enqueue", lambda ids: None)  # run below instead
    offline = api.get("/wiki/pages/vercel", user="alice").json()["summary"]
    (row,) = PageSummary.objects.filter(page=page)
    assert row.method == "offline" and row.summary == offline
    seen = []

    def skill(**kwargs):
        seen.append(kwargs["input"]["text"])
        return SkillOutput({"summary": "Vercel: renewal call went well; they want SSO."}, used_llm=True)

    monkeypatch.setattr(page_summary, "skill_run", skill)
    assert page_summarize(page_id=page.pk) is True
    row.refresh_from_db()
    assert (
        row.method == "llm" and api.get("/wiki/pages/vercel", user="alice").json()["summary"] == row.summary
    )
    assert seen and not any(word in text for text in seen for word in PRIVATE)  # only alice's sections


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_web_page_shows_the_readers_own_summary(client, tenant, alice, bob, push, lang):
    words = {"en": ("Vercel wants SSO by March", "margin floor is 22%"),
             "zh": ("Vercel希望三月前上线单点登录", "底价毛利22%")}[lang]  # fmt: skip
    push(slack(words[0], tags={"customer": "Vercel"}))
    push(slack(words[1], channel="C200", name="#finance-internal", public=False, members=["bob@acme.com"],
               tags={"customer": "Vercel"}, minutes=5))  # fmt: skip
    client.force_login(alice)
    body = client.get("/wiki/vercel/").content.decode()
    assert words[0] in body and "22%" not in body
    client.force_login(bob)
    body = client.get("/wiki/vercel/").content.decode()
    assert body.count("22%") >= 2  # the section and the summary


# --- the newest facts survive (wiki.services.summary, almanac.text.statements) -------------------

import random  # noqa: E402

from wiki.services import summary as page_summary  # noqa: E402


def test_summary_keeps_the_newest_amount_with_date_and_author_and_marks_it_current(vercel_world, push, alice):
    push(
        slack("Vercel quote: $195k/yr", tags={"customer": "Vercel"}, author="bob@acme.com", minutes=-60 * 24)
    )
    push(slack("Vercel agreed to $172,000 per year for 3 years", tags={"customer": "Vercel"}, minutes=60))
    for n in range(25):  # chatter that would crowd the facts out of a plain extractive summary
        push(slack(f"Thanks, see you at lunch number {n} with the Vercel folks", tags={"customer": "Vercel"}))
    summary = page_summary_for_reader(user=alice, page=Page.objects.get(slug="vercel"))
    line = next(x for x in summary.splitlines() if "$172,000 per year" in x)
    assert "(current, 2026-11-30, alice) — was $195k/yr (2026-11-29, bob)" in line
    assert "3 years" in line
    assert all("$195k/yr" not in x for x in summary.splitlines() if x != line)


def test_chinese_summary_marks_the_current_value():
    contents = [
        "[2026-10-01] bob@acme.com: 华为报价为每年30万元。谢谢大家\n"
        "[2026-11-03] 王伟: 华为同意每年28万元，合同期限三年。\n[2026-11-04] 李娜: 好的，收到"
    ]
    text = page_summary.facts_summary(title="华为", contents=contents, max_tokens=200)
    line = next(x for x in text.splitlines() if "28万元" in x)
    assert "（当前，2026-11-03，王伟）— 此前：30万元（2026-10-01，bob）" in line
    assert "三年" in line


def test_an_older_value_restated_later_is_the_current_one():
    contents = [
        "[2026-10-01] a: Price is $100k/yr.\n[2026-10-02] b: Price is $90k/yr.\n[2026-10-03] c: Price is $100k/yr."
    ]
    text = page_summary.facts_summary(title="Acme", contents=contents, max_tokens=200)
    assert text.splitlines()[0].startswith("- Price is $100k/yr. (current, 2026-10-03, c) — was $90k/yr")


def test_closed_issue_and_owner_are_facts():
    contents = [
        "[2026-10-01] bob: Globex SSO: please enable SAML [closed]\n"
        "[2026-10-02] bob: Owner is Bob.\n[2026-10-09] ann: Owner is now Alice."
    ]
    text = page_summary.facts_summary(title="Globex", contents=contents, max_tokens=200)
    assert "- Globex SSO: please enable SAML [closed] (2026-10-01, bob)" in text
    assert "- Owner is now Alice. (current, 2026-10-09, ann) — was Bob (2026-10-02, bob)" in text


FILLER_EN = ["Thanks, talk soon!", "Lunch was great, see you next week.", "I will share the deck later today.",
             "Can someone book a room?", "Great call everyone.", "Notes are in the shared doc."]  # fmt: skip
FILLER_ZH = ["好的，收到。", "谢谢大家！", "会议纪要已经发到群里。", "下午我再跟进一下。", "大家辛苦了。"]


def generated_page(seed: int) -> tuple[str, list[str], list[tuple[str, str, str]], list[str]]:
    """A customer page: (title, section contents, the newest values as (shown, date, author),
    the older values they replaced). English pages even, Chinese odd; facts and chatter
    shuffled over three sections, each line dated."""
    rng = random.Random(seed)
    zh = seed % 2 == 1
    name = f"客户{seed}" if zh else f"Customer{seed}"
    days = iter(sorted(rng.sample(range(1, 28), 9)))
    people = ["alice", "bob", "carol", "dave", "王伟", "李娜"]
    old, new = rng.randrange(100, 200), rng.randrange(200, 300)
    owners = (
        rng.sample(["Alice", "Bob", "Carol", "Dave"], 2)
        if not zh
        else rng.sample(["张敏", "刘洋", "陈静"], 2)
    )
    years, discount = rng.randrange(2, 5), rng.randrange(5, 30)

    def line(text):
        return (f"[2026-11-{next(days):02d}]", rng.choice(people), text)

    if zh:
        facts = [
            line(f"{name}报价为每年{old}万元。"),
            line(f"负责人是{owners[0]}。"),
            line(f"{name}同意每年{new}万元。"),
            line(f"合同期限{years}年。"),
            line(f"负责人改为{owners[1]}。"),
            line(f"客户要求{discount}%的折扣。"),
            line(f"续约日期：12月{years + 10}日。"),
        ]
        newest = [f"{new}万元", owners[1], f"{years}年", f"{discount}%", f"12月{years + 10}日"]
        older = [f"{old}万元", owners[0]]
    else:
        facts = [
            line(f"{name} quote: ${old}k/yr."),
            line(f"Owner is {owners[0]}."),
            line(f"{name} agreed to ${new},000 per year."),
            line(f"Contract term: {years} years."),
            line(f"Owner is now {owners[1]}."),
            line(f"They asked for a {discount}% discount."),
            line(f"Renewal date is 2026-12-{years + 10}."),
        ]
        newest = [
            f"${new},000 per year",
            owners[1],
            f"{years} years",
            f"{discount}%",
            f"2026-12-{years + 10}",
        ]
        older = [f"${old}k/yr", owners[0]]
    chatter = [(f"[2026-11-{d:02d}]", rng.choice(people), rng.choice(FILLER_ZH if zh else FILLER_EN))
               for d in sorted(rng.choices(range(1, 28), k=12))]  # fmt: skip
    lines = facts + chatter
    rng.shuffle(lines)
    sections = ["", "", ""]
    for i, (date, who, text) in enumerate(sorted(lines)):
        sections[i % 3] += f"{date} {who}: {text}\n"
    by_value = {text: (date, who) for date, who, text in facts}
    expected = [(v, *next(dw for t, dw in by_value.items() if v in t)) for v in newest]
    return name, sections, expected, older


def _retention(budget: int) -> tuple[float, int]:
    kept = total = wrong = 0
    for seed in range(20):
        title, contents, expected, older = generated_page(seed)
        text = page_summary.facts_summary(title=title, contents=contents, max_tokens=budget)
        lines = text.splitlines()
        for value, date, who in expected:
            total += 1
            kept += any(value in x and date.strip("[]") in x and who in x for x in lines)
        for value in older:  # an older value only ever as what a newer one replaced
            for x in lines:
                if value in x:
                    before = x.split(value)[0]
                    wrong += not ("— was " in before or "— 此前：" in before)
    return kept / total, wrong


@pytest.mark.parametrize("budget", [200, 300])
def test_newest_facts_survive_summaries_of_generated_pages(budget):
    retention, wrong = _retention(budget)
    assert retention >= 0.95, retention
    assert wrong == 0


def test_llm_summary_that_drops_a_current_fact_gives_way_to_the_offline_one(settings, monkeypatch, tenant):
    settings.LLM_BASE_URL = "http://llm.invalid/v1"
    contents = [
        "[2026-10-01] bob: Globex quote: $195k/yr.\n[2026-11-03] alice: Globex agreed to $172,000 per year."
    ]
    offline = page_summary.facts_summary(title="Globex", contents=contents, max_tokens=200)
    answers = {
        "lost": "Globex pays $195k/yr.",  # the older value as current, the newest gone
        "kept": "Globex agreed to $172,000 per year on 2026-11-03 (alice); previously $195k/yr.",
    }
    for name, answer in answers.items():
        monkeypatch.setattr(
            page_summary,
            "skill_run",
            lambda answer=answer, **kwargs: SkillOutput({"summary": answer}, used_llm=True),
        )
        result = page_summary.page_summary_text(
            tenant=tenant, title="Globex", contents=contents, max_tokens=200
        )
        assert result == (offline if name == "lost" else answer)


def test_a_change_within_one_sentence_keeps_the_later_value():
    contents = ["[2026-11-03] alice: The yearly price went from $195k/yr to $172k/yr."]
    text = page_summary.facts_summary(title="Globex", contents=contents, max_tokens=200)
    assert text.endswith("(current, 2026-11-03, alice) — was $195k/yr (2026-11-03, alice)")


def test_a_fact_from_a_bulleted_note_line_has_one_bullet():
    from wiki.services.summary import facts_summary

    note = "[2026-11-07] alice: Pilot plan:\n- pilot starts 2026-12-01, review on 2026-12-20"
    text = facts_summary(title="Vercel", contents=[note], max_tokens=200)
    assert "- pilot starts 2026-12-01" in text and "- - " not in text


# --- "previously" only between values of the same role (almanac.text.roles) ---------------------


@pytest.mark.parametrize(
    ("lines", "changed"),
    [
        (["Our owner is Qian Siyuan.", "Their contact is Zhou Kai."], False),
        (["我们的负责人是钱思远。", "客户的对接人是周凯。"], False),
        (["Their contact is Qian Siyuan.", "Their contact is now Zhou Kai."], True),
        (["客户的对接人是钱思远。", "对接人改为周凯。"], True),
        (["Owner: Qian Siyuan", "The renewal was signed by Zhou Kai."], False),
        (["审批人是钱思远。", "签字人为周凯。"], False),
    ],
)
def test_previously_pairs_only_two_people_in_the_same_role(lines, changed):
    contents = [f"[2026-10-01] bob: {lines[0]}\n[2026-10-05] ann: {lines[1]}"]
    text = page_summary.facts_summary(title="Globex", contents=contents, max_tokens=200)
    newest = next(x for x in text.splitlines() if ("Zhou Kai" in x or "周凯" in x))
    said_before = "— was Qian Siyuan" in newest or "— 此前：钱思远" in newest
    assert said_before is changed, text
    if not changed:  # both are current facts, each on its own line
        assert any(("Qian Siyuan" in x or "钱思远" in x) and x != newest for x in text.splitlines()), text


def test_the_context_summary_of_a_page_says_only_what_its_reader_may_read(tenant, alice, bob, push, settings):
    from context.services import context_build

    settings.WIKI_SUMMARY_ENABLED = True
    for n in range(12):
        push(slack(f"Vercel renewal status update {n}: the SSO rollout is on track, owner is Alice Smith",
                   tags={"customer": "Vercel"}, minutes=n))  # fmt: skip
    push(slack("Vercel renewal: margin floor is 22%, walk-away price is $160k/yr", channel="C200",
               name="#finance-internal", public=False, members=["bob@acme.com"], author="bob@acme.com",
               tags={"customer": "Vercel"}, minutes=30))  # fmt: skip
    for user, sees in ((alice, False), (bob, True)):
        result = context_build(
            user=user, tenant=tenant, task="Vercel renewal status", max_tokens=400, touch=False
        )
        pages = [
            i for b in result["blocks"] if b["kind"] == "wiki" for i in b["items"] if i["id"] == "vercel"
        ]
        assert pages and pages[0]["summarized"], result["blocks"]  # the page had to be summarized
        assert ("22%" in result["prompt"] or "$160k" in result["prompt"]) is sees


# --- one fact from two sources: printed once, with both ---------------------------------------


def test_one_fact_from_two_sources_is_one_line_with_both_sources():
    contents = [
        "[slack #deal-desk] [2026-10-01] alice@acme.com: We agreed with Globex on $40 per seat per month.\n"
        "[2026-10-02] bob@acme.com: Sounds good.",
        "[email: Globex quote] [2026-10-05] carol@globex.com: Confirming $40 per seat per month.",
    ]
    text = page_summary.facts_summary(title="Globex", contents=["\n".join(contents)], max_tokens=200)
    lines = [line for line in text.splitlines() if "$40 per seat" in line]
    assert lines == [
        "- Confirming $40 per seat per month. "
        "(2026-10-05, carol, email: Globex quote; also 2026-10-01, alice, slack #deal-desk)"
    ]


def test_in_chinese_one_fact_from_two_sources_names_both():
    contents = [
        "[2026-10-01] 王芳: 星河汽车的报价是每席位 280 元。\n[2026-10-05] 李雷: 确认报价每席位 280 元。"
    ]
    text = page_summary.facts_summary(title="星河汽车", contents=contents, max_tokens=200)
    assert [line for line in text.splitlines() if "280 元" in line] == [
        "- 确认报价每席位 280 元。（2026-10-05，李雷；另见 2026-10-01，王芳）"
    ]


def test_a_value_said_before_it_was_replaced_is_no_source_of_it_now():
    contents = [
        "[2026-10-01] a: Price is $100k/yr.\n[2026-10-02] b: Price is $90k/yr.\n"
        "[2026-10-03] c: Price is $100k/yr.\n[2026-10-04] d: Yes, price is $100k/yr."
    ]
    text = page_summary.facts_summary(title="Acme", contents=contents, max_tokens=200)
    (line,) = [line for line in text.splitlines() if "$100k/yr" in line]
    assert "(current, 2026-10-04, d; also 2026-10-03, c) — was $90k/yr (2026-10-02, b)" in line
    assert "2026-10-01" not in line


def test_a_sentence_that_said_only_part_of_a_fact_is_no_source_of_it():
    contents = [
        "[2026-09-20] felix: As discussed: 850 seats at $120/seat per year.\n"
        "[2026-09-22] priya: Thanks. $120/seat is above our budget; can you do better for a two-year term?\n"
        "[2026-09-29] felix: For a two-year term we can offer $107/seat.\n"
        "[2026-10-02] dana: Confirmed: a two-year term at $107/seat."
    ]
    text = page_summary.facts_summary(title="Verridge", contents=contents, max_tokens=300)
    (line,) = [line for line in text.splitlines() if "$107/seat" in line]
    sources, was = line.split(" — ")
    # priya named the two-year term, not the $107 price: she is no source of the fact
    assert sources.endswith("(current, 2026-10-02, dana; also 2026-09-29, felix)")
    assert was == "was $120 (2026-09-22, priya)"


def test_a_source_printed_on_its_own_line_is_not_named_again():
    contents = [
        "[2026-11-04] alice: Vercel wants 200 seats; their procurement contact is Lee.\n"
        "[2026-11-05] lee: Confirming from the Vercel side: 200 seats."
    ]
    text = page_summary.facts_summary(title="Vercel", contents=contents, max_tokens=300)
    assert "- Confirming from the Vercel side: 200 seats. (2026-11-05, lee)" in text
    assert "also" not in text and "(2026-11-04, alice)" in text  # alice's line holds the contact too
