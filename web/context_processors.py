"""What every page's navigation needs: which of its sections the reader is in (for
`aria-current`)."""

from __future__ import annotations

from django.urls import reverse

# Navigation sections by the URL their pages start with (the search is the home page too).
SECTIONS = (
    ("wiki", "web-wiki"),
    ("memories", "web-memories"),
    ("context", "web-context"),
    ("settings", "web-settings"),
    ("account", "password_change"),
)


def navigation(request) -> dict:
    path = request.path
    if path in (reverse("home"), reverse("web-search")):
        return {"nav_current": "search"}
    for section, url_name in SECTIONS:
        if path.startswith(reverse(url_name)):
            return {"nav_current": section}
    return {"nav_current": ""}
