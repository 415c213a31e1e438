"""The user's mistakes: each message names the field or file and the fix; the CLI exits 2."""


class UserError(Exception):
    """Something the user can fix; never shown with a traceback."""


class StudyError(UserError):
    """A study file that cannot be used."""


class PlanError(UserError):
    """No plan, or a plan that does not match the request."""


class RegistryError(UserError):
    """The submission registry cannot be read or written."""


class SchedulerError(UserError):
    """SLURM refused a request, or cannot be reached."""


class BudgetError(UserError):
    """The work asked for would spend more GPU-hours than the budget leaves."""
