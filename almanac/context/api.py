"""Context for agents (`POST /api/v1/context`): selection, budget, prompt, freshness."""

from django.http import JsonResponse
from ninja import Router

from almanac.auth import acting_user, request_tenant
from almanac.context.schemas import ContextIn, ContextOut
from almanac.context.services import context_build

router = Router(tags=["context"])


@router.post("", response=ContextOut, summary="Context for the next LLM call")
def build_context(request, payload: ContextIn):
    user = acting_user(request, payload.user)
    data = payload.dict(exclude={"user"})
    # The service returns exactly ContextOut's shape (a test validates it against the
    # schema); having ninja validate ~100 nested objects again cost ~8% of a call's CPU.
    return JsonResponse(context_build(user=user, tenant=request_tenant(request), **data))
