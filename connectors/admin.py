from django import forms
from django.contrib import admin, messages
from django.db.models import Max
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from almanac.admin_audit import AuditedAdminMixin
from almanac.admin_mixins import HiddenFieldsAdminMixin, ReadOnlyAdminMixin, TenantScopedAdminMixin
from almanac.errors import ApplicationError
from connectors import selectors
from connectors.crypto import ENV_PREFIX, credentials_encode
from connectors.models import Event, ExternalIdentity, MembershipClock, Source, SyncCursor
from connectors.permissions import configures_endpoints, events_visible, reads_item_contents
from connectors.services.poller import is_pollable
from connectors.services.sources import source_reset_backoff

STATE_LABELS = {
    "ok": _("ok"),
    "never": _("never synced"),
    "backoff": _("backing off"),
    "error": _("failing"),
}


def duration_text(seconds: float) -> str:
    """A lag or a wait as one rounded unit: "45 s", "12 min", "3 h", "2 d"."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            n = seconds // size
            return {
                "d": ngettext("%(n)d day", "%(n)d days", n),
                "h": ngettext("%(n)d h", "%(n)d h", n),
                "min": ngettext("%(n)d min", "%(n)d min", n),
            }[unit] % {"n": n}
    return ngettext("%(n)d s", "%(n)d s", seconds) % {"n": seconds}


class SyncCursorInline(admin.StackedInline):
    model = SyncCursor
    extra = 0
    readonly_fields = [
        "last_attempt_at",
        "last_success_at",
        "backoff_until",
        "consecutive_failures",
        "last_error",
    ]


# Where a source connects or what it reads on the server: the installation's to decide.
# Tenant staff pointing a source at their own host would have the worker send it the
# stored token (or, with env:VAR, any of the server's secrets); a folder, any file it can read.
ENDPOINT_KEYS = ("base_url", "url", "host", "port", "ssl", "starttls", "folder")
# What routes a webhook to a source: one tenant's claim only.
CLAIM_KEYS = {Source.Kind.SLACK: "team_id", Source.Kind.GITHUB: "repos"}


class SourceForm(forms.ModelForm):
    """Credentials are write-only: a new value is encrypted (or kept as env:VAR); the stored
    value is never shown. Only a superuser may name the server's environment (env:VAR) or
    set a source's endpoint (ENDPOINT_KEYS); a workspace or repository another tenant's
    source claims cannot be claimed again."""

    user = None  # the admin user, set by SourceAdmin.get_form

    new_credentials = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text=_("token/password, a JSON object, or env:VAR_NAME; leave empty to keep the stored one"),
    )

    class Meta:
        model = Source
        fields = ["tenant", "kind", "name", "config", "enabled", "poll_minutes", "departments", "projects"]

    def clean_new_credentials(self):
        value = self.cleaned_data["new_credentials"].strip()
        if not value:
            return None
        if value.startswith(ENV_PREFIX) and not configures_endpoints(self.user):
            raise forms.ValidationError(
                "only a superuser may point credentials at the server's environment (env:VAR)"
            )
        try:
            return credentials_encode(value)
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from exc

    def clean_config(self):
        config = self.cleaned_data.get("config")
        if not isinstance(config, dict):
            raise forms.ValidationError(_("config must be a JSON object"))
        before = (self.instance.config if self.instance.pk else None) or {}
        changed = [key for key in ENDPOINT_KEYS if config.get(key) != before.get(key)]
        if changed and not configures_endpoints(self.user):
            raise forms.ValidationError(
                f"only a superuser may set {', '.join(changed)}: where a source connects or "
                "what it reads on the server is the installation's to decide"
            )
        return config

    def clean(self):
        data = super().clean()
        kind, config, tenant = data.get("kind"), data.get("config"), data.get("tenant")
        field = CLAIM_KEYS.get(kind)
        if field and isinstance(config, dict) and tenant is not None:
            values = config.get(field)
            values = values if isinstance(values, list) else [values] if values else []
            others = Source.objects.filter(kind=kind).exclude(tenant=tenant)
            if self.instance.pk:
                others = others.exclude(pk=self.instance.pk)
            for value in values:
                lookup = (
                    {f"config__{field}__contains": [value]}
                    if field == "repos"
                    else {f"config__{field}": value}
                )
                if others.filter(**lookup).exists():
                    self.add_error(
                        "config",
                        _("%(value)r is claimed by another tenant's %(kind)s source")
                        % {"value": value, "kind": kind},
                    )
        return data

    def save(self, commit=True):
        if self.cleaned_data.get("new_credentials"):
            self.instance.credentials = self.cleaned_data["new_credentials"]
        return super().save(commit=commit)


@admin.register(Source)
class SourceAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    form = SourceForm
    list_display = [
        "name",
        "tenant",
        "kind",
        "enabled",
        "sync_state",
        "last_success",
        "backoff",
        "error",
    ]
    list_filter = ["kind", "enabled", "tenant"]
    search_fields = ["name", "tenant__slug"]
    list_select_related = ["tenant", "cursor"]
    inlines = [SyncCursorInline]
    actions = ["poll_now", "reset_backoff"]
    readonly_fields = ["sync_status", "created_at", "credentials_kind"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"user": request.user})

    @admin.display(description=_("stored credentials"))
    def credentials_kind(self, obj):
        if not obj.credentials:
            return _("none")
        return obj.credentials if obj.credentials.startswith(ENV_PREFIX) else _("encrypted")

    @staticmethod
    def _cursor(obj):
        try:
            return obj.cursor
        except SyncCursor.DoesNotExist:
            return None

    def get_queryset(self, request):
        # The newest event too: the state and "last synced" the web UI and the context call
        # report (an imported or pushed source has no poll to succeed).
        return super().get_queryset(request).annotate(last_event_at=Max("events__received_at"))

    @admin.display(description=_("state"))
    def sync_state(self, obj):
        state = selectors.source_state(obj)
        label = STATE_LABELS.get(state["state"], state["state"])
        if state["stale"]:
            return format_html('<strong style="color:var(--error-fg,#ba2121)">{} · {}</strong>', label,
                               _(state["reason"]))  # fmt: skip
        return label

    @admin.display(description=_("last synced"))
    def last_success(self, obj):
        state = selectors.source_state(obj)
        if state["lag_seconds"] is None:
            return "—"
        template = _("%(duration)s behind") if state["stale"] else _("%(duration)s ago")
        return template % {"duration": duration_text(state["lag_seconds"])}

    @admin.display(description=_("backoff"))
    def backoff(self, obj):
        cursor = self._cursor(obj)
        if cursor is None or cursor.backoff_until is None or cursor.backoff_until <= timezone.now():
            return "—"
        seconds = (cursor.backoff_until - timezone.now()).total_seconds()
        return _("for %(duration)s") % {"duration": duration_text(seconds)}

    @admin.display(description=_("last error"))
    def error(self, obj):
        cursor = self._cursor(obj)
        if cursor is None or not cursor.last_error or not cursor.consecutive_failures:
            return "—"
        return format_html(
            '<span style="color:var(--error-fg,#ba2121)" title="{}">{}</span>',
            cursor.last_error, Truncator(cursor.last_error).chars(80),
        )  # fmt: skip

    @admin.display(description=_("sync status"))
    def sync_status(self, obj):
        """The edit page's summary: state, last sync, backoff and the error in full."""
        if obj is None or obj.pk is None:
            return "—"
        obj.last_event_at = obj.events.order_by("-received_at").values_list("received_at", flat=True).first()
        cursor = self._cursor(obj)
        rows = [
            (_("state"), self.sync_state(obj)),
            (_("last synced"), self.last_success(obj)),
            (_("backoff"), self.backoff(obj)),
            (_("failures in a row"), cursor.consecutive_failures if cursor else 0),
            (_("last error"), format_html('<pre style="white-space:pre-wrap;color:var(--error-fg,#ba2121)">{}</pre>',
                                         cursor.last_error) if cursor and cursor.last_error else "—"),
        ]  # fmt: skip
        return format_html("<table>{}</table>", format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows))

    @admin.action(description=_("Poll now"))
    def poll_now(self, request, queryset):
        from django_q.tasks import async_task

        sources = [s for s in queryset if is_pollable(s) and s.enabled]
        for source in sources:
            async_task("connectors.tasks.source_poll_task", source.id, True)
        skipped = [s.name for s in queryset if s not in sources]
        note = (
            _("; not polled (disabled, or nothing to poll: no token, folder, URL…): %(names)s")
            % {"names": ", ".join(skipped)}
            if skipped
            else ""
        )
        self.message_user(
            request, _("poll queued for %(n)d source(s)") % {"n": len(sources)} + note, messages.SUCCESS
        )

    @admin.action(description=_("Reset backoff"))
    def reset_backoff(self, request, queryset):
        reset = sum(source_reset_backoff(source=source) for source in queryset)
        self.message_user(
            request,
            _("backoff reset for %(n)d of %(total)d source(s)") % {"n": reset, "total": queryset.count()},
            messages.SUCCESS,
        )


