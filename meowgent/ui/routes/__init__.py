"""HTTP beside Gradio (Starlette routes and ASGI middleware): changes when who may reach the server, and how, does,
or what it serves ahead of Gradio's own routes."""
