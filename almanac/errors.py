class ApplicationError(Exception):
    """A domain error with a message meant for the caller (mapped to a 4xx JSON reply)."""

    status_code = 400

    def __init__(self, message: str, extra: dict | None = None, status_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.extra = extra or {}
        if status_code is not None:
            self.status_code = status_code