@admin.register(SyncCursor)
class SyncCursorAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    tenant_field = "source__tenant"
    list_display = [
        "source",
        "last_attempt_at",
        "last_success_at",
        "backoff_until",
        "consecutive_failures",
        "last_error",
    ]
    list_filter = ["source__kind"]
    search_fields = ["source__name", "last_error"]
    list_select_related = ["source__tenant"]


@admin.register(MembershipClock)
class MembershipClockAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """When each source last said who is in a container (ingest's last-write-wins clocks)."""

    tenant_field = "group__tenant"
    list_display = ["group", "origin", "user", "at"]
    list_filter = ["origin"]
    search_fields = ["group__key", "user__username"]
    list_select_related = ["group", "user"]


@admin.register(ExternalIdentity)
class ExternalIdentityAdmin(AuditedAdminMixin, TenantScopedAdminMixin, admin.ModelAdmin):
    list_display = ["handle", "source_kind", "display_name", "user", "tenant"]
    list_filter = ["source_kind", "tenant", ("user", admin.EmptyFieldListFilter)]
    search_fields = ["handle", "display_name", "user__username", "user__email"]
    list_select_related = ["user", "tenant"]
    autocomplete_fields = ["user"]


@admin.register(Event)
class EventAdmin(
    HiddenFieldsAdminMixin, TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin
):  # the inbox is append-only
    """Staff users who are not superusers see only events of containers whose access group
    they are in, and no content (title, text, raw payload).

    An event carries no acl. Its container key is the container's group (the wiki's sections
    get that acl); `container_public` is not trusted, as it is only what the event said
    then: a channel turned private since must hide its old events too. Content stays
    hidden even so: the inbox keeps what the wiki dropped (deleted messages, recalled
    e-mails).
    """

    content_fields = ["title", "text", "raw"]
    hidden_fields = ("title", "text", "raw")
    list_display = [
        "external_id",
        "version",
        "kind",
        "source",
        "occurred_at",
        "container_key",
        "author",
        "state",
    ]
    list_filter = ["kind", "state", "source__kind", "source__name", "container_public"]
    search_fields = ["external_id", "title", "text", "author", "container_key", "thread_key"]
    list_select_related = ["source__tenant"]
    date_hierarchy = "occurred_at"
    readonly_fields = ["item_versions"]

    def get_queryset(self, request):
        return events_visible(super().get_queryset(request), user=request.user)

    def get_exclude(self, request, obj=None):
        exclude = list(super().get_exclude(request, obj) or [])
        return exclude if reads_item_contents(request.user) else [*exclude, *self.content_fields]

    @admin.display(description=_("versions of this item"))
    def item_versions(self, obj):
        return ", ".join(f"v{e.version} {e.kind}" for e in selectors.event_item_history(event=obj))
