"""`nsel` on the virtual environment's PATH: the C++ binary shipped inside the package."""

import os
import sys

BINARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "nsel")


def main():
    os.execv(BINARY, [BINARY, *sys.argv[1:]])


if __name__ == "__main__":
    main()
