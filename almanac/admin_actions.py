"""An admin action that changes something hard to undo asks first, on its own page
(Django's convention for actions, as "Delete selected" does): the first POST answers with
this page; its "Yes" posts the action again with `post=yes`."""

from __future__ import annotations

from django.contrib.admin import helpers
from django.template.response import TemplateResponse


def confirmation_page(model_admin, request, queryset, *, action: str, title, question, choices=None):
    """The page asking to confirm `action` on `queryset`. `choices`: (name, label, [(value,
    text)]) of one radio choice the confirmation carries (the merge's survivor)."""
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": title,
        "question": question,
        "objects": list(queryset),
        "action": action,
        "choices": choices,
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
    }
    return TemplateResponse(request, "admin/almanac/action_confirmation.html", context)
