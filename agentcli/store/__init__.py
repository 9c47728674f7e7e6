"""Persistence: SQLAlchemy Core tables, the engine and its migrations, and the Store that reads and writes."""
