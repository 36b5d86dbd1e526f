"""Skills: versioned JSON-schema contracts (`Skill`) and the record of every run (`SkillRun`)."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords


class Skill(models.Model):
    """A named capability. Built-in rows mirror Python skills; the others are prompt-only."""

    name = models.SlugField(max_length=100, unique=True)
    version = models.CharField(max_length=40, default="1")
    description = models.TextField(blank=True)
    input_schema = models.JSONField(default=dict, blank=True)
    output_schema = models.JSONField(default=dict, blank=True)
    prompt = models.TextField(
        blank=True,
        help_text=(
            "Prompt-only skills: the system prompt. {field} names that input field; the values"
            " themselves go to the model as delimited data, never as instructions."
        ),
    )
    events = models.JSONField(
        default=list, blank=True, help_text='Domain events this skill runs on, e.g. ["session.ended"].'
    )
    enabled = models.BooleanField(default=True)
    builtin = models.BooleanField(default=False, editable=False)

    class OutputTo(models.TextChoices):
        NONE = "none", _("nowhere (the run log only)")
        MEMORY = "memory", _("memories")
        SECTION = "section", _("a page section")

    # Where a prompt skill's validated output goes when an event runs it
    # (skills.prompt_skill.output_keep; docs/llm.md, How to write a prompt skill).
    output_to = models.CharField(
        _("output goes to"), max_length=10, choices=OutputTo.choices, default=OutputTo.NONE
    )
    output_field = models.CharField(
        _("output field kept"),
        max_length=100,
        blank=True,
        help_text=_("The output field whose text is kept: a string, or a list of strings (one memory each)."),
    )
    output_scope = models.CharField(
        _("memory scope"),
        max_length=300,
        blank=True,
        help_text=_(
            "Empty: the event's scope (else the acting user's own); or user, tenant, dept:<key>, project:<key>."
        ),
    )
    output_kind = models.CharField(_("memory kind"), max_length=16, blank=True)
    output_memory_type = models.CharField(_("memory type"), max_length=16, default="semantic")
    output_page = models.CharField(
        _("page title"),
        max_length=300,
        blank=True,
        help_text=_('Page section: the title of its page; empty: the output\'s field "page".'),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords()

    class Meta:
        verbose_name = _("skill")
        verbose_name_plural = _("skills")
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class SkillRun(models.Model):
    """One call of `skills.services.skill_run` (append-only)."""

    class Status(models.TextChoices):
        SUCCESS = "success", "success"
        FAILED = "failed", "failed"
        FALLBACK = "fallback", "fallback (LLM failed, offline result)"
        SKIPPED = "skipped", "skipped (an event made by a prompt skill's own output)"

    skill_name = models.CharField(max_length=100)
    version = models.CharField(max_length=40, blank=True)
    trigger = models.CharField(
        max_length=120,
        default="api",
        help_text="what ran it: api, event:<name>, schedule, admin (or the service that called it)",
    )
    tenant = models.ForeignKey("almanac.Tenant", null=True, blank=True, on_delete=models.SET_NULL)
    input_digest = models.CharField(max_length=64, help_text="sha256 of the canonical JSON input")
    input = models.JSONField(default=dict, blank=True)
    input_truncated = models.BooleanField(default=False)
    output = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    used_llm = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="LLM requests made")
    duration_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    kept = models.JSONField(
        null=True, blank=True, help_text='where the output was kept: {"memories": [ids]} or {"section": id}'
    )
    event_key = models.CharField(max_length=64, blank=True, help_text="Event delivery id (bus runs)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("skill run")
        verbose_name_plural = _("skill runs")
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["skill_name", "-created_at"], name="skills_run_skill_created"),
            models.Index(fields=["status", "-created_at"], name="skills_run_status_created"),
            models.Index(fields=["trigger", "-created_at"], name="skills_run_trigger_created"),
            models.Index(fields=["input_digest"], name="skills_run_digest"),
            models.Index(
                fields=["event_key"], name="skills_run_event_key", condition=~models.Q(event_key="")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.skill_name} {self.status} #{self.pk}"


class SkillOptIn(models.Model):
    """A user's choice to have a scheduled skill run for them (the weekly report): the
    schedule (`skills.tasks`) runs it for every opted-in user every `schedule_days` of the skill."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skill_opt_ins")
    skill_name = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)
    last_run_at = models.DateTimeField(null=True, blank=True, help_text="when the schedule last ran it")

    class Meta:
        verbose_name = _("skill opt-in")
        verbose_name_plural = _("skill opt-ins")
        constraints = [
            models.UniqueConstraint(fields=["user", "skill_name"], name="skills_optin_unique_user_skill"),
        ]

    def __str__(self) -> str:
        return f"{self.skill_name} for {self.user_id}"
