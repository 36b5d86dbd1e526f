"""The reader's memories as cards (edit, feedback, archive, delete with undo, delete
everywhere) and the document upload form beside them.

Every card action is a form POST that redirects (without JavaScript) or, asked by htmx,
answers the card's new HTML in its place. A change to a shared memory, and a delete
everywhere, first answer a confirm step (the same form again, with `confirm=1`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from almanac.errors import ApplicationError
from almanac.labels import group_label
from almanac.models import Department, Project
from documents.services.documents import document_upload
from memories.models import Feedback, Memory
from memories.permissions import can_modify, modifiable_ids
from memories.selectors import memory_get_for_user, memory_list
from memories.services.deleted import memory_restore_deleted
from memories.services.feedback import memory_feedback
from memories.services.memories import memory_delete, memory_update
from memories.services.purge import memory_purge
from web.views.common import PER_PAGE, login_required_htmx, service_message
from web.views.documents import document_rows, upload_audiences, upload_scope

# The card's two feedback buttons and the signal each sends (the API's `POST .../feedback`).
SIGNALS = {"useful": Feedback.Signal.ADOPTED, "wrong": Feedback.Signal.CORRECTED}
LISTED = ("active", "archived")


@dataclass
class Card:
    """A memory as its card shows it, in plain words for the reader."""

    memory: Memory
    owner: str
    visible_to: str
    origin: str
    shared: bool
    can_change: bool
    can_delete: bool
    signal: str = ""  # "useful" / "wrong": the reader's own last feedback


# --- Plain words ----------------------------------------------------------------------


def _unit_names(user) -> dict[str, str]:
    """Department and project keys of the reader's tenant → their names."""
    tenant_id = user.profile.tenant_id
    names = {
        f"dept:{k}": n for k, n in Department.objects.filter(tenant_id=tenant_id).values_list("key", "name")
    }
    names |= {
        f"project:{k}": n for k, n in Project.objects.filter(tenant_id=tenant_id).values_list("key", "name")
    }
    return names


def visible_to(memory: Memory, *, user, names: dict[str, str]) -> str:
    """Who may read `memory`, in plain words: "you", "Sales department", "everyone at Acme"
    (as the wiki and the documents say a group: `almanac.labels.group_label`)."""
    if memory.scope == Memory.Scope.USER:
        return _("you") if memory.owner_id == user.pk else _("its owner only")
    key = memory.acl[0]
    tenant = memory.scope == Memory.Scope.TENANT
    name = user.profile.tenant.name if tenant else names.get(key, memory.scope_key)
    return group_label(key=key, kind=memory.scope, name=name)


def _owner(memory: Memory, user) -> str:
    if memory.owner_id == user.pk:
        return _("you")
    if memory.owner is None:
        return _("a former colleague")
    profile = getattr(memory.owner, "profile", None)
    return (profile and (profile.display_name or profile.username)) or memory.owner.username


def _origin(memory: Memory, reason: str) -> str:
    """Where it came from: its meta's source, else the reason its first history row gives."""
    source = (memory.meta or {}).get("source") or reason.split(":")[0]
    return str(ORIGINS.get(source, ORIGINS["other"]))


ORIGINS = {
    "session": gettext_lazy("a conversation (session)"),
    "document": gettext_lazy("a document"),
    "compression": gettext_lazy("a summary of older memories"),
    "admin": gettext_lazy("an administrator"),
    "demo": gettext_lazy("an import"),
    "import": gettext_lazy("an import"),
    "api": gettext_lazy("an agent"),
    "other": gettext_lazy("an agent"),
}


def cards(memories, *, user) -> list[Card]:
    """Cards for `memories` (a page of them): a fixed number of queries whatever their number."""
    memories = list(memories)
    ids = [m.pk for m in memories]
    created = dict(
        Memory.history.filter(id__in=ids, history_type="+")
        .order_by("id", "history_id")
        .distinct("id")
        .values_list("id", "history_change_reason")
    )
    mine = dict(
        Feedback.objects.filter(memory_id__in=ids, user=user)
        .order_by("memory_id", "-created_at", "-id")
        .distinct("memory_id")
        .values_list("memory_id", "signal")
    )
    by_signal = {signal: name for name, signal in SIGNALS.items()}
    names = _unit_names(user)
    changeable = modifiable_ids(user=user, memories=memories, perm="change_memory")
    deletable = modifiable_ids(user=user, memories=memories, perm="delete_memory")
    return [
        Card(
            memory=m,
            owner=_owner(m, user),
            visible_to=visible_to(m, user=user, names=names),
            origin=_origin(m, created.get(m.pk) or ""),
            shared=m.scope != Memory.Scope.USER,
            can_change=m.pk in changeable,
            can_delete=m.pk in deletable,
            signal=by_signal.get(mine.get(m.pk), ""),
        )
        for m in memories
    ]


# --- The page -------------------------------------------------------------------------


@login_required
def memory_list_view(request):
    return memories_page(request)


