"""The user's mistakes: each message names the field or file and the fix; the CLI exits 2. UserError and
RegistryError live in results_format.errors (collect and the registry raise them too)."""

from results_format.errors import RegistryError, UserError

__all__ = ["UserError", "RegistryError", "StudyError", "PlanError", "SchedulerError", "BudgetError"]


class StudyError(UserError):
    """A study file that cannot be used."""


class PlanError(UserError):
    """No plan, or a plan that does not match the request."""


class SchedulerError(UserError):
    """SLURM refused a request, or cannot be reached."""


class BudgetError(UserError):
    """The work asked for would spend more GPU-hours than the budget leaves."""
