"""Documents: files a user uploads (PDF, Markdown, plain text) into a scope; their text is read
off the request and handed to the skills (`document.uploaded`), whose findings become memories."""
