"""The Document admin: an upload form that goes through the service, scoped lists, deletes."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from almanac.services.users import user_create
from bench.quality.contracts_pdf import pdf_bytes
from documents.models import Document
from documents.services.documents import document_upload
from memories.models import Memory
from tests.documents.contracts import EN_PAGES
from tests.staff import make_staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def superadmin(tenant):
    return user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")


def test_an_admin_uploads_a_contract_for_a_user(
    client, superadmin, alice, django_capture_on_commit_callbacks
):
    client.force_login(superadmin)
    assert client.get("/admin/documents/document/add/").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/documents/document/add/",
            {"owner": alice.pk, "file": SimpleUploadedFile("msa.pdf", pdf_bytes(EN_PAGES)), "scope": "project",
             "scope_key": "Apollo"},
        )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    document = Document.objects.get()
    assert (document.owner, document.scope_key, document.status) == (alice, "apollo", "done")
    assert Memory.objects.filter(meta__document_id=document.pk, kind="clause", owner=alice).count() == 9
    assert client.get(f"/admin/documents/document/{document.pk}/change/").status_code == 200


def test_a_refused_upload_is_a_form_error(client, superadmin, charlie):
    client.force_login(superadmin)
    response = client.post(
        "/admin/documents/document/add/",
        {"owner": charlie.pk, "file": SimpleUploadedFile("x.pdf", b"GIF89a" + bytes(32)), "scope": "user"},
    )
    assert response.status_code == 200 and "a GIF image" in response.content.decode()
    assert not Document.objects.exists()


def test_scoped_staff_list_only_documents_they_may_read(client, alice, bob, charlie):
    document_upload(user=alice, data=b"Apollo contract notes", filename="apollo.txt", scope="project",
                    scope_key="Apollo")  # fmt: skip
    document_upload(user=alice, data=b"alice's own notes", filename="private.txt")
    make_staff(charlie, "documents.view_document")
    make_staff(bob, "documents.view_document")
    client.force_login(bob)
    body = client.get("/admin/documents/document/").content.decode()
    assert "apollo.txt" in body and "private.txt" not in body
    client.force_login(charlie)
    assert "apollo.txt" not in client.get("/admin/documents/document/").content.decode()


def test_deleting_in_the_admin_deletes_the_memories(
    client, superadmin, alice, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        document, _ = document_upload(user=alice, data=pdf_bytes(EN_PAGES), filename="msa.pdf")
    assert Memory.objects.filter(meta__document_id=document.pk).exists()
    client.force_login(superadmin)
    response = client.post(f"/admin/documents/document/{document.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Document.objects.exists() and not Memory.objects.filter(meta__document_id=document.pk).exists()
