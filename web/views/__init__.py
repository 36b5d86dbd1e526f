"""The employee web UI: search, wiki pages, own memories, a context preview, settings.

Every view acts as the logged-in user and reads through the same selectors (and so the
same access filter) as the agent API.
"""
