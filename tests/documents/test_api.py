"""The documents endpoints (docs/api.md, Documents): upload, read, clauses, delete, access."""

import pytest

from almanac.models import AuditEvent
from bench.quality.contracts_pdf import pdf_bytes, pdf_without_text
from documents.models import Document
from documents.tasks import document_read_task
from memories.models import Memory
from tests.documents.contracts import EN_PAGES, ZH_PAGES

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
)


@pytest.fixture
def uploaded(upload, django_capture_on_commit_callbacks):
    """Upload and let the work after the commit run (reading, the skills): the response."""

    def send(data, name="contract.pdf", **fields):
        with django_capture_on_commit_callbacks(execute=True):
            return upload(data, name, **fields)

    return send


def clauses(document_id: int) -> dict[str, Memory]:
    rows = Memory.objects.filter(meta__document_id=document_id)
    return {m.meta["clause"]: m for m in rows}


def test_an_english_pdf_becomes_one_clause_memory_per_clause(uploaded, api, alice):
    response = uploaded(pdf_bytes(EN_PAGES, width=70), "msa.pdf", user="alice")
    assert response.status_code == 202
    assert response.json()["status"] == "pending"

    body = api.get(f"/documents/{response.json()['id']}", user="alice").json()
    assert body["status"] == "done" and body["pages"] == 2 and body["characters"] > 500
    found = clauses(body["id"])
    assert sorted(m.pk for m in found.values()) == body["memory_ids"]
    assert set(found) == {"parties", "start_date", "term", "renewal", "notice", "fee", "payment_terms",
                          "termination", "governing_law"}  # fmt: skip
    assert found["start_date"].meta["date"] == "2026-03-01"
    assert found["term"].meta["date"] == "2027-02-28" and found["term"].meta["duration"] == "12 months"
    assert found["renewal"].meta["date"] == "2027-03-01"
    assert found["notice"].meta["date"] == "2026-12-30" and found["notice"].meta["duration"] == "60 days"
    assert found["fee"].meta["amount"] == "120000·usd/year" and "USD 120,000" in found["fee"].content
    assert found["payment_terms"].meta["duration"] == "30 days"
    assert found["governing_law"].meta["value"] == "England and Wales"
    assert found["parties"].meta["value"] == "Northwind Analytics Ltd.; Contoso Retail Inc."
    assert {m.meta["page"] for k, m in found.items() if k in ("fee", "governing_law")} == {2}
    assert found["start_date"].meta["page"] == 1
    for memory in found.values():
        assert memory.kind == "clause" and memory.scope == "user" and memory.scope_key == "alice"
        assert (
            memory.owner == alice
            and memory.meta["method"] == "rules"
            and memory.meta["filename"] == "msa.pdf"
        )


def test_a_chinese_pdf_becomes_clause_memories_with_its_dates_and_amounts(uploaded, api, alice):
    response = uploaded(pdf_bytes(ZH_PAGES, width=50), "服务合同.pdf", user="alice", scope="project",
                        scope_key="Apollo")  # fmt: skip
    assert response.status_code == 202
    found = clauses(response.json()["id"])
    assert found["parties"].meta["value"] == "北京星河科技有限公司; 上海云帆信息技术有限公司"
    assert found["start_date"].meta["date"] == "2026-01-01"
    assert found["term"].meta["date"] == "2027-12-31" and found["term"].meta["duration"] == "2 years"
    assert found["renewal"].meta["date"] == "2028-01-01"
    assert found["notice"].meta["date"] == "2027-12-01" and found["notice"].meta["duration"] == "30 days"
    assert found["fee"].meta["amount"] == "500000·cny" and "50万元" in found["fee"].content
    assert found["payment_terms"].meta["duration"] == "15 business days"
    assert found["termination"].meta["duration"] == "10 days"
    assert found["governing_law"].meta["value"] == "中华人民共和国"
    assert found["fee"].meta["page"] == 2 and found["term"].meta["page"] == 1
    assert {(m.scope, m.scope_key) for m in found.values()} == {("project", "apollo")}


def test_a_pdf_without_a_text_layer_fails_with_the_reason(uploaded, api, alice):
    response = uploaded(pdf_without_text(3), "scan.pdf", user="alice")
    assert response.status_code == 202
    body = api.get(f"/documents/{response.json()['id']}", user="alice").json()
    assert body["status"] == "failed"
    assert "no text layer" in body["reason"] and "3 page(s)" in body["reason"]
    assert body["memory_ids"] == []


