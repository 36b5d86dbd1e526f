"""Built-in Python skills and the text helpers their offline fallbacks share."""
