"""Where the C++ binary sits inside the package (the plugin wraps Ray's workers with it); the
`nsel` command itself is _nsel_cli, outside the package."""

import os

BINARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "nsel")
