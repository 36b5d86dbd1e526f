"""Calendar: the normalizer of an ICS document (a file or a feed) and the feed poller."""
