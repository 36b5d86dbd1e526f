"""The one reader of owners (almanac.text.roles): with the thing owned named (a memory's
claim) or not (a page's owner), zh and en."""

import pytest

from almanac.text.roles import Owner, owner


@pytest.mark.parametrize(
    ("text", "who", "subject"),
    [
        ("Apollo的负责人是张三", "张三", "Apollo"),
        ("Apollo项目现在由李四负责", "李四", "Apollo项目"),
        ("王五负责华东区销售", "王五", "华东区销售"),
        ("The owner of Project Apollo is Bob Smith", "Bob Smith", "Project Apollo"),
        ("Apollo's lead is Carol", "Carol", "Apollo"),
        ("The pilot is handled by Dana", "Dana", "The pilot"),
        ("Erin now leads the Globex renewal", "Erin", "the Globex renewal"),
    ],
)
def test_an_owner_of_a_named_thing(text, who, subject):
    assert owner(text, named=True) == Owner(who=who, subject=subject)


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("Owner: Maria Lopez", "Maria Lopez"),
        ("account manager is now dana@acme.com", "dana@acme.com"),
        ("Frank takes over from Monday", "Frank"),
        ("负责人改为王伟", "王伟"),
        ("这个客户改由李娜负责", "李娜"),
    ],
)
def test_an_owner_of_what_the_text_is_filed_under(text, who):
    assert owner(text, named=False) == Owner(who=who)


@pytest.mark.parametrize("text", ["Bob leads the pilot", "The pilot is handled by Dana"])
def test_a_page_does_not_take_the_owner_of_another_thing_for_its_own(text):
    assert owner(text, named=False) is None


@pytest.mark.parametrize("text", ["Owner: Maria Lopez", "The weather is nice", "天气不错"])
def test_a_memory_claims_no_owner_of_nothing_named(text):
    assert owner(text, named=True) is None
