"""Training-state storage: SQLite through APSW, with SQLAlchemy and Alembic on top."""
