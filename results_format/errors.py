"""The user's mistakes that any part may raise (jobs, collect, orchestrator): each message names the
field or file and the fix; the CLI catches UserError once and exits 2. orchestrator.errors adds its own."""


class UserError(Exception):
    """Something the user can fix; never shown with a traceback."""


class RegistryError(UserError):
    """The submission registry cannot be read or written."""
