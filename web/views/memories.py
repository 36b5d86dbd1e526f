"""The reader's memories: list, delete, and the document upload form beside them."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from almanac.errors import ApplicationError
from documents.selectors import document_list
from documents.services.documents import document_upload
from memories.selectors import memory_get_for_user, memory_list
from memories.services.memories import memory_delete
from web.views.common import PER_PAGE, login_required_htmx, service_message

RECENT_DOCUMENTS = 10
# Where a document's reading stands, in the reader's language.
DOCUMENT_STATUS = {
    "pending": gettext_lazy("waiting to be read"),
    "read": gettext_lazy("read; looking for clauses"),
    "done": gettext_lazy("done"),
    "failed": gettext_lazy("failed"),
}


@login_required
def memory_list_view(request):
    return memories_page(request)


def memories_page(request, *, upload_error: str = "", status: int = 200):
    """The memories page: the reader's memories, their recent documents and the upload form."""
    memory_type = request.GET.get("type", "")
    q = request.GET.get("q", "").strip()[:200]
    memories = memory_list(user=request.user, memory_type=memory_type or None, q=q)
    memories = Paginator(memories, PER_PAGE).get_page(request.GET.get("page"))
    documents = [
        {"document": d, "status": DOCUMENT_STATUS.get(d.status, d.status)}
        for d in document_list(user=request.user)[:RECENT_DOCUMENTS]
    ]
    uploaded = request.GET.get("uploaded", "")
    context = {"memories": memories, "type": memory_type, "q": q, "documents": documents,
               "uploaded": int(uploaded) if uploaded.isdigit() else None,
               "again": request.GET.get("again") == "1", "upload_error": upload_error}  # fmt: skip
    return render(request, "web/memories.html", context, status=status)


@login_required
@require_POST
def document_upload_view(request):
    """The "Add a document" form: the same service as `POST /api/v1/documents`."""
    upload = request.FILES.get("file")
    if upload is None:
        return memories_page(request, upload_error=_("Choose a file to upload."), status=422)
    if upload.size > settings.DOCUMENT_MAX_BYTES:
        message = _("The file is larger than %(limit)s bytes.") % {"limit": settings.DOCUMENT_MAX_BYTES}
        return memories_page(request, upload_error=message, status=413)
    try:
        document, created = document_upload(
            user=request.user, data=upload.read(), filename=upload.name or "",
            scope=request.POST.get("scope", "user"), scope_key=request.POST.get("scope_key", "").strip() or None,
        )  # fmt: skip
    except ApplicationError as exc:
        return memories_page(request, upload_error=service_message(exc), status=exc.status_code)
    query = urlencode({"uploaded": document.pk, **({} if created else {"again": 1})})
    return redirect(f"{reverse('web-memories')}?{query}")


@login_required_htmx
@require_POST
def memory_delete_view(request, memory_id):

    try:
        memory = memory_get_for_user(user=request.user, memory_id=memory_id)
    except Http404:
        if not request.htmx:
            raise
        # Deleted in another tab, or never the reader's to see: said in place of the card.
        message = _("This memory is no longer there.")
        return render(request, "web/_error.html", {"message": message}, status=404)
    try:
        memory_delete(memory=memory, user=request.user, reason="web")
    except ApplicationError as exc:
        return render(request, "web/_error.html", {"message": service_message(exc)}, status=exc.status_code)
    if request.htmx:
        return render(request, "web/_deleted.html")
    return redirect("web-memories")
