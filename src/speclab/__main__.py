import sys

from speclab.cli import main

sys.exit(main())
