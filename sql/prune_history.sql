-- fdx-prune: drops the history of cells that no longer exist.
DELETE FROM cell_history
WHERE cell NOT IN (SELECT cell_id FROM miss_cell UNION ALL SELECT cell_id FROM dispatch_cell);
