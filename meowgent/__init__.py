"""Meowgent: a local AI agent in a web page, served by Ollama."""
