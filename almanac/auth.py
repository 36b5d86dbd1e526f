"""API authentication (docs/api.md, Auth): agent keys by Bearer token, or a Django session."""

from __future__ import annotations

from django.http import Http404
from ninja.errors import AuthenticationError, HttpError
from ninja.security import HttpBearer, SessionAuth

from almanac import selectors
from almanac.services.keys import agentkey_touch
from almanac.services.users import user_name, user_resolve


class AgentKeyAuth(HttpBearer):
    def authenticate(self, request, token):
        key = selectors.agentkey_for_secret(token)
        if key is None:
            # A presented but unknown/revoked key is a 401 even if a session cookie exists.
            raise AuthenticationError()
        agentkey_touch(key=key)
        request.agent_key = key
        return key


class OptionalSessionAuth(SessionAuth):
    """Session auth that steps aside when an Authorization header is present."""

    def __call__(self, request):
        if request.headers.get("Authorization"):
            return None
        if not request.user.is_authenticated:
            return None  # neither a key nor a login: a 401, before any CSRF check can say 403
        return super().__call__(request)


api_auth = [AgentKeyAuth(), OptionalSessionAuth()]


def request_tenant(request):
    key = getattr(request, "agent_key", None)
    if key is not None:
        return key.tenant
    return selectors.user_tenant(request.user)


def acting_key(request):
    """The call's agent key, which must be allowed to act for users (else 403); None for a session.

    Every endpoint that reads or writes a user's data passes through here, also those that
    find the user from the object (a session) instead of from `user`.
    """
    key = getattr(request, "agent_key", None)
    if key is not None and not key.can_act_for_users:
        raise HttpError(403, "this agent key may not act for users")
    return key


def user_ref(request, ref: str | None) -> str | None:
    """`user` as the body gave it, else as the query string did (docs/api.md, Auth: either works)."""
    return ref or request.GET.get("user") or None


def acting_user(request, ref: str | None):
    """The user a call acts for: `ref` (the body's `user`, else the `user` query parameter).

    Agent key: `ref` (a name in the key's tenant, or an e-mail) must name a user of that
    tenant, else 404; the same name in another tenant is another person, never found here.
    Session: `ref` may be omitted or name the session user; naming anyone else is a 403.
    """
    ref = user_ref(request, ref)
    key = acting_key(request)
    if key is not None:
        if not ref:
            raise HttpError(422, "'user' is required when calling with an agent key")
        user = user_resolve(tenant=key.tenant, ref=ref)
        if user is None:
            raise Http404("user not found")
        return user
    user = request.user
    named = ref.strip() if ref else ""
    if (
        named
        and named not in (user_name(user), user.username)
        and named.upper() != (user.email or "").upper()
    ):
        raise HttpError(403, "a session user may not act as someone else")
    if selectors.user_tenant(user) is None:
        raise Http404("user not found")
    return user


def require_connector_key(request):
    key = getattr(request, "agent_key", None)
    if key is None or not key.can_push_events:
        raise HttpError(403, "an agent key with the connector permission is required")
    return key
