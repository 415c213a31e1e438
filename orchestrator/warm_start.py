"""`python -m orchestrator.warm_start`, as a local queue started before the orchestrator was grouped
by role (issue 39) runs its warm start server and each task's client: the server and the client
live in orchestrator.local.warm_start. Nothing new runs it by this path."""
import sys

from orchestrator.local.warm_start import main

if __name__ == "__main__":
    main(sys.argv[1:])
