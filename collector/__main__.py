"""``python -m collector`` is ``evald``."""

import sys

from collector.cli.command import main

sys.exit(main())
