"""Meeting notes: the normalizer (one Markdown file), the folder importer and the folder
poller."""
