import pytest

from bench.quality.contracts_pdf import pdf_bytes


@pytest.fixture
def upload(api):
    """POST /documents with a file (name, bytes) and form fields; returns the response."""

    def send(data: bytes, name: str = "contract.pdf", **fields):
        from django.core.files.uploadedfile import SimpleUploadedFile

        body = {"file": SimpleUploadedFile(name, data), **{k: v for k, v in fields.items() if v is not None}}
        return api.client.post("/api/v1/documents", body, headers=api.headers)

    return send


@pytest.fixture
def contract_pdf():
    return pdf_bytes
