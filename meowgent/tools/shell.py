"""File tools: read_file, write_file, edit_file, list_files, search_files (placeholder until the tools land)."""
