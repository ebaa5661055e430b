-- The key columns after the token of pruned_cell (schema_6.sql) and of the
-- merge's staged cells (merge_stage_create.sql). Not run alone.
    backend              TEXT    NOT NULL,
    op                   TEXT    NOT NULL,
    dtypes               TEXT    NOT NULL,
    kernel_source        TEXT    NOT NULL,
    kernel_revision_hash INTEGER NOT NULL,
    cc_major             INTEGER NOT NULL,
    cc_minor             INTEGER NOT NULL,
    hardware_sku         TEXT    NOT NULL,
    driver_version       TEXT    NOT NULL,
