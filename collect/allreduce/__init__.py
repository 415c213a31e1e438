"""collect's side of the all-reduce study: rows (result JSON -> frames), tables (pure), grids, plots."""
