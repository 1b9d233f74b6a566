// ReelStore: PostgreSQL through libpq (issue 4).
