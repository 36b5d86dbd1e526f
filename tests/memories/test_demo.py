import pytest

from memories.models import ConversationSession, Memory

pytestmark = pytest.mark.django_db


def test_demo_load_is_idempotent():
    from almanac.demo import load_company
    from memories import demo

    company = load_company()
    first = demo.load(company)
    count = Memory.objects.count()
    assert "memories added" in first and count >= 12
    session = ConversationSession.objects.get(title=demo.SESSION_TITLE)
    assert session.extracted_at is not None
    assert Memory.objects.filter(meta__session_id=session.pk, scope="project").exists()
    demo.load(company)
    assert Memory.objects.count() == count
