-- Loads the transaction's miss cells (push_misses.sql's rows) into staging.
COPY fdx_stage_miss (wanted, backend, op, dtypes, kernel_source, kernel_revision_hash,
                     cc_major, cc_minor, hardware_sku, driver_version, count) FROM STDIN;
