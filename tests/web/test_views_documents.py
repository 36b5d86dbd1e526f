"""The "Add a document" form of the memories page (web.views.memories.document_upload_view)."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bench.quality.contracts_pdf import pdf_bytes
from documents.models import Document
from memories.models import Memory
from tests.documents.contracts import EN_PAGES, ZH_PAGES
from tests.web.conftest import ZH, login

pytestmark = pytest.mark.django_db


def test_the_memories_page_offers_the_form_in_the_readers_language(client, alice):
    body = login(client, alice).get("/memories/", **ZH).content.decode()
    assert "添加文档" in body and 'enctype="multipart/form-data"' in body and "上传" in body
    english = client.get("/memories/").content.decode()
    assert "Add a document" in english and 'name="file"' in english


def _options(body):
    form = body.split('<select name="audience">', 1)[1].split("</select>", 1)[0]
    return re.findall(r'<option value="([^"]+)"(?: selected)?>([^<]+)</option>', form)


def test_the_form_offers_the_readers_own_departments_and_projects(client, alice, bob, charlie):
    body = login(client, alice).get("/memories/").content.decode()
    assert _options(body) == [
        ("user", "Only me"),
        ("dept:sales", "Sales department"),
        ("project:apollo", "Apollo project"),
        ("tenant", "everyone at Acme"),
    ]
    assert '<option value="user" selected>' in body and 'type="text" name="scope_key"' not in body
    zh = client.get("/memories/", **ZH).content.decode()
    assert [words for _value, words in _options(zh)] == [
        "仅自己",
        "Sales 部门",
        "Apollo 项目",
        "Acme 全体成员",
    ]


def test_a_scope_the_reader_is_not_in_is_refused(client, alice, charlie):
    login(client, alice)
    file = SimpleUploadedFile("a.md", b"# Notes\nThe fee is 100 USD.")
    response = client.post("/memories/documents", {"file": file, "audience": "dept:engineering"})
    assert response.status_code == 403 and 'role="alert"' in response.content.decode()
    assert not Document.objects.exists()
    file = SimpleUploadedFile("a.md", b"# Notes\nThe fee is 100 USD.")
    response = client.post("/memories/documents", {"file": file, "audience": "project:apollo"})
    assert response.status_code == 302 and Document.objects.get().scope_key == "apollo"


def test_a_refused_choice_keeps_what_was_chosen(client, alice):
    login(client, alice)
    response = client.post("/memories/documents", {"audience": "project:apollo"})
    assert response.status_code == 422
    assert '<option value="project:apollo" selected>' in response.content.decode()


def test_a_contract_uploaded_from_the_form_becomes_clause_memories(
    client, alice, django_capture_on_commit_callbacks
):
    login(client, alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/memories/documents",
            {
                "file": SimpleUploadedFile("合同.pdf", pdf_bytes(ZH_PAGES)),
                "audience": "project:apollo",
            },
        )
    document = Document.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/memories/?uploaded={document.pk}"
    assert (document.owner, document.scope, document.status) == (alice, "project", "done")
    fee = Memory.objects.get(meta__document_id=document.pk, meta__clause="fee")
    assert fee.meta["amount"] == "500000·cny" and fee.kind == "clause"
    page = client.get(response["Location"], **ZH).content.decode()
    assert "合同.pdf" in page and "2 页" in page
    # read already: said so, not "being read"; who may read it in plain words, not its key
    assert "已收到。" in page and "正在读取" not in page
    documents = page.split("</form>")[-1]
    assert (
        '<span class="tag visible-to">可见范围: Apollo 项目</span>' in documents
        and "project:" not in documents
    )


def test_a_document_being_read_says_so(client, alice):
    login(client, alice)
    response = client.post("/memories/documents", {"file": SimpleUploadedFile("a.pdf", pdf_bytes(EN_PAGES))})
    page = client.get(response["Location"]).content.decode()  # its reading not run yet
    assert "Received: it is being read." in page and "Visible to: you" in page


def test_the_same_file_again_says_so(client, alice):
    login(client, alice)
    data = pdf_bytes(EN_PAGES)
    first = client.post("/memories/documents", {"file": SimpleUploadedFile("a.pdf", data)})
    again = client.post("/memories/documents", {"file": SimpleUploadedFile("b.pdf", data)})
    assert again["Location"] == first["Location"] + "&again=1"
    assert "This file was uploaded already." in client.get(again["Location"]).content.decode()


def test_a_refused_upload_is_shown_on_the_page(client, alice):
    login(client, alice)
    png = SimpleUploadedFile("contract.pdf", b"\x89PNG\r\n\x1a\n" + bytes(64))
    response = client.post("/memories/documents", {"file": png})
    assert response.status_code == 415
    assert "PNG" in response.content.decode() and 'role="alert"' in response.content.decode()
    assert client.post("/memories/documents", {}).status_code == 422
    assert not Document.objects.exists()


def test_the_form_needs_a_login(client):
    response = client.post("/memories/documents", {})
    assert response.status_code == 302 and "/login" in response["Location"]
