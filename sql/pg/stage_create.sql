-- Staging tables for one push (pg_push.c): the cells of the transaction,
-- unique per key already (the working copy aggregated them), loaded by COPY.
CREATE TEMP TABLE fdx_stage_miss (
    wanted text COLLATE "C", backend text COLLATE "C", op text COLLATE "C",
    dtypes text COLLATE "C", kernel_source text COLLATE "C", kernel_revision_hash bigint,
    cc_major bigint, cc_minor bigint, hardware_sku text COLLATE "C",
    driver_version text COLLATE "C", count bigint
) ON COMMIT DROP;
CREATE TEMP TABLE fdx_stage_dispatch (
    keyed bigint, structure_key text COLLATE "C", backend text COLLATE "C", op text COLLATE "C",
    dtypes text COLLATE "C", kernel_source text COLLATE "C", kernel_revision_hash bigint,
    cc_major bigint, cc_minor bigint, hardware_sku text COLLATE "C",
    driver_version text COLLATE "C", candidates text COLLATE "C", count bigint,
    candidates_set_at bigint
) ON COMMIT DROP;
