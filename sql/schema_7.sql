-- Schema version 7: the views again (views.sql runs before this), for
-- dispatch_regret, which now takes each dispatch cell by its id. It took a
-- cell by its key columns with the dtypes joined by commas, so two cells
-- whose dtypes joined to the same text (["F16,F32"] and ["F16","F32"]) were
-- one, and one's regret could hide the other's. dispatch_candidates gains
-- the cell's id (cell_id, as in dispatch_cells) as its last column.
PRAGMA user_version = 7;
