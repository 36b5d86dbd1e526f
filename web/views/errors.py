"""Error pages: 400, 403, 404, 405, 500 and a refused form (CSRF), in the reader's language, in every
mode (Django's technical pages are never served: config/settings.py, DEBUG). The agent API's
paths get its JSON errors instead (`{"detail": …}`)."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader

API_PREFIXES = ("/api/", "/mcp")


def _for_api(request) -> bool:
    return request.path.startswith(API_PREFIXES)


def bad_request(request, exception=None):
    """Input the site cannot use: a value the database refuses (config.middleware's
    BadInputMiddleware), a request Django finds suspicious."""
    if _for_api(request):
        return JsonResponse({"detail": "bad request"}, status=400)
    return render(request, "400.html", status=400)


def method_not_allowed(request):
    """A form's address opened as a page (a bookmark, a reload): said, not a blank page."""
    return render(request, "405.html", status=405)


def permission_denied(request, exception=None):
    if _for_api(request):
        return JsonResponse({"detail": "permission denied"}, status=403)
    return render(request, "403.html", status=403)


def page_not_found(request, exception=None):
    if _for_api(request):
        return JsonResponse({"detail": f"not found: {request.path}"}, status=404)
    return render(request, "404.html", status=404)


def server_error(request):
    """Rendered without the request's context: no session or user lookup, so the page still
    comes when the database is what failed."""
    if _for_api(request):
        return JsonResponse(
            {"detail": "internal error: the server could not answer (it is logged)"}, status=500
        )
    return HttpResponse(loader.get_template("500.html").render({}), status=500)


def csrf_failure(request, reason=""):
    """A form refused by the CSRF check (sent from a stale page, or without the cookie)."""
    if _for_api(request):
        return JsonResponse({"detail": f"CSRF check failed: {reason}"}, status=403)
    return render(request, "403_csrf.html", {"no_cookie": "cookie" in reason.lower()}, status=403)
