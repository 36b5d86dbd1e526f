"""Context for agents (`POST /api/v1/context`): selection, budget, prompt, freshness."""

from ninja import Router

from almanac.auth import acting_user, request_tenant
from almanac.context.schemas import ContextIn, ContextOut
from almanac.context.services import context_build

router = Router(tags=["context"])


@router.post("", response=ContextOut, summary="Context for the next LLM call")
def build_context(request, payload: ContextIn):
    user = acting_user(request, payload.user)
    data = payload.dict(exclude={"user"})
    return context_build(user=user, tenant=request_tenant(request), **data)
