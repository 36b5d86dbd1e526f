"""The budget fitter on plain data: the ceiling holds for any candidates and budget."""

from __future__ import annotations

import dataclasses
from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from almanac.search.text import detect_lang
from almanac.search.tokens import count_tokens, truncate_tokens
from context.budget import fit, print_once, water_fill
from context.items import Item
from context.prompt import LABELS

WORDS = [
    "Vercel",
    "续约",
    "合同",
    "renewal",
    "¥120,000",
    "2026-11-30",
    "PRD-2024-013",
    "王伟",
    "alice",
    "折扣",
]


def prefix_summary(item: Item, target: int) -> str:
    """A stand-in summarizer for plain-data tests: the first `target` tokens of the page."""
    return truncate_tokens(item.text, target)


def page(n: int, words: int) -> Item:
    text = "\n".join(
        f"[2026-11-{(i % 28) + 1:02d} · slack #sales] " + " ".join(WORDS[: (i % 10) + 1])
        for i in range(words)
    )
    return Item(
        kind="wiki",
        id=f"page-{n}",
        title=f"Page {n}",
        text=text,
        score=1.0 / (n + 1),
        sources=[{"source": "slack", "url": "", "occurred_at": "2026-11-30T10:00:00Z", "name": "#sales"}],
        refs={"page": n, "sections": [n]},
    )


def memory(kind: str, n: int, length: int) -> Item:
    return Item(
        kind=kind,
        id=str(n),
        title="",
        text=" ".join(WORDS[i % len(WORDS)] for i in range(length)),
        occurred_at=date(2025, 3, (n % 28) + 1),
        refs={"memory": n},
    )


candidates_strategy = st.fixed_dictionaries(
    {
        "wiki": st.lists(st.integers(1, 60), max_size=4),
        "semantic": st.lists(st.integers(1, 80), max_size=8),
        "episodic": st.lists(st.integers(1, 80), max_size=8),
        "working": st.lists(st.integers(1, 60), max_size=10),
    }
)


