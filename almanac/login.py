"""Logging in when names are per tenant (the web UI's login page, the admin's, `Client.login`).

A person logs in with their name or e-mail and their password; the organisation (the
tenant's slug or name) is asked for too, and needed only when their name is used in
more than one organisation with that same password. Every lookup goes through
`almanac.services.users.user_login_candidates`; the password decides between the
candidates, so a name used in several organisations needs no more than the password.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from almanac.services.users import user_login_candidates

# Set on the request by the backend when the password fits several people (see the form).
AMBIGUOUS = "_almanac_login_ambiguous"


class TenantBackend(ModelBackend):
    """Django's ModelBackend (permissions, `get_user`), with the user found per tenant."""

    def authenticate(self, request, username=None, password=None, tenant="", **kwargs):
        username = username if username is not None else kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        candidates = user_login_candidates(ref=username, tenant=tenant or "")
        if not candidates:
            # Hash once anyway, so that an unknown name takes as long as a wrong password.
            get_user_model()().set_password(password)
            return None
        fits = [u for u in candidates if u.check_password(password) and self.user_can_authenticate(u)]
        if len(fits) > 1:
            if request is not None:
                setattr(request, AMBIGUOUS, True)
            return None  # never guess between two people
        return fits[0] if fits else None


class LoginForm(AuthenticationForm):
    organisation = forms.CharField(
        label=_("Organisation"),
        required=False,
        max_length=200,
        help_text=_("Needed only when your name is used in more than one organisation here."),
    )
    field_order = ["username", "password", "organisation"]

    def __init__(self, request=None, *args, **kwargs):
        super().__init__(request, *args, **kwargs)
        self.fields["username"].label = _("Username or e-mail")
        if request is not None and request.GET.get("organisation"):  # a bookmarkable login page
            self.fields["organisation"].initial = request.GET["organisation"][:200]

    def clean(self):
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is not None and password:
            tenant = self.cleaned_data.get("organisation") or ""
            self.user_cache = authenticate(self.request, username=username, password=password, tenant=tenant)
            if self.user_cache is None:
                if getattr(self.request, AMBIGUOUS, False):
                    raise ValidationError(
                        _("This name is used in more than one organisation: enter yours."),
                        code="ambiguous_login",
                    )
                raise self.get_invalid_login_error()
            self.confirm_login_allowed(self.user_cache)
        return self.cleaned_data
