ROLLBACK TO fdx_ingest;
