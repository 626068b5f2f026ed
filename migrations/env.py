"""Alembic environment: always runs on a connection clparse opened through APSW.

clparse passes its SQLAlchemy connection in ``config.attributes["connection"]``;
run from the ``alembic`` command line, an APSW-backed engine is made from the
``sqlalchemy.url`` option instead, so ``sqlite3`` is never imported either way.
"""

from __future__ import annotations

from alembic import context

from clparse.store.schema import metadata

config = context.config


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        from clparse.store.engine import make_engine

        url = config.get_main_option("sqlalchemy.url") or ""
        engine = make_engine(url.removeprefix("sqlite:///"))
        with engine.connect() as connection:
            _run(connection)
            connection.commit()
        return
    _run(connection)


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
