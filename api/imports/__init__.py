"""Imports of real data (Windows Performance Monitor CSV, ST03 exports) as runs."""
