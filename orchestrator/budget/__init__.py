"""GPU-hours: what each attempt held (spent: from the registry, the results and the jobs, for
status, submit and collect's spent.json), what cells will take (estimate), and the cap submit
keeps (budget: the Ledger). Imports every role below it, nothing above."""
