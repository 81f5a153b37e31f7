"""Test support shared by more than one test directory (imported as ``support``: tests/ is on the path)."""
