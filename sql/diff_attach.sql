-- Opens the other store of fdx-diff beside this one.
ATTACH DATABASE ?1 AS fdx_other;
