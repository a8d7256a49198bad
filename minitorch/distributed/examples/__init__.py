"""Example scripts for ``python -m minitorch.distributed.run``."""
