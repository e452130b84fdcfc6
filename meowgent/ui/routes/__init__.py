"""HTTP beside Gradio (Starlette routes and ASGI gates): changes when who may reach the server, and how, does."""
