-- Apply: the latest day the merge wrote history on (NULL: none).
SELECT max(day) FROM merge_delta;
