"""The command study: the user's own script, any argv, run once per process with torchrun's
environment; its metrics are the JSON lines it writes. Nothing here imports torch."""
from jobs.command.cell import CommandCell
from jobs.command.result import CommandFindings
from jobs.core.kinds import Kind

KIND = Kind("command", CommandCell, CommandFindings, "jobs.command.run:run", swept=("command",), user_fields=True,
            paths=("workdir",))
