// The DuckDB peer: the same aggregation as fdx-ingest written as one SQL
// statement per kind, read_json of the feed files and GROUP BY the
// aggregation tuple into a table persisted in a DuckDB file, 2 threads.
// Counts add; a dispatch cell keeps the last non-empty candidates list in
// reading order (DuckDB preserves insertion order, so row_number() OVER ()
// numbers the lines as read). It creates a fresh store: DB must not exist.
//
// Usage: node duckdb_peer.mjs DB RUN_DIR_OR_FILE...
// A run directory stands for its misses.jsonl and dispatches.jsonl; a file
// whose name holds "misses" is read as misses, any other as dispatches.
// Prints the number of cells of each kind.
import { existsSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const [db, ...inputs] = process.argv.slice(2);
if (!db || inputs.length === 0) {
  console.error('usage: duckdb_peer.mjs DB RUN_DIR_OR_FILE...');
  process.exit(2);
}
if (existsSync(db)) {
  console.error(`duckdb_peer.mjs: ${db}: exists (the peer builds a fresh store)`);
  process.exit(2);
}

const misses = [];
const dispatches = [];
for (const p of inputs) {
  if (statSync(p).isDirectory()) {
    for (const [name, list] of [['misses.jsonl', misses], ['dispatches.jsonl', dispatches]]) {
      if (existsSync(join(p, name))) list.push(join(p, name));
    }
  } else {
    (basename(p).includes('misses') ? misses : dispatches).push(p);
  }
}

// Paths are quoted as SQL string literals: table functions take no bound
// list parameters here.
const files = (list) => '[' + list.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ') + ']';
const IMPL = 'STRUCT(backend VARCHAR, op VARCHAR, dtypes VARCHAR[], kernel_source VARCHAR, ' +
  'kernel_revision_hash UBIGINT)';
const HW = 'STRUCT(compute_capability UBIGINT[], hardware_sku VARCHAR, driver_version VARCHAR)';
const impl = (f) => `${f}.backend AS backend, ${f}.op AS op, ${f}.dtypes AS dtypes, ` +
  `${f}.kernel_source AS kernel_source, ${f}.kernel_revision_hash AS kernel_revision_hash`;
const hw = 'hw.compute_capability AS compute_capability, hw.hardware_sku AS hardware_sku, ' +
  'hw.driver_version AS driver_version';

const instance = await DuckDBInstance.create(db, { threads: '2' });
const con = await instance.connect();
const counts = {};
if (misses.length) {
  await con.run(`CREATE TABLE miss_cell AS
    SELECT wanted, ${impl('fallback')}, ${hw}, sum(count) AS count
    FROM read_json(${files(misses)}, format = 'newline_delimited',
         columns = {wanted: 'VARCHAR', fallback: '${IMPL}', count: 'UBIGINT', hw: '${HW}'})
    GROUP BY ALL`);
}
if (dispatches.length) {
  await con.run(`CREATE TABLE dispatch_cell AS
    SELECT structure_key, ${impl('chosen')}, ${hw},
           coalesce(arg_max(candidates, line) FILTER (WHERE json_array_length(candidates) > 0),
                    '[]') AS candidates,
           sum(count) AS count
    FROM (SELECT *, row_number() OVER () AS line
          FROM read_json(${files(dispatches)}, format = 'newline_delimited',
               columns = {structure_key: 'VARCHAR', chosen: '${IMPL}', candidates: 'JSON',
                          count: 'UBIGINT', hw: '${HW}'}))
    GROUP BY ALL`);
}
for (const t of ['miss_cell', 'dispatch_cell']) {
  const present = await con.runAndReadAll(
    `SELECT count(*) FROM information_schema.tables WHERE table_name = '${t}'`);
  counts[t] = 0;
  if (Number(present.getRows()[0][0]) > 0) {
    const r = await con.runAndReadAll(`SELECT count(*) FROM ${t}`);
    counts[t] = Number(r.getRows()[0][0]);
  }
}
await con.run('CHECKPOINT');
con.closeSync();
instance.closeSync();
console.log(`miss_cell ${counts.miss_cell} dispatch_cell ${counts.dispatch_cell}`);
