"`python -m toolslm_like`: the `toolslm-like` command (see `nbs/15_cli.ipynb`)"
# Written by hand, not exported: nbdev-export can only append to a module another notebook's `default_exp` makes, and
# leaves this file alone (nor does `_modidx.py` index it).
import sys
from toolslm_like.cli import main

if __name__ == '__main__': sys.exit(main())
