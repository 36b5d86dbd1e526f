"""The reader's settings: which scheduled skills run for them."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy

from skills.optins import skill_optin_set, skill_optins

# The scheduled skills a reader may opt in to, as the settings page names them.
SCHEDULED_SKILLS = {
    "weekly_report": gettext_lazy(
        "Weekly report: every 7 days, the highlights, decisions, open items and upcoming dates of my"
        " week (from what I may see), kept as a memory only I can read"
    ),
}


@login_required
def settings_view(request):
    """The reader's settings: which scheduled skills run for them (the weekly report)."""
    if request.method == "POST":
        chosen = set(request.POST.getlist("skills"))
        for name in SCHEDULED_SKILLS:
            skill_optin_set(user=request.user, name=name, on=name in chosen)
        return redirect(f"{reverse('web-settings')}?saved=1")
    on = skill_optins(user=request.user)
    skills = [{"name": name, "label": label, "on": name in on} for name, label in SCHEDULED_SKILLS.items()]
    return render(request, "web/settings.html", {"skills": skills, "saved": request.GET.get("saved") == "1"})
