"""Results -> tables: reads result JSON (and the plan's cell list) only."""
