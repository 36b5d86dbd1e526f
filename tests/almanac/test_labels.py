"""Access group keys in plain words (almanac.labels), in English and Chinese."""

from django.utils import translation

from almanac.labels import acl_restricted, group_labels, labels_ordered
from almanac.models import AccessGroup
from almanac.services.tenancy import group_ensure

KEYS = [
    "tenant:acme",
    "dept:sales",
    "project:apollo",
    "user:alice",
    "user:bob",
    "email:thread:e84e86c9",
    "slack:channel:C1",
]


def _sources(tenant):
    group_ensure(tenant=tenant, key="email:thread:e84e86c9", kind=AccessGroup.Kind.SOURCE, name="Renewal")
    group_ensure(tenant=tenant, key="slack:channel:C1", kind=AccessGroup.Kind.SOURCE, name="#sales")


def test_keys_read_as_plain_words_for_the_reader(tenant, alice, bob):
    _sources(tenant)
    with translation.override("en"):
        labels = group_labels(user=alice, keys=KEYS)
    assert labels == {
        "tenant:acme": "everyone at Acme",
        "dept:sales": "Sales department",
        "project:apollo": "Apollo project",
        "user:alice": "you",
        "user:bob": "bob",
        "email:thread:e84e86c9": "the thread's participants",
        "slack:channel:C1": "members of #sales",
    }
    # bob's own key is "you" to bob, not to alice
    with translation.override("en"):
        assert group_labels(user=bob, keys=["user:bob", "user:alice"]) == {
            "user:bob": "you",
            "user:alice": "alice",
        }


def test_keys_read_in_chinese(tenant, alice):
    _sources(tenant)
    with translation.override("zh-hans"):
        labels = group_labels(user=alice, keys=KEYS)
    assert labels["tenant:acme"] == "Acme 全体成员"
    assert labels["dept:sales"] == "Sales 部门"
    assert labels["project:apollo"] == "Apollo 项目"
    assert labels["user:alice"] == "你"
    assert labels["email:thread:e84e86c9"] == "该邮件往来的参与者"
    assert labels["slack:channel:C1"] == "#sales 的成员"


def test_a_person_is_named_by_their_display_name(tenant, alice):
    from almanac.services.users import user_create

    user_create(tenant=tenant, username="wangwei", email="w@acme.com", display_name="王伟")
    with translation.override("en"):
        assert group_labels(user=alice, keys=["user:wangwei"]) == {"user:wangwei": "王伟"}


def test_no_labels_for_a_user_without_a_tenant(django_user_model):
    loner = django_user_model.objects.create_user("loner")
    assert group_labels(user=loner, keys=["tenant:acme"]) == {}


def test_labels_are_ordered_widest_audience_first(tenant, alice):
    with translation.override("en"):
        labels = group_labels(user=alice, keys=KEYS)
        ordered = labels_ordered(labels, ["user:alice", "dept:sales", "tenant:acme", "project:apollo"])
    assert ordered == ["everyone at Acme", "Sales department", "Apollo project", "you"]


def test_a_row_without_the_tenant_key_is_restricted():
    assert acl_restricted(acl=["dept:finance"], tenant_key="tenant:acme")
    assert not acl_restricted(acl=["dept:finance", "tenant:acme"], tenant_key="tenant:acme")
