// Command scale builds a larger lake from a lake for query benchmarks: the
// messages, exchanges, sessions and documents tables copied --copies times,
// copy k with fresh ids (id~k) and its times moved back k×--shift days, so
// that a 1 GB home's lake (about 130 k messages) becomes a lake of about a
// million messages without generating and loading 8 GB of transcripts:
//
//	go run ./pipelines/bench/scale --from LAKE --to DIR [--copies 8] [--shift 91]
//
// Copies after the first leave the long text columns empty (see
// textColumns). The messages get the column cache_creation_1h_tokens (the 1-hour share
// of cache writes, read once from the source lake's raw layer), so stats
// price them from the column, as a lake written by a pos-load that has the
// column would be read. The raw layer is not copied: no query benchmarked
// reads it.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pos-lake/pos/load"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// textColumns are left empty in the copies after the first: they hold
// the long texts (prose, thinking, tool calls and outputs), which only the
// latest rows' lookups show (recent, timeline, sessions show copy 0, the
// most recent) and no benchmarked query scans. Writing them 8 times would
// make the copy slower than the benchmark.
var textColumns = map[string]bool{
	"text": true, "thinking": true, "tools": true, "prompt": true, "response": true, "meta": true, "extra": true,
	"files": true, "raw": true,
}

// idColumns are rewritten per copy; every other column is kept, times
// shifted.
var idColumns = map[string]bool{
	"id": true, "session_id": true, "parent_id": true, "prompt_id": true, "last_id": true,
	"exchange_id": true, "message_id": true, "plan_id": true,
}

func run() error {
	from := flag.String("from", "", "lake to copy")
	to := flag.String("to", "", "directory of the new lake (must not exist)")
	copies := flag.Int("copies", 8, "copies of each table")
	shift := flag.Int("shift", 91, "days between copies")
	single := flag.String("single", "", "also write one copy (every column, with cache_creation_1h_tokens) into this directory")
	flag.Parse()
	if *from == "" || *to == "" || *copies < 1 {
		return errors.New("usage: scale --from LAKE --to DIR [--copies 8] [--shift 91]")
	}
	if _, err := os.Stat(*to); err == nil {
		return fmt.Errorf("%s exists", *to)
	}
	start := time.Now()
	ctx := context.Background()
	db, err := load.OpenDB("")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec("SET preserve_insertion_order = false"); err != nil {
		return err
	}
	src := func(table string) string {
		return fmt.Sprintf("read_parquet('%s', hive_partitioning = true, union_by_name = true, hive_types = {'platform': VARCHAR, 'date': DATE})",
			filepath.Join(load.TableDir(*from, table), "**", "*.parquet"))
	}
	// The 1-hour share of each message's cache writes, from its last line.
	if _, err := db.ExecContext(ctx, `CREATE TEMP TABLE split AS
		SELECT source_path, native_id, j[1] AS request_id, arg_max(TRY_CAST(j[2] AS BIGINT), source_offset) AS cc1h
		FROM (SELECT source_path, native_id, source_offset,
			json_extract_string(raw, ['$.requestId', '$.message.usage.cache_creation.ephemeral_1h_input_tokens']) AS j
			FROM `+src(load.TableRaw)+` WHERE platform = 'claude_code' AND native_type = 'assistant')
		GROUP BY ALL`); err != nil {
		return fmt.Errorf("reading the raw layer: %w", err)
	}
	counts := map[string]int64{}
	for _, table := range []string{load.TableMessages, load.TableExchanges, load.TableSessions, load.TableDocuments} {
		cols, err := columns(db, "SELECT * FROM "+src(table))
		if err != nil {
			return err
		}
		base := "SELECT * FROM " + src(table)
		if table == load.TableMessages {
			base = `SELECT m.*, CAST(least(coalesce(s.cc1h, 0), m.cache_creation_tokens) AS BIGINT) AS cache_creation_1h_tokens
				FROM ` + src(table) + ` m LEFT JOIN split s ON m.platform = 'claude_code' AND s.source_path = m.source_path
				AND s.native_id = m.native_id AND s.request_id IS NOT DISTINCT FROM m.request_id`
			cols = append(cols, column{"cache_creation_1h_tokens", "BIGINT"})
		}
		// The source once in memory, then every copy in one COPY: one
		// file per partition, as one pos-load run writes them.
		tmp := "src_" + table
		if _, err := db.ExecContext(ctx, "CREATE TEMP TABLE "+tmp+" AS "+base); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		outs := []struct {
			lake   string
			copies int
		}{{*to, *copies}}
		if *single != "" {
			outs = append(outs, struct {
				lake   string
				copies int
			}{*single, 1})
		}
		for _, o := range outs {
			dir := load.TableDir(o.lake, table)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			var parts []string
			for k := range o.copies {
				var sel []string
				for _, c := range cols {
					q := `"` + c.name + `"`
					switch {
					case k == 0:
						sel = append(sel, q)
					case textColumns[c.name]:
						sel = append(sel, fmt.Sprintf("CAST(NULL AS %s) AS %s", c.typ, q))
					case idColumns[c.name] && c.typ == "VARCHAR":
						sel = append(sel, fmt.Sprintf("%s || '~%d' AS %s", q, k, q))
					case c.name == "date":
						sel = append(sel, fmt.Sprintf("CAST(%s - INTERVAL %d DAY AS DATE) AS %s", q, k**shift, q))
					case strings.HasPrefix(c.typ, "TIMESTAMP"):
						sel = append(sel, fmt.Sprintf("%s - INTERVAL %d DAY AS %s", q, k**shift, q))
					default:
						sel = append(sel, q)
					}
				}
				parts = append(parts, "SELECT "+strings.Join(sel, ", ")+" FROM "+tmp)
			}
			q := fmt.Sprintf(`COPY (%s) TO '%s' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (platform, date),
				OVERWRITE_OR_IGNORE, FILENAME_PATTERN 'part-scale-{uuid}', ROW_GROUP_SIZE 100000)`, strings.Join(parts, "\nUNION ALL\n"), dir)
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		dir := load.TableDir(*to, table)
		if _, err := db.ExecContext(ctx, "DROP TABLE "+tmp); err != nil {
			return err
		}
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM read_parquet('"+filepath.Join(dir, "**", "*.parquet")+"')").Scan(&n); err != nil {
			return err
		}
		counts[table] = n
	}
	for _, lake := range []string{*to, *single} {
		if lake != "" {
			if err := finish(lake, counts); err != nil {
				return err
			}
		}
	}
	fmt.Printf("scale: %d copies of %s into %s: messages %d, exchanges %d, sessions %d, documents %d; %.1fs\n",
		*copies, *from, *to, counts[load.TableMessages], counts[load.TableExchanges], counts[load.TableSessions],
		counts[load.TableDocuments], time.Since(start).Seconds())
	return nil
}

