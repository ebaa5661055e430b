-- The first day a store being merged keeps daily (earlier rows are months).
SELECT rolled_before FROM history_config;
