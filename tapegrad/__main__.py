"""`python -m tapegrad ...` runs the command line (see tapegrad/cli.py)."""
import sys

from .cli import main

sys.exit(main())
