"""Context for agents (`POST /api/v1/context`): selection, budget, prompt, freshness."""

from django.http import JsonResponse
from ninja import Router

from almanac.auth import acting_user, request_tenant
from context.schemas import ContextIn, ContextOut
from context.services import context_build

router = Router(tags=["context"])


# The operation id predates the app's move out of `almanac`: generated clients keep it.
@router.post(
    "",
    response=ContextOut,
    summary="Context for the next LLM call",
    operation_id="almanac_context_api_build_context",
)
def build_context(request, payload: ContextIn):
    user = acting_user(request, payload.user)
    data = payload.dict(exclude={"user"})
    # The service returns exactly ContextOut's shape (a test validates it against the
    # schema); having ninja validate ~100 nested objects again cost ~8% of a call's CPU.
    key = getattr(request, "agent_key", None)
    return JsonResponse(
        context_build(user=user, tenant=request_tenant(request), via="api", agent_key=key, **data)
    )
