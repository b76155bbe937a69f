package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
)

// The lake's views: the SQL that defines them over the tables' files, and
// the session queries built on them.

// viewSelect is the start of the select a table's view makes of its files.
func viewSelect(view string) string {
	if view == "exchange_rows" {
		return "SELECT * EXCLUDE (stream_number) FROM "
	}
	return "SELECT * FROM "
}

// latest keeps the newest version of each record when a table holds more
// than one. Partitioning the window by the hive columns too keeps filters
// on platform and date pushed down to the files.
const latest = ` QUALIFY row_number() OVER (PARTITION BY id, platform, date ORDER BY ingested_at DESC, content_hash) = 1`

// ViewSQL returns the statements that define the lake's views: raw,
// messages, exchange_rows, exchanges, documents, other, sessions, chunks,
// chunk_rows and postings, each with the partition columns platform and
// date.
func ViewSQL(lake string) ([]string, error) { return ViewSQLFor(lake) }

// viewDeps lists, for each view, the tables it reads and the views it is
// defined over.
var viewDeps = map[string][]string{
	"raw": {layout.TableRaw}, "messages": {layout.TableMessages}, "documents": {layout.TableDocuments},
	"decisions": {layout.TableDecisions}, "file_refs": {layout.TableFileRefs}, "other": {layout.TableOther},
	"exchange_rows": {layout.TableExchanges}, "exchanges": {"view:exchange_rows"},
	"sessions": {layout.TableSessions, "view:messages", "view:exchange_rows"},
	"chunks":   {layout.TableChunks}, "chunk_rows": {layout.TableChunks}, "postings": {layout.TablePostings},
	"session_rows": {layout.TableSessions}, "summaries": {layout.TableSummaries},
}

// Views lists every view ViewSQL defines.
var Views = []string{"raw", "messages", "documents", "decisions", "file_refs", "other", "exchange_rows", "exchanges",
	"sessions", "chunks", "chunk_rows", "postings", "session_rows", "summaries"}

// ViewClosure returns the given views and those they are defined over, in
// the order they must be defined; none: every view.
func ViewClosure(names ...string) ([]string, error) {
	if len(names) == 0 {
		return slices.Clone(Views), nil
	}
	want := map[string]bool{}
	var add func(v string) error
	add = func(v string) error {
		deps, ok := viewDeps[v]
		if !ok {
			return fmt.Errorf("no view %q", v)
		}
		if want[v] {
			return nil
		}
		want[v] = true
		for _, d := range deps {
			if dv, ok := strings.CutPrefix(d, "view:"); ok {
				if err := add(dv); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, n := range names {
		if err := add(n); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, v := range Views {
		if want[v] {
			out = append(out, v)
		}
	}
	return out, nil
}

// ViewSQLFor returns the statements that define the given views and the
// views they are defined over (none: every view). Defining a view reads
// its files' listing and a footer, so a command that needs few views
// starts faster when it defines only those.
func ViewSQLFor(lake string, names ...string) ([]string, error) {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	return viewSQL(lakeSQL{abs: lake}, names...)
}

// viewSQL is ViewSQLFor with the lake's paths rendered by l.
func viewSQL(l lakeSQL, names ...string) ([]string, error) {
	lake := l.abs
	views, err := ViewClosure(names...)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, v := range views {
		want[v] = true
	}
	versioned := layout.Versioned(lake)
	schemas := layout.ReadSchemas(lake)
	src := map[string]string{}
	for _, v := range views {
		for _, t := range viewDeps[v] {
			if strings.HasPrefix(t, "view:") || src[t] != "" {
				continue
			}
			s, err := source(l, t, schemas)
			if err != nil {
				return nil, err
			}
			src[t] = s
		}
	}
	var stmts []string
	for _, t := range []string{layout.TableRaw, layout.TableMessages, layout.TableDocuments, layout.TableDecisions, layout.TableFileRefs, layout.TableOther} {
		if !want[t] {
			continue
		}
		q := "SELECT * FROM " + src[t]
		if versioned[t] {
			q += latest
		}
		stmts = append(stmts, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS %s", t, q))
	}
	if want["exchange_rows"] {
		ex := viewSelect("exchange_rows") + src[layout.TableExchanges]
		if versioned[layout.TableExchanges] {
			ex += latest
		}
		// exchange_rows filters by platform and date down to the files; the
		// exchanges view numbers each thread's exchanges over a narrow scan of
		// all of them and joins the numbers to the rows a query selects.
		stmts = append(stmts, "CREATE OR REPLACE VIEW exchange_rows AS "+ex)
	}
	if want["exchanges"] {
		stmts = append(stmts, `CREATE OR REPLACE VIEW exchanges AS
SELECT e.*, n.exchange_number
FROM exchange_rows e
JOIN (
  SELECT id, `+ExchangeNumber+` AS exchange_number
  FROM exchange_rows
) n USING (id)`)
	}
	if want["sessions"] {
		stmts = append(stmts, "CREATE OR REPLACE VIEW sessions AS\n"+rollup.SessionsSQL("("+rollup.MessagePartsSQL("true")+")", "("+rollup.ExchangePartsSQL("true")+")", src[layout.TableSessions]))
	}
	if want["chunks"] || want["chunk_rows"] || want["postings"] || want["session_rows"] {
		for _, s := range chunkViews(lake, src, versioned) {
			name := strings.Fields(strings.TrimPrefix(s, "CREATE OR REPLACE VIEW "))[0]
			if want[name] {
				stmts = append(stmts, s)
			}
		}
	}
	if want["summaries"] {
		stmts = append(stmts, summaryViews(src)...)
	}
	return stmts, nil
}

// ExchangeNumber numbers a thread's exchanges from 1 in time order: the
// exchanges view's exchange_number. Its window is partitioned by session,
// so it numbers one session's rows alike whether or not the others are read.
const ExchangeNumber = `row_number() OVER (PARTITION BY platform, session_id, coalesce(agent_id, '') ORDER BY ts, id)`

// OneSessionExchangesSQL is the exchanges view for one session, $1 its
// platform and $2 its id, over the exchange_rows view: the view numbers
// every exchange of the lake before a filter on a session reaches its rows.
const OneSessionExchangesSQL = `(SELECT *, ` + ExchangeNumber + ` AS exchange_number
  FROM exchange_rows WHERE platform = $1 AND session_id = $2)`

// OneSessionExchangesFrom is OneSessionExchangesSQL over src, a source of
// the exchange_rows view's rows (the view narrowed to the session's date
// partitions, say).
func OneSessionExchangesFrom(src string) string {
	return strings.Replace(OneSessionExchangesSQL, "FROM exchange_rows", "FROM "+src, 1)
}

// OneSessionSQL is the sessions view's query for one session, $1 its
// platform and $2 its id, over the views session_rows, messages and
// exchange_rows. The filter is applied inside each part: on the view it
// would stop at the FULL JOIN, so looking up one session through the view
// aggregates every message of the lake.
func OneSessionSQL() string {
	const one = "platform = $1 AND session_id = $2"
	return rollup.SessionsSQL("("+rollup.MessagePartsSQL(one)+")", "("+rollup.ExchangePartsSQL(one)+")", "(SELECT * FROM session_rows WHERE "+one+")")
}

// DefineViews runs the statements of the given views (and those they are
// defined over; none: every view) on db.
func DefineViews(ctx context.Context, db *sql.DB, lake string, views ...string) error {
	stmts, err := ViewSQLFor(lake, views...)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("defining views: %w", err)
		}
	}
	return nil
}