def test_an_oversized_file_is_413(upload, alice, settings):
    settings.DOCUMENT_MAX_BYTES = 2000
    response = upload(pdf_bytes(EN_PAGES), user="alice")
    assert response.status_code == 413
    assert "larger than 2000 bytes" in response.json()["detail"]
    assert not Document.objects.exists()


def test_a_png_named_pdf_is_415(upload, alice):
    response = upload(PNG, "contract.pdf", user="alice")
    assert response.status_code == 415
    assert "PNG" in response.json()["detail"]
    assert not Document.objects.exists()


def test_binary_bytes_that_are_not_text_are_415(upload, alice):
    response = upload(bytes(range(256)) * 4, "notes.txt", user="alice")
    assert response.status_code == 415


def test_the_same_file_twice_is_the_same_document(uploaded, alice):
    data = pdf_bytes(EN_PAGES)
    first = uploaded(data, user="alice")
    second = uploaded(data, "copy-of-contract.pdf", user="alice")
    assert (first.status_code, second.status_code) == (202, 200)
    assert second.json()["id"] == first.json()["id"]
    assert second.json()["memory_ids"] and Document.objects.count() == 1
    # In another scope it is another document.
    third = uploaded(data, user="alice", scope="project", scope_key="Apollo")
    assert third.status_code == 202 and third.json()["id"] != first.json()["id"]


def test_a_markdown_file_is_read_as_one_page(uploaded, api, alice):
    text = "# Supply agreement\n\n" + "\n".join(EN_PAGES).replace("MASTER SERVICES AGREEMENT\n", "")
    response = uploaded(text.encode(), "supply.md", user="alice")
    body = api.get(f"/documents/{response.json()['id']}", user="alice").json()
    assert (body["format"], body["status"], body["pages"]) == ("markdown", "done", 1)
    assert clauses(body["id"])["fee"].meta["amount"] == "120000·usd/year"


def test_deleting_a_document_deletes_its_memories_and_is_audited(uploaded, api, alice, settings):
    response = uploaded(pdf_bytes(EN_PAGES), user="alice")
    document = Document.objects.get(pk=response.json()["id"])
    ids = (
        response.json()["memory_ids"]
        or api.get(f"/documents/{document.pk}", user="alice").json()["memory_ids"]
    )
    assert ids
    stored = settings.DATA_DIR / document.path
    assert stored.exists()

    assert api.delete(f"/documents/{document.pk}", user="alice").status_code == 204
    assert not Memory.objects.filter(pk__in=ids).exists()
    assert api.get(f"/documents/{document.pk}", user="alice").status_code == 404
    event = AuditEvent.objects.get(action="document.delete", object_id=str(document.pk))
    assert event.detail["memories"] == len(ids)
    assert AuditEvent.objects.filter(action="memory.delete").count() == len(ids)


def test_a_user_who_may_not_see_the_scope_gets_404(uploaded, api, alice, bob, charlie, mallory):
    response = uploaded(pdf_bytes(EN_PAGES), user="alice", scope="project", scope_key="Apollo")
    document_id = response.json()["id"]
    assert api.get(f"/documents/{document_id}", user="bob").status_code == 200  # Apollo member
    assert api.get(f"/documents/{document_id}", user="charlie").status_code == 404
    assert api.delete(f"/documents/{document_id}", user="charlie").status_code == 404
    assert Document.objects.filter(pk=document_id).exists()


def test_a_reader_of_the_scope_who_did_not_upload_may_not_delete(uploaded, api, alice, bob):
    response = uploaded(pdf_bytes(EN_PAGES), user="alice", scope="project", scope_key="Apollo")
    deleted = api.delete(f"/documents/{response.json()['id']}", user="bob")
    assert deleted.status_code == 403
    assert "uploader" in deleted.json()["detail"]


def test_a_scope_the_user_is_not_in_is_refused(upload, alice, charlie):
    response = upload(pdf_bytes(EN_PAGES), user="charlie", scope="project", scope_key="Apollo")
    assert response.status_code == 403
    assert upload(pdf_bytes(EN_PAGES), user="charlie", scope="galaxy").status_code == 422


def test_an_upload_without_a_file_is_422(api, alice):
    response = api.client.post("/api/v1/documents", {"user": "alice"}, headers=api.headers)
    assert response.status_code == 422


def test_reading_twice_reads_once(upload, api, alice):
    response = upload(pdf_bytes(EN_PAGES), user="alice")  # no commit callbacks: still pending
    document_id = response.json()["id"]
    assert Document.objects.get(pk=document_id).status == "pending"
    assert document_read_task(document_id) == "read"
    assert document_read_task(document_id) is None
