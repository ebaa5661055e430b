-- Apply, step 7: ids from the cell sequence for the staged cells new to this
-- store that gain anything (a pruned key with nothing since stays away).
UPDATE merge_cell AS c SET target = n.id, added = 1
FROM (SELECT id AS staged, nextval('fdx_cell_id') AS id
      FROM (SELECT id FROM merge_cell WHERE target IS NULL AND gain > 0 ORDER BY id) AS o)
     AS n
WHERE c.id = n.staged;