def memories_page(request, *, upload_error: str = "", status: int = 200):
    """The memories page: the reader's memories as cards, their recent documents and the upload form."""
    memory_type = request.GET.get("type", "")
    listed = request.GET.get("status", "active")
    listed = listed if listed in LISTED else "active"
    q = request.GET.get("q", "").strip()[:200]
    memories = memory_list(user=request.user, memory_type=memory_type or None, status=listed, q=q)
    memories = Paginator(memories.select_related("owner__profile"), PER_PAGE).get_page(
        request.GET.get("page")
    )
    documents = document_rows(request.user)
    uploaded = request.GET.get("uploaded", "")
    deleted = request.GET.get("deleted", "")
    context = {"memories": memories, "cards": cards(memories, user=request.user), "type": memory_type,
               "status": listed, "q": q, "documents": documents,
               "uploaded": int(uploaded) if uploaded.isdigit() else None,
               "deleted": int(deleted) if deleted.isdigit() else None, "undo_seconds": settings.MEMORY_UNDO_SECONDS,
               "purged": request.GET.get("purged") == "1",
               "again": request.GET.get("again") == "1", "upload_error": upload_error,
               "audiences": upload_audiences(request.user), "audience": request.POST.get("audience", "user")}  # fmt: skip
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
    scope, scope_key = upload_scope(request.POST.get("audience", "user"))
    try:
        document, created = document_upload(
            user=request.user,
            data=upload.read(),
            filename=upload.name or "",
            scope=scope,
            scope_key=scope_key,
        )
    except ApplicationError as exc:
        return memories_page(request, upload_error=service_message(exc), status=exc.status_code)
    query = urlencode({"uploaded": document.pk, **({} if created else {"again": 1})})
    return redirect(f"{reverse('web-memories')}?{query}")


# --- The card's actions ---------------------------------------------------------------


def _answer(request, template: str, context: dict, status: int = 200):
    """The partial in place of the card (htmx), or the same partial as a whole page."""
    if request.htmx:
        return render(request, template, context, status=status)
    return render(request, "web/_memory_page.html", {"partial": template, **context}, status=status)


def _card(request, memory: Memory, *, status: int = 200, **extra):
    return _answer(
        request, "web/_memory_card.html", {"card": cards([memory], user=request.user)[0], **extra}, status
    )


def _listed(memory_id: int, *, status: str = "active"):
    query = "" if status == "active" else f"?status={status}"
    return redirect(f"{reverse('web-memories')}{query}#memory-{memory_id}")


def card_action(view):
    """The login guard of htmx views, and a memory not there (deleted in another tab, or
    never the reader's to see): the 404 page, or said in place of the card."""

    @functools.wraps(view)
    def wrapper(request, memory_id: int):
        try:
            return view(request, memory_id)
        except Http404:
            if not request.htmx:
                raise
            message = _("This memory is no longer there.")
            return render(request, "web/_error.html", {"message": message}, status=404)

    return login_required_htmx(wrapper)


def _refused(request, memory: Memory, perm: str):
    """403 with the card and why, unless the reader may `perm` this memory."""
    if can_modify(user=request.user, memory=memory, perm=perm):
        return None
    verb = "change" if perm == "change_memory" else "delete"
    message = service_message(ApplicationError(f"only the owner or a governor may {verb} this memory"))
    return _card(request, memory, status=403, error=message)


def _confirm(request, memory: Memory, *, action: str, message: str, button: str):
    """The confirm step: `message`, and the same POST again with confirm=1."""
    card = cards([memory], user=request.user)[0]
    context = {"card": card, "action": reverse(action, args=[memory.pk]), "message": message % {"visible": card.visible_to},
               "button": button}  # fmt: skip
    return _answer(request, "web/_memory_confirm.html", context)


def _confirmed(request, memory: Memory) -> bool:
    """A private memory needs no confirm step; a shared one the form's `confirm=1`."""
    return memory.scope == Memory.Scope.USER or request.POST.get("confirm") == "1"


@card_action
@require_http_methods(["GET"])
def memory_card_view(request, memory_id: int):
    """One card (htmx: "Cancel" of an edit or a confirm step); without JavaScript, the list at it."""
    memory = memory_get_for_user(user=request.user, memory_id=memory_id)
    return _card(request, memory) if request.htmx else _listed(memory.pk, status=memory.status)


def _edit_form(request, memory: Memory, content: str, *, error: str = "", status: int = 200):
    context = {"card": cards([memory], user=request.user)[0], "content": content, "error": error,
               "max_chars": settings.MEMORY_MAX_CONTENT_CHARS}  # fmt: skip
    return _answer(request, "web/_memory_edit.html", context, status)


@card_action
@require_http_methods(["GET", "POST"])
def memory_edit_view(request, memory_id: int):
    """Edit the text: the API's `PATCH /memories/{id}` (re-embedded, re-keyed, history and
    audit). A shared memory's form asks to confirm that everyone who sees it sees the change."""
    memory = memory_get_for_user(user=request.user, memory_id=memory_id)
    refused = _refused(request, memory, "change_memory")
    if refused:
        return refused
    card = cards([memory], user=request.user)[0]
    if request.method == "GET":
        return _answer(request, "web/_memory_edit.html", {"card": card, "content": memory.content})
    content = request.POST.get("content", "")
    if not _confirmed(request, memory):
        error = _("Tick the box to confirm that the change is for everyone who sees this memory.")
        return _answer(
            request, "web/_memory_edit.html", {"card": card, "content": content, "error": error}, 409
        )
    try:
        memory = memory_update(memory=memory, user=request.user, data={"content": content}, reason="web")
    except ApplicationError as exc:
        context = {"card": card, "content": content, "error": service_message(exc)}
        return _answer(request, "web/_memory_edit.html", context, exc.status_code)
    return _card(request, memory, notice=_("Saved.")) if request.htmx else _listed(memory.pk)


