"""``python -m streamnorm``: the same as the ``streamnorm`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
