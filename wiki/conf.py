"""Settings of the wiki app (env-driven, see docs/wiki.md)."""

from almanac.env import envbool, envfloat, envint

# Generate page summaries with the `summarize` skill after sections change.
WIKI_SUMMARY_ENABLED = envbool("WIKI_SUMMARY_ENABLED", True)
WIKI_SUMMARY_MAX_TOKENS = envint("WIKI_SUMMARY_MAX_TOKENS", 200)
# Longest text of one item kept in a section, and of a whole section (characters).
WIKI_ITEM_MAX_CHARS = envint("WIKI_ITEM_MAX_CHARS", 4000)
WIKI_SECTION_MAX_CHARS = envint("WIKI_SECTION_MAX_CHARS", 20000)
# Characters of each item text given to the embedding model (a section's embedding is the
# mean of its items').
WIKI_EMBED_MAX_CHARS = envint("WIKI_EMBED_MAX_CHARS", 1500)
# A request looks at the entity table (its count and newest change) at most this often per
# process to see whether names must be re-read; an entity saved or deleted in the same
# process is seen at once. The compiler always looks.
WIKI_ENTITY_CHECK_SECONDS = envfloat("WIKI_ENTITY_CHECK_SECONDS", 2.0)
