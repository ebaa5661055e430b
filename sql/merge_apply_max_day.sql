-- Apply: the latest day the merge wrote history on (NULL: none).
SELECT max(day) FROM temp.merge_delta;
