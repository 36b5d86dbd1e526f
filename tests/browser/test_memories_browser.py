"""The memory cards in a browser, in English and Chinese, at laptop and phone width: edit in
place, useful / wrong, archive and restore, delete and undo, the warning before a shared
memory is deleted, delete everywhere."""

import pytest

from memories.models import Feedback, Memory
from memories.services.memories import memory_create

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = [("en", 1280), ("zh-hans", 390)]


def remember(owner, content, **kw) -> Memory:
    memory, duplicate = memory_create(owner=owner, content=content, **kw)
    assert duplicate is None
    return memory


def card(page, memory_id: int):
    return page.locator(f"#memory-{memory_id}")


def delete_name(lang: str, memory_id: int) -> str:
    return f"Delete memory #{memory_id}" if lang == "en" else f"删除记忆 #{memory_id}"


def fits(page) -> bool:
    """Nothing wider than the viewport (no sideways scrolling on a phone)."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_a_memory_is_corrected_in_place(page_for, alice, lang, width):
    memory = remember(alice, "The Vercel renewal is due in March")
    page = page_for(alice, lang=lang, width=width)
    page.goto("/memories/")
    assert fits(page)
    facts = card(page, memory.pk).locator("dl").inner_text()
    assert (
        ("Visible to" in facts and "you" in facts)
        if lang == "en"
        else ("可见范围" in facts and "你" in facts)
    )
    card(page, memory.pk).get_by_role("link", name="Edit" if lang == "en" else "编辑").click()
    box = card(page, memory.pk).locator("textarea")
    box.fill("The Vercel renewal is due in May")
    card(page, memory.pk).get_by_role("button", name="Save" if lang == "en" else "保存").click()
    card(page, memory.pk).get_by_role("status").wait_for()
    assert "due in May" in card(page, memory.pk).locator(".memory-text").inner_text()
    assert page.url.endswith("/memories/")  # in place: no page load
    assert Memory.objects.get(pk=memory.pk).content == "The Vercel renewal is due in May"
    assert fits(page)


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_useful_and_wrong_are_remembered_per_reader(page_for, alice, bob, lang, width):
    memory = remember(alice, "Apollo launch moved to June", scope="project", scope_key="Apollo")
    page = page_for(bob, lang=lang, width=width)
    page.goto("/memories/")
    assert card(page, memory.pk).get_by_role("link", name="Edit" if lang == "en" else "编辑").count() == 0
    useful = card(page, memory.pk).get_by_role("button", name="Useful" if lang == "en" else "有用")
    useful.click()
    card(page, memory.pk).get_by_role("status").wait_for()
    assert useful.get_attribute("aria-pressed") == "true"
    assert Feedback.objects.get(memory_id=memory.pk, user=bob).signal == "adopted"
    assert Memory.objects.get(pk=memory.pk).quality > 1.0


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_a_delete_is_undone(page_for, alice, lang, width):
    memory = remember(alice, "I prefer one-page PDFs")
    memory_id = memory.pk
    page = page_for(alice, lang=lang, width=width)
    page.goto("/memories/")
    card(page, memory_id).get_by_role("button", name=delete_name(lang, memory_id)).click()
    undo = card(page, memory_id).get_by_role("button", name="Undo" if lang == "en" else "撤销")
    undo.wait_for()
    assert not Memory.objects.filter(pk=memory_id).exists()
    undo.click()
    card(page, memory_id).locator(".memory-text").wait_for()
    assert Memory.objects.filter(pk=memory_id).exists()
    page.reload()
    assert "one-page PDFs" in card(page, memory_id).inner_text()


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_deleting_a_shared_memory_warns_first(page_for, alice, lang, width):
    memory = remember(alice, "Sales reviews pipeline on Mondays", scope="dept", scope_key="Sales")
    page = page_for(alice, lang=lang, width=width)
    page.goto("/memories/")
    delete = delete_name(lang, memory.pk)
    card(page, memory.pk).get_by_role("button", name=delete).click()
    warning = page.get_by_role("alertdialog")
    warning.wait_for()
    assert ("Sales department" if lang == "en" else "Sales 部门") in warning.inner_text()
    assert Memory.objects.filter(pk=memory.pk).exists()
    warning.get_by_role("link", name="Cancel" if lang == "en" else "取消").click()
    card(page, memory.pk).get_by_role("button", name=delete).click()
    confirm = "Delete for everyone" if lang == "en" else "为所有人删除"
    card(page, memory.pk).get_by_role("button", name=confirm).click()
    card(page, memory.pk).get_by_role("button", name="Undo" if lang == "en" else "撤销").wait_for()
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert fits(page)


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_archive_restore_and_delete_everywhere(page_for, alice, lang, width):
    memory = remember(alice, "My passport number is X1234567, renew it in May")
    memory_id = memory.pk
    page = page_for(alice, lang=lang, width=width)
    page.goto("/memories/")
    card(page, memory_id).get_by_role("button", name="Archive" if lang == "en" else "归档").click()
    restore = card(page, memory_id).get_by_role("button", name="Restore" if lang == "en" else "恢复")
    restore.wait_for()
    assert Memory.objects.get(pk=memory_id).status == "archived"
    restore.click()
    card(page, memory_id).get_by_role("button", name="Archive" if lang == "en" else "归档").wait_for()
    assert Memory.objects.get(pk=memory_id).status == "active"
    everywhere = "Delete everywhere" if lang == "en" else "彻底删除"
    card(page, memory_id).get_by_role("button", name=everywhere).click()
    warning = page.get_by_role("alertdialog")
    assert ("cannot be undone" if lang == "en" else "无法撤销") in warning.inner_text()
    warning.get_by_role("button", name=everywhere).click()
    page.get_by_text("Deleted everywhere" if lang == "en" else "已彻底删除").wait_for()
    assert not Memory.objects.filter(pk=memory_id).exists()
    assert set(Memory.history.filter(id=memory_id).values_list("content", flat=True)) == {"[purged]"}


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_the_keyboard_stays_on_the_card_it_acted_on(page_for, alice, lang, width):
    memory = remember(alice, "Weekly sync moved to Tuesday")
    page = page_for(alice, lang=lang, width=width)
    page.goto("/memories/")
    in_card = f"document.activeElement.closest('#memory-{memory.pk}') !== null"
    card(page, memory.pk).get_by_role("button", name="Useful" if lang == "en" else "有用").focus()
    page.keyboard.press("Enter")
    card(page, memory.pk).get_by_role("status").wait_for()
    page.wait_for_function(in_card, timeout=3000)  # not thrown back to the top of the page
    card(page, memory.pk).get_by_role("link", name="Edit" if lang == "en" else "编辑").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.tagName === 'TEXTAREA'", timeout=3000)
