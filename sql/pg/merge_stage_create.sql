-- The staging tables of a merge into a PostgreSQL store (pg_merge.c), the
-- PostgreSQL twins of ../merge_stage_create.sql, emptied for each source.
-- Text columns compare as the cell tables' do (COLLATE "C"). The second
-- source of a transaction finds the tables there: no notice about it.
SET LOCAL client_min_messages = warning;
CREATE TEMP TABLE IF NOT EXISTS merge_cell (
    id bigint PRIMARY KEY, kind text COLLATE "C" NOT NULL, keyed bigint NOT NULL,
    token text COLLATE "C" NOT NULL, backend text COLLATE "C" NOT NULL,
    op text COLLATE "C" NOT NULL, dtypes text COLLATE "C" NOT NULL,
    kernel_source text COLLATE "C" NOT NULL, kernel_revision_hash bigint NOT NULL,
    cc_major bigint NOT NULL, cc_minor bigint NOT NULL, hardware_sku text COLLATE "C" NOT NULL,
    driver_version text COLLATE "C" NOT NULL, candidates text COLLATE "C" NOT NULL,
    candidates_set_at bigint, target bigint, tomb bigint, gain bigint NOT NULL DEFAULT 0,
    added integer NOT NULL DEFAULT 0
) ON COMMIT DROP;
CREATE TEMP TABLE IF NOT EXISTS merge_history (
    cell bigint NOT NULL, day bigint NOT NULL, store_id text COLLATE "C" NOT NULL,
    count bigint NOT NULL, PRIMARY KEY (cell, store_id, day)
) ON COMMIT DROP;
CREATE TEMP TABLE IF NOT EXISTS merge_ledger (
    store_id text NOT NULL, id bigint NOT NULL, run_id text, kind text NOT NULL,
    records bigint NOT NULL, cells_added bigint NOT NULL, cells_updated bigint NOT NULL,
    captured_at bigint, committed_at text NOT NULL, PRIMARY KEY (store_id, id)
) ON COMMIT DROP;
CREATE TEMP TABLE IF NOT EXISTS merge_store (
    store_id text PRIMARY KEY, ledger_high bigint NOT NULL, ledger_digest text,
    how text NOT NULL
) ON COMMIT DROP;
CREATE TEMP TABLE IF NOT EXISTS merge_src (
    cell bigint NOT NULL, origin bigint NOT NULL, day bigint NOT NULL, count bigint NOT NULL,
    PRIMARY KEY (cell, origin, day)
) ON COMMIT DROP;
CREATE TEMP TABLE IF NOT EXISTS merge_tgt (
    cell bigint NOT NULL, origin bigint NOT NULL, day bigint NOT NULL, count bigint NOT NULL,
    PRIMARY KEY (cell, origin, day)
) ON COMMIT DROP;
CREATE TEMP TABLE IF NOT EXISTS merge_delta (
    cell bigint NOT NULL, origin bigint NOT NULL, day bigint NOT NULL, delta bigint NOT NULL,
    PRIMARY KEY (cell, origin, day)
) ON COMMIT DROP;
TRUNCATE merge_cell, merge_history, merge_ledger, merge_store, merge_src,
         merge_tgt, merge_delta;
