"""``python -m ldpplan``: the command line."""
from ldpplan.planner.cli import main

if __name__ == "__main__":  # pragma: no branch
    main()
