"""The results directory's format beside the result files (jobs.core.result): the registry of
submissions (registry.jsonl), plan.json's cell table, JSON sealed by its writer (plan.json, the
status cache), the cell states every verb shows, and the text and errors read from them. Shared by
the orchestrator and collect; the job side never imports it."""
