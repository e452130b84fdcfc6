"""The workspace as the person sees it: the tree, previews, downloads, uploads and checkpoints (no Gradio here)."""
