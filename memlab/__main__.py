import sys

from memlab.cli import main

__all__: list[str] = []

sys.exit(main())
