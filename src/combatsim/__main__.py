import sys

from combatsim.cli import main

sys.exit(main())
