"""Values and tables every layer reads: boxes (`regions`), modes and their rules, the plan and runner caches, the dispatch tables, transfer counting, constants and limits."""
