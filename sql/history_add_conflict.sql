-- What history_add.sql and history_add_rows.sql do with a row already there.
ON CONFLICT (day, cell, origin) DO UPDATE SET
    count = CASE
        WHEN count > 9223372036854775807 - excluded.count THEN 9223372036854775807
        ELSE count + excluded.count
    END
