-- Loads the transaction's dispatch cells (push_dispatches.sql's rows) into staging.
COPY fdx_stage_dispatch (keyed, structure_key, backend, op, dtypes, kernel_source,
                         kernel_revision_hash, cc_major, cc_minor, hardware_sku,
                         driver_version, candidates, count, candidates_set_at) FROM STDIN;
