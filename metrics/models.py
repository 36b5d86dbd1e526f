"""What the outcome metrics are computed from (docs/operations.md, "Metrics").

`ContextCall`: one row per context call, written off the request path (metrics.recorder).
`DailyFigure`: each figure per tenant and day, as the periodic rollup (metrics.rollup) last
computed it; the dashboard's charts and the `/metrics` gauges read these rows.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _

from almanac.models import AgentKey, Tenant
from memories.models import ConversationSession


def _ids(verbose_name):
    return ArrayField(models.BigIntegerField(), default=list, blank=True, verbose_name=verbose_name)


class ContextCall(models.Model):
    """One context call made for `user`: by an agent key (API or MCP) or the web preview."""

    class Via(models.TextChoices):
        API = "api", _("API")
        MCP = "mcp", _("MCP")
        PREVIEW = "preview", _("web preview")

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+", verbose_name=_("tenant"))
    agent_key = models.ForeignKey(
        AgentKey,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("agent key"),
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="context_calls",
        verbose_name=_("user"),
    )
    session = models.ForeignKey(
        ConversationSession,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("session"),
    )
    via = models.CharField(_("via"), max_length=16, choices=Via.choices, default=Via.API)
    at = models.DateTimeField(_("at"))
    task = models.TextField(_("task"), help_text=_("normalised: lower case, punctuation and spacing folded"))
    task_digest = models.CharField(
        _("task digest"), max_length=64, help_text=_("SHA-256 of the normalised task")
    )
    passes = models.PositiveSmallIntegerField(
        _("pass"), default=0, help_text=_("0 for a first pass, n after a cursor")
    )
    latency_ms = models.FloatField(_("latency (ms)"))
    tokens = models.PositiveIntegerField(
        _("tokens"), default=0, help_text=_("tokens of the context returned")
    )
    memory_ids = _ids(_("memories returned"))
    section_ids = _ids(_("page sections returned"))
    page_ids = _ids(_("pages returned"))
    # Judged by the rollup while the adoption window is open (docs/operations.md, "Hit rate").
    repeat_of = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("repeat of"),
    )
    adopted_memory_ids = _ids(_("memories adopted"))
    adopted_section_ids = _ids(_("page sections adopted"))

    class Meta:
        verbose_name = _("context call")
        verbose_name_plural = _("context calls")
        indexes = [
            models.Index(fields=["tenant", "-at"], name="metrics_call_tenant_at"),
            models.Index(fields=["user", "-at"], name="metrics_call_user_at"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.at:%Y-%m-%d %H:%M} {self.task[:40]}"


class DailyFigure(models.Model):
    """One figure of one day: `name` as exported (without `almanac_`), `key` its label
    values joined by "/" ("" when it has none). `tenant` is null for installation-wide ones."""

    tenant = models.ForeignKey(
        Tenant, on_delete=models.CASCADE, null=True, blank=True, related_name="+", verbose_name=_("tenant")
    )
    day = models.DateField(_("day"))
    name = models.CharField(_("name"), max_length=64)
    key = models.CharField(_("labels"), max_length=200, blank=True, default="")
    value = models.FloatField(_("value"))
    computed_at = models.DateTimeField(_("computed at"), auto_now=True)

    class Meta:
        verbose_name = _("daily figure")
        verbose_name_plural = _("daily figures")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "day", "name", "key"], nulls_distinct=False, name="metrics_figure_unique"
            )
        ]
        indexes = [models.Index(fields=["name", "-day"], name="metrics_figure_name_day")]

    def __str__(self) -> str:
        return f"{self.day} {self.name}{{{self.key}}} = {self.value}"
