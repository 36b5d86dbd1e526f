"""E-mail: the normalizer (one RFC 5322 message), the mailbox importer and the IMAP poller."""
