"""``python -m precis``: the ``precis`` command."""

import sys

from precis.cli import main

sys.exit(main())
