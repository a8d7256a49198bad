"""``python -m minitorch.grade``: the course's grading command (``minitorch.course.grade``)."""

import sys

from minitorch.course.grade import main

if __name__ == "__main__":
    sys.exit(main())
