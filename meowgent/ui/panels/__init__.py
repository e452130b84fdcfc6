"""The page's panels, each laid out in `__init__` and wired in `wire()`: changes when a part of the page does."""
