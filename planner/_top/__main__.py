"""``python -m ldpplan``: the command line."""
from ldpplan._cli import main

if __name__ == "__main__":  # pragma: no branch
    main()
