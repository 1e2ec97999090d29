"""``python -m logrerank.cli``: the ``logrerank`` command."""

import sys

from . import main

sys.exit(main())
