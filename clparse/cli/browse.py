"""`clparse browse`: the database in a web browser (Datasette), read-only."""
