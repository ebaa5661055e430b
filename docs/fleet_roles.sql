-- Least-privilege roles for a PostgreSQL fdx store (docs/FLEET.md). Run as
-- the owner of the fdx tables (the role whose first fdx-ingest created them),
-- in the store's database, with the fdx tables in schema public.
--
-- fdx_writer: what fdx-ingest needs and nothing more. It reads every fdx
-- table (a writer's working copy starts from the ledger), adds and updates
-- rows, draws cell and ledger ids, and deletes only the daily history rows
-- that retention rolls into months. It cannot delete cells or ledger rows,
-- truncate, alter or drop a table, or create objects in the schema.
CREATE ROLE fdx_writer LOGIN;
GRANT USAGE ON SCHEMA public TO fdx_writer;
GRANT SELECT ON fdx_meta, miss_cell, dispatch_cell, ingest_ledger, ingest_source,
                store_identity, merged_store, history_config, history_origin, cell_history,
                merged_ledger, pruned_cell, pruned_history, prune_log TO fdx_writer;
GRANT INSERT, UPDATE ON miss_cell, dispatch_cell, ingest_ledger, ingest_source, history_config,
                        cell_history TO fdx_writer;
GRANT DELETE ON cell_history TO fdx_writer;
GRANT USAGE ON SEQUENCE fdx_cell_id, ingest_ledger_id_seq TO fdx_writer;

-- fdx_reader: fdx-export, fdx-top, fdx-report, fdx-diff, and psql over the
-- tables and views; nothing that writes.
CREATE ROLE fdx_reader LOGIN;
GRANT USAGE ON SCHEMA public TO fdx_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO fdx_reader;
