"""``python -m rewardsmith.adapters.cli``: the same command line as the ``rewardsmith`` script."""

from rewardsmith.adapters.cli.commands import main

if __name__ == "__main__":
    raise SystemExit(main())
