"""One small module per verb (plan, submit, status, collect, logs, cancel): each adds its
subparser with `register(verbs, common)` and runs as `run(args, console) -> exit status`.
cli.py wires them together; display.py holds the screens plan, submit and status share."""
