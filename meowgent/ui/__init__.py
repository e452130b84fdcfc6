"""The web page: the only package that knows Gradio."""
