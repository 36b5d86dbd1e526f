"""Documents in the admin: the list of those the admin may read, and an upload form that goes
through the same service as the API (`document_upload`), for a user of the admin's tenant."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from almanac.admin_mixins import TenantScopedAdminMixin
from almanac.errors import ApplicationError
from documents.models import Document
from documents.permissions import admin_sees_every_document
from documents.services.documents import document_delete, document_upload

SCOPES = [("user", "user"), ("dept", "dept"), ("project", "project"), ("tenant", "tenant")]


class DocumentUploadForm(forms.ModelForm):
    """The upload is made while the form is validated: what the service refuses (a scope the
    user is not in, a file of another type, one too large) is a form error, the input kept."""

    request = None  # set by DocumentAdmin.get_form
    file = forms.FileField()
    scope = forms.ChoiceField(choices=SCOPES, initial="user")

    class Meta:
        model = Document
        fields = ["owner", "scope", "scope_key"]
        labels = {"owner": _("uploaded for (user)")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["owner"].required = True
        self.fields["scope_key"].required = False
        self.written = None

    def _post_clean(self):
        super()._post_clean()
        if self.errors:
            return
        upload = self.cleaned_data["file"]
        try:
            self.written, _ = document_upload(
                user=self.cleaned_data["owner"],
                data=upload.read(),
                filename=upload.name or "",
                scope=self.cleaned_data["scope"],
                scope_key=self.cleaned_data.get("scope_key") or None,
                actor=self.request.user,
            )
        except ApplicationError as exc:
            self.add_error(None, exc.message)


@admin.register(Document)
class DocumentAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    list_display = ["id", "filename", "format", "owner", "scope", "scope_key", "status", "pages", "characters",
                    "size", "created_at"]  # fmt: skip
    list_filter = ["status", "format", "scope", "created_at"]
    search_fields = ["filename", "owner__username", "scope_key", "sha256"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner"]
    readonly_fields = ["tenant", "owner", "scope", "scope_key", "acl", "filename", "format", "size", "sha256",
                       "path", "status", "reason", "pages", "characters", "created_at", "updated_at"]  # fmt: skip
    date_hierarchy = "created_at"

    def get_queryset(self, request):
        qs = (
            Document.objects.all()
            if admin_sees_every_document(request.user)
            else Document.objects.visible_to(request.user)
        )
        return qs.select_related("owner").defer("page_texts")

    def get_fields(self, request, obj=None):
        return ["owner", "file", "scope", "scope_key"] if obj is None else self.readonly_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = DocumentUploadForm
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"request": request}) if obj is None else form

    def has_change_permission(self, request, obj=None):
        return False  # a document is uploaded or deleted, never edited

    def save_model(self, request, obj, form, change):
        # Stored by the service while the form was validated (DocumentUploadForm).
        obj.pk, obj.filename = form.written.pk, form.written.filename

    def delete_model(self, request, obj):
        document_delete(document=obj, user=request.user, reason="admin")

    def delete_queryset(self, request, queryset):
        for document in queryset:
            document_delete(document=document, user=request.user, reason="admin")
