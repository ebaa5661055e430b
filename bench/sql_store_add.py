#!/usr/bin/env python3
"""The store-size curve's peer: the cells a feed adds to a store, inserted in
plain SQL, with nothing to read, parse or aggregate. CELLS is a store that
fdx-ingest made from the feed alone; its cells and their history are copied
into STORE (a copy of the curve's base store, which holds none of them) in one
transaction, each table's rows in the order of its primary key, which is the
order in which a B-tree takes them at least cost. New cells are numbered after
the store's highest cell id. The store's own settings are kept (its page size,
WAL), and the commit is as durable as fdx's (synchronous=FULL, then the
checkpoint of closing).

Prints the seconds from BEGIN until the connection is closed: the least that
putting these cells into a store of this size costs SQLite.

Usage: sql_store_add.py STORE CELLS
"""
import sqlite3
import sys
import time

KEYS = {
    "miss_cell": "wanted, kernel_source, kernel_revision_hash, backend, op, dtypes, "
                 "cc_major, cc_minor, hardware_sku, driver_version",
    "dispatch_cell": "keyed, structure_key, kernel_source, kernel_revision_hash, backend, "
                     "op, dtypes, cc_major, cc_minor, hardware_sku, driver_version",
}


def columns(db, table):
    return [r[1] for r in db.execute("SELECT * FROM pragma_table_info(?, 'add')", (table,))]


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: sql_store_add.py STORE CELLS")
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("PRAGMA synchronous = FULL")
    db.execute("ATTACH DATABASE ? AS 'add'", (sys.argv[2],))
    t = time.monotonic()
    db.execute("BEGIN IMMEDIATE")
    (high,) = db.execute("SELECT max(coalesce((SELECT max(cell_id) FROM main.miss_cell), 0), "
                         "coalesce((SELECT max(cell_id) FROM main.dispatch_cell), 0))").fetchone()
    for table, key in KEYS.items():
        cols = columns(db, table)
        picked = ", ".join(f"cell_id + {int(high)}" if c == "cell_id" else c for c in cols)
        db.execute(f"INSERT INTO main.{table} ({', '.join(cols)}) "
                   f"SELECT {picked} FROM 'add'.{table} ORDER BY {key}")
    db.execute(f"INSERT INTO main.cell_history (day, cell, origin, count) "
               f"SELECT day, cell + {int(high)}, origin, count FROM 'add'.cell_history "
               f"ORDER BY day, cell, origin")
    db.execute("COMMIT")
    db.execute("DETACH DATABASE 'add'")
    db.close()
    print(f"{time.monotonic() - t:.6f}")


if __name__ == "__main__":
    main()