def build(spec: dict) -> dict[str, list[Item]]:
    out = {"wiki": [page(i, size) for i, size in enumerate(spec["wiki"])]}
    for kind in ("semantic", "episodic"):
        out[kind] = [memory(kind, 100 * len(kind) + i, size) for i, size in enumerate(spec[kind])]
    out["working"] = [
        Item(
            kind="working",
            id=f"s:{i}",
            title="",
            text=" ".join(WORDS[: size % 10 + 1]) * (size // 10 + 1),
            role="user",
        )
        for i, size in enumerate(spec["working"])
    ]
    return out


@settings(max_examples=120, deadline=None)
@given(spec=candidates_strategy, max_tokens=st.integers(1, 8000), lang=st.sampled_from(["zh", "en"]))
def test_prompt_never_exceeds_budget_and_used_is_exact(spec, max_tokens, lang):
    result = fit(build(spec), max_tokens=max_tokens, lang=lang, summarize=prefix_summary)
    assert result.used <= max_tokens
    assert count_tokens(result.prompt) == result.used


@settings(max_examples=60, deadline=None)
@given(spec=candidates_strategy, max_tokens=st.integers(50, 8000))
def test_everything_is_either_in_the_prompt_or_reported(spec, max_tokens):
    candidates = build(spec)
    result = fit(candidates, max_tokens=max_tokens, lang="en", summarize=prefix_summary)
    chosen = {(i.kind, i.id) for items in result.chosen.values() for i in items}
    left = {(i.kind, i.id) for i in result.left_out}
    everything = {(i.kind, i.id) for items in candidates.values() for i in items}
    assert chosen | left == everything
    assert not chosen & left
    summarized = {(i.kind, i.id) for i in result.summarized}
    flagged = {(i.kind, i.id) for items in result.chosen.values() for i in items if i.summarized}
    assert summarized == flagged


def test_nothing_is_summarized_when_everything_fits():
    candidates = build({"wiki": [5, 5], "semantic": [10], "episodic": [10], "working": [5]})
    calls = []
    result = fit(candidates, max_tokens=4000, lang="en", summarize=lambda i, t: calls.append(i) or "x")
    assert calls == []
    assert result.summarized == [] and result.left_out == []
    assert all(not i.summarized for items in result.chosen.values() for i in items)


def test_big_pages_are_summarized_to_their_share_and_reported():
    candidates = {"wiki": [page(0, 200), page(1, 200)], "semantic": [memory("semantic", 1, 20)]}
    result = fit(candidates, max_tokens=600, lang="en", summarize=prefix_summary)
    assert {i.id for i in result.summarized} == {"page-0", "page-1"}
    assert all(i.summarized for i in result.chosen["wiki"])
    assert result.used <= 600
    assert result.chosen["semantic"]  # the memory kept its guaranteed share


def test_unused_share_spills_over_to_other_blocks():
    # No wiki, no session: memories may use the whole budget.
    candidates = {"semantic": [memory("semantic", i, 60) for i in range(10)]}
    result = fit(candidates, max_tokens=3000, lang="en", summarize=prefix_summary)
    assert len(result.chosen["semantic"]) == 10
    assert result.left_out == []


def test_working_window_keeps_the_newest_turns():
    turns = [
        Item(kind="working", id=f"s:{i}", title="", text=f"turn number {i} " * 20, role="user")
        for i in range(10)
    ]
    result = fit({"working": turns}, max_tokens=200, lang="en", summarize=prefix_summary)
    kept = [i.id for i in result.chosen["working"]]
    assert kept and kept == [f"s:{i}" for i in range(10 - len(kept), 10)]
    assert [i.id for i in result.left_out] == [f"s:{i}" for i in range(10 - len(kept))]


def test_failed_summary_leaves_the_page_out_and_reports_it():
    result = fit({"wiki": [page(0, 300)]}, max_tokens=300, lang="en", summarize=lambda item, target: None)
    assert result.chosen == {}
    assert [i.id for i in result.left_out] == ["page-0"]
    assert result.prompt == "" and result.used == 0


def test_labels_by_language():
    candidates = {"semantic": [memory("semantic", 1, 3)], "episodic": [memory("episodic", 2, 3)]}
    zh = fit(candidates, max_tokens=500, lang="zh", summarize=prefix_summary).prompt
    en = fit(candidates, max_tokens=500, lang="en", summarize=prefix_summary).prompt
    assert zh.startswith(LABELS["zh"]["semantic"]) and LABELS["zh"]["episodic"] in zh
    assert en.startswith("[Long-term memory]") and "[Related past events]\n- 2025-03-03 " in en


def test_water_fill_gives_small_items_all_they_need():
    assert water_fill([10, 500, 500], 310) == [10, 150, 150]
    assert water_fill([10, 20], 1000) == [10, 20]
    assert sum(water_fill([300, 300, 300], 100)) <= 100


def test_detect_lang():
    assert detect_lang("为 Vercel 起草续约提案") == "zh"
    assert detect_lang("Draft the Vercel renewal") == "en"


@settings(max_examples=60, deadline=None)
@given(spec=candidates_strategy, max_tokens=st.integers(50, 8000))
def test_summaries_and_omissions_happen_only_when_the_whole_does_not_fit(spec, max_tokens):
    from context.prompt import assemble, render_block

    candidates = build(spec)
    whole = assemble([render_block(kind, items, "en") for kind, items in candidates.items()])
    result = fit(candidates, max_tokens=max_tokens, lang="en", summarize=prefix_summary)
    if count_tokens(whole) <= max_tokens:
        assert result.summarized == [] and result.left_out == []
        assert result.prompt == whole


def test_cursor_round_trip_and_binding():
    import pytest

    from almanac.errors import ApplicationError
    from context.cursor import Seen, cursor_decode, cursor_encode

    token = cursor_encode(
        user_id=7, task="Vercel  renewal", seen=Seen(pages={1}, sections={2, 3}, memories={4}, passes=1)
    )
    seen = cursor_decode(token=token, user_id=7, task="Vercel renewal")  # whitespace-insensitive
    assert (seen.pages, seen.sections, seen.memories, seen.passes) == ({1}, {2, 3}, {4}, 1)
    for user_id, task in [(8, "Vercel renewal"), (7, "Stripe renewal")]:
        with pytest.raises(ApplicationError):
            cursor_decode(token=token, user_id=user_id, task=task)
    with pytest.raises(ApplicationError):
        cursor_decode(
            token=token.replace(token[5], "A" if token[5] != "A" else "B", 1),
            user_id=7,
            task="Vercel renewal",
        )


def test_a_summarized_page_names_fewer_sources_in_its_header():
    from context.items import Item
    from context.prompt import wiki_header

    sources = [
        {"source": "slack", "name": f"#channel-{i}", "occurred_at": f"2026-11-{10 + i}"} for i in range(6)
    ]
    page = Item(kind="wiki", id="vercel", title="Vercel", text="…", sources=sources)
    whole, short = wiki_header(page, "en"), wiki_header(page, "en", compact=True)
    assert whole.count("#channel-") == 4 and "+2" in whole
    assert short.count("#channel-") == 2 and "+4" in short and "#channel-5" in short  # the newest first


def summary(n: int, text: str) -> Item:
    return dataclasses.replace(page(n, 1), text=text, summarized=True)


def test_a_fact_line_two_summaries_share_is_printed_once():
    first = summary(
        0,
        "- Globex wants Azure AD SSO before the renewal. (2026-02-05, diego)\n- Term: 3 years (2026-02-01, anna)",
    )
    second = summary(
        1,
        "- Globex wants Azure AD SSO before the renewal. (2026-02-05, diego)\n- Atlas 3.3 ships on March 1. (2026-01-16, diego)",
    )
    kept = print_once([first, second])
    assert kept[0] is first
    assert kept[1].text == "- Atlas 3.3 ships on March 1. (2026-01-16, diego)"


def test_a_summary_line_a_page_above_printed_whole_goes_unless_it_is_all_the_summary_says():
    whole = dataclasses.replace(
        page(0, 1), text="[2026-02-05] diego: Globex wants Azure AD SSO before the renewal."
    )
    repeat = "- Globex wants Azure AD SSO before the renewal. (2026-02-05, diego)"
    both = summary(1, f"{repeat}\n- Orion pilot starts in May. (2026-02-11, anna)")
    assert print_once([whole, both])[1].text == "- Orion pilot starts in May. (2026-02-11, anna)"
    only_that = summary(2, repeat)
    assert print_once([whole, only_that]) == [whole, only_that]  # a task about no one entity
    about = dataclasses.replace(whole, about_task=True)
    assert print_once([about, only_that]) == [about]  # it is about the page above: the repeat goes
    mine = dataclasses.replace(only_that, about_task=True)
    assert print_once([about, mine]) == [about, mine]  # unless it is a page the task is about too


def test_what_a_repeat_frees_goes_to_the_first_summarized_page():
    """Two pages share the budget; the second's summary only repeats the first's line: it
    goes, and the first is summarized again with what it freed."""
    line = "- Globex wants Azure AD SSO before the renewal. (2026-02-05, diego)"
    first = dataclasses.replace(page(0, 400), about_task=True)
    first = dataclasses.replace(first, text=line + "\n" + first.text)
    second = dataclasses.replace(page(1, 400), text=line + "\n" + page(1, 400).text)
    asked: list[tuple[str, int]] = []

    def summarize(item: Item, target: int) -> str:
        asked.append((item.id, target))
        return line if item.id == "page-1" else truncate_tokens(item.text, target)

    result = fit({"wiki": [first, second]}, max_tokens=600, lang="en", summarize=summarize)
    assert [item.id for item in result.chosen["wiki"]] == ["page-0"]
    targets = [target for pid, target in asked if pid == "page-0"]
    assert len(targets) == 2 and targets[1] > targets[0]
    assert result.used <= 600


def test_short_lines_are_no_evidence_of_a_repeat():
    first = summary(0, "- Signed. (2026-02-05, diego)\n- Globex renewal is due March 31. (2026-02-01, anna)")
    second = summary(1, "- Signed. (2026-03-01, bob)\n- Orion pilot starts in May. (2026-02-11, anna)")
    assert print_once([first, second])[1].text == second.text
    # the same short line of the same source (its date and author) is a repeat
    third = summary(
        2, "- 试点期 88天。（2026-10-15，huangyan）\n- Orion pilot starts in May. (2026-02-11, anna)"
    )
    fourth = summary(3, "- 试点期 88天。（2026-10-15，huangyan）\n- 试点期 79天。（2026-10-09，huangyan）")
    assert print_once([third, fourth])[1].text == "- 试点期 79天。（2026-10-09，huangyan）"
