"""The settings page: a reader opts in to (and out of) the weekly report, in zh and en."""

import pytest

from skills.models import SkillOptIn

pytestmark = pytest.mark.django_db


def test_opting_in_and_out_of_the_weekly_report(client, alice, bob):
    client.force_login(alice)
    page = client.get("/settings/")
    assert page.status_code == 200 and b'name="skills" value="weekly_report"' in page.content
    assert b"checked" not in page.content
    response = client.post("/settings/", {"skills": ["weekly_report"]})
    assert response.status_code == 302
    assert list(SkillOptIn.objects.values_list("user__username", "skill_name")) == [
        ("alice", "weekly_report")
    ]
    assert b"checked" in client.get(response.url).content
    client.post("/settings/", {"skills": ["weekly_report", "not_a_skill"]})  # unknown names are ignored
    assert SkillOptIn.objects.count() == 1
    client.post("/settings/", {})
    assert not SkillOptIn.objects.exists()


def test_the_settings_page_speaks_chinese(client, alice):
    client.force_login(alice)
    page = client.get("/settings/", headers={"accept-language": "zh-hans"}).content.decode()
    assert "设置" in page and "周报" in page and "保存" in page


def test_the_settings_page_needs_a_login(client):
    assert client.get("/settings/").status_code == 302