// finish writes the lake's state as pos-load would for tables holding one
// version of each record in this build's schema: the views then read the
// files plainly (no union_by_name, no search for newer versions).
func finish(lake string, counts map[string]int64) error {
	if err := os.MkdirAll(filepath.Join(lake, "_state"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(lake, "_state", "versioned.json"),
		[]byte(`{"raw":false,"messages":false,"exchanges":false,"sessions":false,"documents":false,"decisions":false,"file_refs":false,"chunks":false,"other":false}`), 0o644); err != nil {
		return err
	}
	if _, err := load.ViewSQL(lake); err != nil { // writes the schema files
		return err
	}
	fps := map[string][]string{}
	for _, table := range load.Tables {
		m, _ := filepath.Glob(filepath.Join(lake, "_schema", "*", table))
		if len(m) == 1 && counts[table] > 0 {
			fps[table] = []string{filepath.Base(filepath.Dir(m[0]))}
		}
	}
	b, _ := json.Marshal(fps)
	if err := os.WriteFile(filepath.Join(lake, "_state", "schemas.json"), b, 0o644); err != nil {
		return err
	}
	// The usage rollup pos-load keeps, which pos-query stats reads.
	return load.UpdateRollup(context.Background(), lake)
}

type column struct{ name, typ string }

func columns(db *sql.DB, q string) ([]column, error) {
	rows, err := db.Query("DESCRIBE " + q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names, _ := rows.Columns()
	var out []column
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, column{fmt.Sprint(vals[0]), fmt.Sprint(vals[1])})
	}
	return out, rows.Err()
}
