"""Fixed values of the wiki app (its settings are in `config/settings.py`, see docs/wiki.md)."""

# The keyword corpus of page sections (BM25 statistics are kept per tenant and corpus).
CORPUS = "wiki"
