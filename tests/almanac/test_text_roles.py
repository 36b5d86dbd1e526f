"""The one reader of people in a role (almanac.text.roles): with the thing owned named (a
memory's claim) or not (a page's owner), and the role kept (owner, contact, signer,
approver), zh and en."""

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
        ("Change of owner again: 黄艳 now owns Globex", "黄艳"),  # a Chinese name in English
    ],
)
def test_an_owner_of_what_the_text_is_filed_under(text, who):
    assert owner(text, named=False) == Owner(who=who)


@pytest.mark.parametrize("text", ["Bob leads the pilot", "The pilot is handled by Dana"])
def test_a_page_does_not_take_the_owner_of_another_thing_for_its_own(text):
    assert owner(text, named=False) is None


def test_a_chinese_name_is_not_cut_from_a_longer_word():
    assert owner("金泰物流 now owns the renewal", named=False) is None  # four characters: a company


@pytest.mark.parametrize("text", ["Owner: Maria Lopez", "The weather is nice", "天气不错"])
def test_a_memory_claims_no_owner_of_nothing_named(text):
    assert owner(text, named=True) is None


@pytest.mark.parametrize(
    ("text", "who", "role"),
    [
        ("Their contact is Zhou Kai", "Zhou Kai", "contact"),
        ("Our owner is Qian Siyuan", "Qian Siyuan", "owner"),
        ("Point of contact: dana@globex.com", "dana@globex.com", "contact"),
        ("客户的对接人是周凯", "周凯", "contact"),
        ("联系人：李娜", "李娜", "contact"),
        ("我们的负责人是钱思远", "钱思远", "owner"),
        ("The order form was signed by Dana Wu", "Dana Wu", "signer"),
        ("签字人为王伟", "王伟", "signer"),
        ("Approver: Li Na", "Li Na", "approver"),
        ("由张敏审批", "张敏", "approver"),
    ],
)
def test_the_role_is_kept(text, who, role):
    assert owner(text, named=False) == Owner(who=who, role=role)


def test_a_named_thing_keeps_its_role_too():
    assert owner("Apollo的对接人是张三", named=True) == Owner(who="张三", subject="Apollo", role="contact")


@pytest.mark.parametrize("text", ["Please contact Bob about it", "我们签了合同", "The plan was approved"])
def test_a_role_word_without_a_person_in_it_is_no_role(text):
    assert owner(text, named=False) is None
