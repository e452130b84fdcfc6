"""Pure renderers, a value in and escaped HTML or plain words out: changes when what the page says or shows does."""
