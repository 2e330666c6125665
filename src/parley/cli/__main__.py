"""`python -m parley.cli`: the `parley` command."""

import sys

from parley.cli.main import main

sys.exit(main())
