"""Unit tests of the minitorch package (a package, so module names cannot clash elsewhere)."""
