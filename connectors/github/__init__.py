"""GitHub: the normalizer (issues, pull requests, comments), the JSON-export importer,
the REST API poller and the webhook."""