@card_action
@require_POST
def memory_feedback_view(request, memory_id: int):
    """ "Useful" / "wrong": the API's feedback (`adopted` / `corrected`), moving its quality."""
    memory = memory_get_for_user(user=request.user, memory_id=memory_id, statuses=("active",))
    signal = SIGNALS.get(request.POST.get("signal", ""))
    if signal is None:
        return _card(request, memory, status=422, error=_("Choose useful or wrong."))
    memory_feedback(memory=memory, user=request.user, signal=signal)
    return _card(request, memory, notice=_("Thank you: noted.")) if request.htmx else _listed(memory.pk)


def _set_status(request, memory_id: int, status: str, message: str, button: str, action: str):
    memory = memory_get_for_user(user=request.user, memory_id=memory_id, statuses=LISTED)
    refused = _refused(request, memory, "change_memory")
    if refused:
        return refused
    if not _confirmed(request, memory):
        return _confirm(request, memory, action=action, message=message, button=button)
    try:
        memory = memory_update(memory=memory, user=request.user, data={"status": status}, reason="web")
    except ApplicationError as exc:
        return _card(request, memory, status=exc.status_code, error=service_message(exc))
    return _card(request, memory) if request.htmx else _listed(memory.pk, status=status)


@card_action
@require_POST
def memory_archive_view(request, memory_id: int):
    """Archive: out of recall and context, kept, restorable."""
    message = _("This memory is shared with %(visible)s. Archiving it takes it out of their answers too.")
    return _set_status(
        request, memory_id, "archived", message, _("Archive for everyone"), "web-memory-archive"
    )


@card_action
@require_POST
def memory_unarchive_view(request, memory_id: int):
    """An archived memory back to active."""
    message = _("This memory is shared with %(visible)s. Restoring it puts it back into their answers too.")
    return _set_status(
        request, memory_id, "active", message, _("Restore for everyone"), "web-memory-unarchive"
    )


@card_action
@require_POST
def memory_delete_view(request, memory_id: int):
    """Delete, with an undo for MEMORY_UNDO_SECONDS (its history keeps it)."""
    memory = memory_get_for_user(user=request.user, memory_id=memory_id)
    refused = _refused(request, memory, "delete_memory")
    if refused:
        return refused
    if not _confirmed(request, memory):
        message = _("This memory is shared with %(visible)s. Deleting it removes it for all of them.")
        return _confirm(
            request, memory, action="web-memory-delete", message=message, button=_("Delete for everyone")
        )
    try:
        memory_delete(memory=memory, user=request.user, reason="web")
    except ApplicationError as exc:
        return _card(request, memory, status=exc.status_code, error=service_message(exc))
    if request.htmx:
        return render(
            request,
            "web/_memory_deleted.html",
            {"memory_id": memory_id, "undo_seconds": settings.MEMORY_UNDO_SECONDS},
        )
    return redirect(f"{reverse('web-memories')}?deleted={memory_id}")


@card_action
@require_POST
def memory_undo_view(request, memory_id: int):
    """Undo a delete (memories.services.deleted): the memory back as it was."""
    try:
        memory = memory_restore_deleted(user=request.user, memory_id=memory_id, reason="web:undo")
    except ApplicationError as exc:
        context = {"memory_id": memory_id, "error": service_message(exc)}
        return _answer(request, "web/_memory_deleted.html", context, exc.status_code)
    return (
        _card(request, memory, notice=_("Restored."))
        if request.htmx
        else _listed(memory.pk, status=memory.status)
    )


@card_action
@require_POST
def memory_purge_view(request, memory_id: int):
    """Delete everywhere: the API's purge (history, skill-run log, audit texts; audited).
    Always a confirm step first: it cannot be undone."""
    memory = memory_get_for_user(user=request.user, memory_id=memory_id)
    refused = _refused(request, memory, "delete_memory")
    if refused:
        return refused
    if request.POST.get("confirm") != "1":
        message = _(
            "Delete everywhere removes this memory, and its text from its history and from the logs of "
            "the skills that read it. This cannot be undone. Visible to: %(visible)s."
        )
        return _confirm(
            request, memory, action="web-memory-purge", message=message, button=_("Delete everywhere")
        )
    try:
        memory_purge(memory=memory, user=request.user, reason="web:purge")
    except ApplicationError as exc:
        return _card(request, memory, status=exc.status_code, error=service_message(exc))
    if request.htmx:
        return render(request, "web/_memory_purged.html")
    return redirect(f"{reverse('web-memories')}?purged=1")
