from ninja import Router

router = Router(tags=["memories"])
sessions_router = Router(tags=["sessions"])
