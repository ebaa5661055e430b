-- The key columns the two cell tables of pg/schema.sql share, after their
-- token columns. Not run alone.
    backend              text COLLATE "C" NOT NULL,
    op                   text COLLATE "C" NOT NULL,
    dtypes               text COLLATE "C" NOT NULL,
    kernel_source        text COLLATE "C" NOT NULL,
    kernel_revision_hash bigint NOT NULL,
    cc_major             bigint NOT NULL CHECK (cc_major BETWEEN -1 AND 4294967295),
    cc_minor             bigint NOT NULL CHECK (cc_minor BETWEEN -1 AND 4294967295),
    hardware_sku         text COLLATE "C" NOT NULL,
    driver_version       text COLLATE "C" NOT NULL,
