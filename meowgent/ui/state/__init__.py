"""The page's state and frames (who asks, a snapshot, a frame, the card): changes when what a frame holds does."""
