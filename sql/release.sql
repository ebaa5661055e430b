RELEASE fdx_ingest;
