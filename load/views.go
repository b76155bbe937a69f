package load

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pos-lake/pos/load/layout"
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
		stmts = append(stmts, "CREATE OR REPLACE VIEW sessions AS\n"+sessionsSQL("("+messagePartsSQL("true")+")", "("+exchangePartsSQL("true")+")", src[layout.TableSessions]))
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

// sessionsSQL is the sessions view's query: it keeps the latest metadata
// of each session from its rollups, meta (titles by preference: the name
// the user gave it, the platform's own, the latest summary label, the first
// prompt), and counts everything else from its messages and exchanges, so
// sessions loaded in several incremental runs add up. The counts come from
// session parts (see SessionPartsSQL): msgParts and exParts are sources of
// the parts of the messages and of the exchanges, which the query combines
// by session with the same rules that made them.
func sessionsSQL(msgParts, exParts, meta string) string {
	return "WITH " + fmt.Sprintf(sessionsMeta, meta) + `, m AS (
  SELECT platform, session_id,
    ` + sessionCombineSelect(sessionMessageRules) + `
  FROM ` + msgParts + `
  GROUP BY ALL
), e AS (
  SELECT platform, session_id,
    ` + sessionCombineSelect(sessionExchangeRules) + `
  FROM ` + exParts + `
  GROUP BY ALL
)
` + sessionsSelect
}

// The parts of the sessions view's query: the metadata of each session
// from the session rollups (%[1]s), and the select that joins it to the
// counts combined from the parts (m, of the messages, and e, of the
// exchanges).
const (
	sessionsMeta = `meta AS (
  SELECT platform, session_id,
    arg_max(title, ingested_at) FILTER (WHERE title_source = 'user') AS user_title,
    arg_max(title, ingested_at) FILTER (WHERE title_source = 'platform') AS platform_title,
    arg_min(title, coalesce(first_ts, ts)) FILTER (WHERE title_source = 'prompt') AS prompt_title,
    max(slug) AS slug, max(plan_id) AS plan_id,
    arg_max(cwd, ingested_at) AS cwd, arg_max(git_branch, ingested_at) AS git_branch,
    arg_min(project, coalesce(first_ts, ts)) AS project,
    arg_max(meta, ingested_at) AS meta, arg_max(completeness, ingested_at) AS completeness,
    max(ingested_at) AS ingested_at,
    min(coalesce(first_ts, ts)) AS meta_first_ts, max(coalesce(last_ts, ts)) AS meta_last_ts,
    flatten(list(labels ORDER BY ingested_at)) AS all_labels,
    flatten(list(pull_requests ORDER BY ingested_at)) AS all_prs
  FROM %[1]s
  GROUP BY ALL
)`
	sessionsSelect = `SELECT
  platform, session_id,
  coalesce(meta.user_title, meta.platform_title, meta.all_labels[-1], meta.prompt_title) AS title,
  meta.slug, coalesce(m.first_ts, meta.meta_first_ts) AS first_ts, coalesce(m.last_ts, meta.meta_last_ts) AS last_ts,
  coalesce(m.message_count, 0) AS message_count, coalesce(m.user_count, 0) AS user_count,
  coalesce(m.assistant_count, 0) AS assistant_count, coalesce(m.tool_count, 0) AS tool_count,
  coalesce(e.exchange_count, 0) AS exchange_count,
  coalesce(m.compactions, 0) AS compactions, coalesce(length(m.agents), 0) AS subagents,
  coalesce(m.input_tokens, 0) AS input_tokens, coalesce(m.output_tokens, 0) AS output_tokens,
  coalesce(m.cache_creation_tokens, 0) AS cache_creation_tokens, coalesce(m.cache_read_tokens, 0) AS cache_read_tokens,
  CASE WHEN len(m.models) > 0 THEN list_sort(m.models) END AS models,
  list_filter(meta.all_labels, (x, i) -> list_position(meta.all_labels, x) = i) AS labels, meta.plan_id,
  list_filter(meta.all_prs, (x, i) -> list_position(meta.all_prs, x) = i) AS pull_requests,
  coalesce(meta.project, m.msg_project) AS project, meta.cwd, meta.git_branch, m.user, m.machine,
  meta.completeness, meta.meta, meta.ingested_at,
  CAST(coalesce(m.first_ts, meta.meta_first_ts) AS DATE) AS date
FROM m FULL JOIN meta USING (platform, session_id) LEFT JOIN e USING (platform, session_id)`
)

// SessionPartsSQL is the sessions view's counts in parts: a row per
// platform, date partition and session of the messages (message_count set)
// and one of the exchanges (exchange_count set) matching where, a
// condition on the hive columns. Each row is exact for its partition, and
// SessionsFromPartsSQL combines any set of them into what the view gives,
// so the parts of unchanged partitions can be kept between queries.
func SessionPartsSQL(where string) string {
	return messagePartsSQL(where) + `
UNION ALL BY NAME
` + exchangePartsSQL(where)
}

// messagePartsSQL is SessionPartsSQL's rows of the messages.
func messagePartsSQL(where string) string {
	return `SELECT platform, date, session_id,
  ` + sessionPartsSelect(sessionMessageRules) + `,
  CAST(NULL AS BIGINT) AS exchange_count
FROM messages
WHERE ` + where + `
GROUP BY platform, date, session_id`
}

// exchangePartsSQL is SessionPartsSQL's rows of the exchanges.
func exchangePartsSQL(where string) string {
	return `SELECT platform, date, session_id, ` + sessionPartsSelect(sessionExchangeRules) + `
FROM exchange_rows
WHERE ` + where + `
GROUP BY platform, date, session_id`
}

// SessionMetaRowsSQL selects the session rollups' columns the sessions
// view reads, with the hive columns, for the partitions matching where.
func SessionMetaRowsSQL(where string) string {
	return `SELECT platform, date, session_id, title, title_source, ingested_at, first_ts, ts, last_ts, slug, plan_id,
  cwd, git_branch, project, meta, completeness, labels, pull_requests
FROM session_rows
WHERE ` + where
}

// SessionsFromPartsSQL is the sessions view's query over session parts
// (SessionPartsSQL's rows, from the source parts) and session rollup rows
// (SessionMetaRowsSQL's, from the source meta).
func SessionsFromPartsSQL(parts, meta string) string {
	return sessionsSQL("(SELECT * FROM "+parts+" WHERE message_count IS NOT NULL)",
		"(SELECT * FROM "+parts+" WHERE exchange_count IS NOT NULL)", meta)
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
	return sessionsSQL("("+messagePartsSQL(one)+")", "("+exchangePartsSQL(one)+")", "(SELECT * FROM session_rows WHERE "+one+")")
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
