"""``python -m fasttok``: the command line (see :mod:`fasttok.cli`)."""

import sys

from fasttok.cli import main

sys.exit(main())
