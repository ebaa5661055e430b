-- The key columns the two cell tables of schema_1.sql share, after their
-- token columns ("-- @include" with a blank line after it keeps the text, and
-- so the stored schema, byte for byte). Not run alone.
    backend              TEXT    NOT NULL,
    op                   TEXT    NOT NULL,
    dtypes               TEXT    NOT NULL,
    kernel_source        TEXT    NOT NULL,
    kernel_revision_hash INTEGER NOT NULL,
    cc_major             INTEGER NOT NULL CHECK (cc_major BETWEEN -1 AND 4294967295),
    cc_minor             INTEGER NOT NULL CHECK (cc_minor BETWEEN -1 AND 4294967295),
    hardware_sku         TEXT    NOT NULL,
    driver_version       TEXT    NOT NULL,
