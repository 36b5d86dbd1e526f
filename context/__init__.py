"""Context for agents (`POST /api/v1/context`): selection, budget, prompt, freshness."""
