"""`python -m jobs.data`, as before the move: the data sets live in jobs.runtime.data."""
from jobs.runtime.data import main

if __name__ == "__main__":
    main()
