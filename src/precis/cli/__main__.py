import sys

from precis.cli import main

sys.exit(main())
