package load

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/duckdb/duckdb-go/v2"
	"github.com/pos-lake/pos/extract"
)

// dsnOptions keep DuckDB from ever reaching for the network: every
// extension pos needs (parquet, json, icu) is built in.
const dsnOptions = "autoinstall_known_extensions=false&autoload_known_extensions=false"

// OpenDB opens a DuckDB database: path "" is in memory. Times are shown in
// UTC. The database starts on the first statement, not here: a command
// that answers from files alone (pos-query stats from the usage rollup)
// never pays DuckDB's start-up.
func OpenDB(path string) (*sql.DB, error) {
	db := sql.OpenDB(&lazyConnector{dsn: path + "?" + dsnOptions})
	// One connection: session settings (time zone, views) hold for every
	// query.
	db.SetMaxOpenConns(1)
	return db, nil
}

// lazyConnector creates the DuckDB connector on the first connection.
type lazyConnector struct {
	dsn  string
	once sync.Once
	c    *duckdb.Connector
	err  error
}

func (l *lazyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	l.once.Do(func() {
		l.c, l.err = duckdb.NewConnector(l.dsn, func(ex driver.ExecerContext) error {
			_, err := ex.ExecContext(context.Background(), `SET TimeZone = 'UTC'`, nil)
			return err
		})
	})
	if l.err != nil {
		return nil, l.err
	}
	return l.c.Connect(ctx)
}

func (l *lazyConnector) Driver() driver.Driver { return duckdb.Driver{} }

// Close closes the database if it was started; sql.DB.Close calls it.
func (l *lazyConnector) Close() error {
	l.once.Do(func() { l.err = errors.New("closed") })
	if l.c != nil {
		return l.c.Close()
	}
	return nil
}

// sqlString quotes s as a SQL string literal. It is used only for the
// lake's own file paths in view definitions, which cannot take parameters.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func hasParquet(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// schemaFile is a zero-row Parquet file with a table's columns, so a view
// over a table with no data yet still has its columns. It lives in
// <lake>/_schema, or, for a lake this process cannot write (pos-query on a
// read-only lake) and when private allows it, in this process's private
// scratch directory: never in a shared one, where another local user could
// have put a file of that name holding rows of their choosing.
func schemaFile(lake, table string, private bool) (string, error) {
	// Named by the schema's fingerprint (a newer build writes its own), in
	// a hive layout like the data's so both can be read together.
	rel := filepath.Join(schemaFingerprint(table), table, "platform=_", "date=1970-01-01", "empty.parquet")
	p, err := writeSchemaFile(filepath.Join(lake, "_schema", rel), table)
	if err == nil || !private {
		return p, err
	}
	dir, serr := scratchDir()
	if serr != nil {
		return "", errors.Join(err, serr)
	}
	return writeSchemaFile(filepath.Join(dir, rel), table)
}

func writeSchemaFile(path, table string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(path), TempPattern(table))
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	err = newRowWriter(table, f).close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return path, err
}

// lakeSQL renders the paths of a lake's files as SQL expressions for
// read_parquet, made safe from DuckDB's glob (see GlobLiteral).
type lakeSQL struct {
	abs string // the lake's absolute path
	// root, when set, is an SQL expression for the lake's directory
	// (escaped for the glob, ending in a separator) that the paths are
	// relative to: the catalog's views compute it each time they are read,
	// so pos.duckdb reads the lake it is in, wherever that lake was copied,
	// moved or mounted.
	root string
}

// file is the expression of a file in the lake (in-process views: any
// file).
func (l lakeSQL) file(path string) (string, error) {
	if l.root == "" {
		return sqlString(GlobLiteral(path)), nil
	}
	rel, err := l.rel(path)
	if err != nil {
		return "", err
	}
	return "(" + l.root + " || " + sqlString(globEscape(rel)) + ")", nil
}

// glob is the expression of the files matching pattern (pattern
// characters of its own, "/"-separated) below dir.
func (l lakeSQL) glob(dir, pattern string) (string, error) {
	if l.root == "" {
		return sqlString(globPrefix(dir) + string(filepath.Separator) + filepath.FromSlash(pattern)), nil
	}
	rel, err := l.rel(dir)
	if err != nil {
		return "", err
	}
	return "(" + l.root + " || " + sqlString(globEscape(rel)+"/"+pattern) + ")", nil
}

func (l lakeSQL) rel(path string) (string, error) {
	rel, err := filepath.Rel(l.abs, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside the lake %s", path, l.abs)
	}
	return filepath.ToSlash(rel), nil
}

// LakeVariable is the DuckDB variable that tells pos.duckdb's views where
// the lake is when they cannot tell it themselves: SET VARIABLE pos_lake =
// '/path/to/lake'.
const LakeVariable = "pos_lake"

// catalogRoot is the SQL expression of the lake's directory that the views
// in pos.duckdb read their files under, resolved when a query binds them:
//   - the variable pos_lake, when set (the override);
//   - else the directory of pos.duckdb itself: for a database opened as
//     X/pos.duckdb (read-only or not) DuckDB's temp_directory setting is
//     X/pos.duckdb.tmp, X absolute or as given (relative to the working
//     directory, which the paths then are too). A table function's
//     arguments take no subquery, so duckdb_databases() cannot be asked,
//     but a setting can;
//   - else (pos.duckdb ATTACHed from another database, or temp_directory
//     SET to another place) the lake's path when pos.duckdb was written.
//
// The directory is escaped for DuckDB's glob as GlobLiteral escapes.
func catalogRoot(abs string) string {
	esc := func(x string) string {
		e := "regexp_replace(" + x + `, '([\[*?])', '[\1]', 'g')`
		// Where paths start with "/", a backslash is part of a name and
		// only "?" matches it in a glob (see globEscape).
		return "CASE WHEN starts_with(" + x + ", '/') THEN replace(" + e + `, '\', '?') ELSE ` + e + " END"
	}
	v := "CAST(getvariable('" + LakeVariable + "') AS VARCHAR)"
	t := "current_setting('temp_directory')"
	return "(CASE WHEN coalesce(" + v + ", '') <> '' THEN " + esc("rtrim("+v+`, '/\') || '/'`) +
		" WHEN regexp_matches(" + t + `, '(^|[/\\])pos\.duckdb\.tmp$') THEN ` + esc("regexp_replace("+t+`, 'pos\.duckdb\.tmp$', '')`) +
		" ELSE " + sqlString(globPrefix(abs+string(filepath.Separator))) + " END)"
}

// source is the FROM clause that reads a table's files with hive
// partitioning (platform, date), so filters on them prune files. When every
// file of the table has this build's schema (the lake's state says so), the
// files are read as they are; otherwise a zero-row file with this build's
// schema is read with them, by name, so every column a view names exists
// even in a lake an older build wrote.
func source(l lakeSQL, table string, schemas map[string][]string) (string, error) {
	sf, err := schemaFile(l.abs, table, l.root == "")
	if err != nil {
		return "", err
	}
	f, err := l.file(sf)
	if err != nil {
		return "", err
	}
	dir := TableDir(l.abs, table)
	if l.root == "" && filepath.Separator == '/' && strings.Contains(l.abs, `\`) {
		// A backslash in the lake's path: DuckDB's glob matches it only
		// with "?", which could match a neighbour's name too. The files
		// are listed here and named one by one, which DuckDB reads as
		// they are.
		return l.listed(table, f, schemas)
	}
	if !hasParquet(dir) {
		return schemaOnly(f), nil
	}
	// Files lie exactly two levels down (platform=/date=): a fixed-depth
	// glob is expanded faster than "**", which walks the whole tree, and
	// DuckDB expands it again on every query.
	glob, err := l.glob(dir, "*/*/*.parquet")
	if err != nil {
		return "", err
	}
	return readFiles(table, f, []string{glob}, schemas), nil
}

// listed is source with the table's files listed now, not globbed.
func (l lakeSQL) listed(table, f string, schemas map[string][]string) (string, error) {
	parts, err := tablePartitions(l.abs, table)
	if err != nil {
		return "", err
	}
	var files []string
	for _, p := range parts {
		if files, err = appendParquetFiles(files, Dir(l.abs, table, p.platform, p.date)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	if len(files) == 0 {
		return schemaOnly(f), nil
	}
	for i, p := range files {
		if files[i], err = l.file(p); err != nil {
			return "", err
		}
	}
	return readFiles(table, f, files, schemas), nil
}

// hiveOpts are the options every read of the lake's tables passes.
const hiveOpts = "hive_partitioning = true, hive_types = {'platform': VARCHAR, 'date': DATE}"

// schemaOnly reads a table's schema file alone (f, its SQL expression): no
// rows, every column.
func schemaOnly(f string) string { return fmt.Sprintf("read_parquet(%s, %s)", f, hiveOpts) }

// readFiles reads a table's files (or globs), given as SQL expressions,
// with its schema file f when not every file has this build's schema.
func readFiles(table, f string, files []string, schemas map[string][]string) string {
	if fps := schemas[table]; len(fps) == 1 && fps[0] == schemaFingerprint(table) {
		if len(files) == 1 {
			return fmt.Sprintf("read_parquet(%s, %s)", files[0], hiveOpts)
		}
		return fmt.Sprintf("read_parquet([%s], %s)", strings.Join(files, ", "), hiveOpts)
	}
	return fmt.Sprintf("read_parquet([%s, %s], union_by_name = true, %s)", f, strings.Join(files, ", "), hiveOpts)
}

// Partition is one platform=/date= directory of a table.
type Partition struct{ Platform, Date string }

// Partitions lists a table's partitions of a platform ("": every
// platform), newest date first.
func Partitions(lake, table, platform string) ([]Partition, error) {
	parts, err := tablePartitions(lake, table)
	if err != nil {
		return nil, err
	}
	var out []Partition
	for _, p := range parts {
		if platform == "" || p.platform == platform {
			out = append(out, Partition{Platform: p.platform, Date: p.date})
		}
	}
	slices.SortStableFunc(out, func(a, b Partition) int { return strings.Compare(b.Date, a.Date) })
	return out, nil
}

// DatesOf returns the distinct dates of partitions listed newest first.
func DatesOf(parts []Partition) []string {
	var dates []string
	for _, p := range parts {
		if len(dates) == 0 || dates[len(dates)-1] != p.Date {
			dates = append(dates, p.Date)
		}
	}
	return dates
}

// PartitionSource is a source of the rows of view (messages or
// exchange_rows) in the given partitions only, as the view has them. Its
// files are listed here and named one by one: DuckDB expands a table's
// glob, and prunes by partition, on every query, which on a lake of
// thousands of partitions costs a lookup of a few files 50-100 ms.
func PartitionSource(lake, view string, parts []Partition) (string, error) {
	var table string
	switch view {
	case "messages":
		table = TableMessages
	case "exchange_rows":
		table = TableExchanges
	default:
		return "", fmt.Errorf("load: no partition source for view %q", view)
	}
	lake, err := filepath.Abs(lake)
	if err != nil {
		return "", err
	}
	sf, err := schemaFile(lake, table, true)
	if err != nil {
		return "", err
	}
	l := lakeSQL{abs: lake}
	f, _ := l.file(sf)
	var files []string
	for _, p := range parts {
		files, err = appendParquetFiles(files, Dir(lake, table, p.Platform, p.Date))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	src := schemaOnly(f)
	if len(files) > 0 {
		for i, p := range files {
			files[i], _ = l.file(p)
		}
		src = readFiles(table, f, files, readSchemas(lake))
	}
	q := viewSelect(view) + src
	if Versioned(lake)[table] {
		q += latest
	}
	return "(" + q + ")", nil
}

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
	"raw": {TableRaw}, "messages": {TableMessages}, "documents": {TableDocuments},
	"decisions": {TableDecisions}, "file_refs": {TableFileRefs}, "other": {TableOther},
	"exchange_rows": {TableExchanges}, "exchanges": {"view:exchange_rows"},
	"sessions": {TableSessions, "view:messages", "view:exchanges"},
	"chunks":   {TableChunks}, "chunk_rows": {TableChunks}, "postings": {TablePostings},
	"session_rows": {TableSessions}, "summaries": {TableSummaries},
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
	versioned := Versioned(lake)
	schemas := readSchemas(lake)
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
	for _, t := range []string{TableRaw, TableMessages, TableDocuments, TableDecisions, TableFileRefs, TableOther} {
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
		ex := viewSelect("exchange_rows") + src[TableExchanges]
		if versioned[TableExchanges] {
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
		stmts = append(stmts, "CREATE OR REPLACE VIEW sessions AS\n"+fmt.Sprintf(sessionsQuery, src[TableSessions], "", "exchanges"))
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

// sessionsQuery is the sessions view: it keeps the latest metadata of each
// session (titles by preference: the name the user gave it, the
// platform's own, the latest summary label, the first prompt) and counts everything else from the messages and
// exchanges, so sessions loaded in several incremental runs add up. %[1]s is
// the session rollups' source, %[2]s a filter each part applies to its own
// rows, %[3]s the exchanges' source.
const sessionsQuery = "WITH " + sessionsMeta + ", " + sessionsM + ", " + sessionsE + "\n" + sessionsSelect

// The parts of the sessions view's query: the metadata of each session
// from the session rollups (%[1]s, each part filtering its rows with
// %[2]s), the counts from the messages and the exchanges (%[3]s), and the
// select that joins them.
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
  %[2]sGROUP BY ALL
)`
	sessionsM = `m AS (
  SELECT platform, session_id,
    min(ts) AS first_ts, max(ts) AS last_ts,
    count(*) AS message_count,
    count(*) FILTER (WHERE role = 'user' AND content_type IN ('text', 'command') AND NOT sidechain) AS user_count,
    count(*) FILTER (WHERE role = 'assistant') AS assistant_count,
    sum(tool_count) FILTER (WHERE role = 'assistant') AS tool_count,
    count(*) FILTER (WHERE content_type = 'compact_boundary') AS compactions,
    count(DISTINCT agent_id) FILTER (WHERE sidechain) AS subagents,
    sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
    sum(cache_creation_tokens) AS cache_creation_tokens, sum(cache_read_tokens) AS cache_read_tokens,
    list(DISTINCT model ORDER BY model) FILTER (WHERE model IS NOT NULL AND model <> '<synthetic>') AS models,
    arg_min(project, ts) AS msg_project, arg_max(user, ts) AS user, arg_max(machine, ts) AS machine
  FROM messages
  %[2]sGROUP BY ALL
)`
	sessionsE = `e AS (
  SELECT platform, session_id, count(*) FILTER (WHERE NOT sidechain) AS exchange_count
  FROM %[3]s
  %[2]sGROUP BY ALL
)`
	sessionsSelect = `SELECT
  platform, session_id,
  coalesce(meta.user_title, meta.platform_title, meta.all_labels[-1], meta.prompt_title) AS title,
  meta.slug, coalesce(m.first_ts, meta.meta_first_ts) AS first_ts, coalesce(m.last_ts, meta.meta_last_ts) AS last_ts,
  coalesce(m.message_count, 0) AS message_count, coalesce(m.user_count, 0) AS user_count,
  coalesce(m.assistant_count, 0) AS assistant_count, coalesce(m.tool_count, 0) AS tool_count,
  coalesce(e.exchange_count, 0) AS exchange_count,
  coalesce(m.compactions, 0) AS compactions, coalesce(m.subagents, 0) AS subagents,
  coalesce(m.input_tokens, 0) AS input_tokens, coalesce(m.output_tokens, 0) AS output_tokens,
  coalesce(m.cache_creation_tokens, 0) AS cache_creation_tokens, coalesce(m.cache_read_tokens, 0) AS cache_read_tokens,
  m.models, list_filter(meta.all_labels, (x, i) -> list_position(meta.all_labels, x) = i) AS labels, meta.plan_id,
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
	return `SELECT platform, date, session_id,
  min(ts) AS first_ts, max(ts) AS last_ts,
  count(*) AS message_count,
  count(*) FILTER (WHERE role = 'user' AND content_type IN ('text', 'command') AND NOT sidechain) AS user_count,
  count(*) FILTER (WHERE role = 'assistant') AS assistant_count,
  CAST(sum(tool_count) FILTER (WHERE role = 'assistant') AS BIGINT) AS tool_count,
  count(*) FILTER (WHERE content_type = 'compact_boundary') AS compactions,
  list(DISTINCT agent_id) FILTER (WHERE sidechain AND agent_id IS NOT NULL) AS agents,
  CAST(sum(input_tokens) AS BIGINT) AS input_tokens, CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
  CAST(sum(cache_creation_tokens) AS BIGINT) AS cache_creation_tokens, CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
  list(DISTINCT model) FILTER (WHERE model IS NOT NULL AND model <> '<synthetic>') AS models,
  arg_min(project, ts) AS msg_project, min(ts) FILTER (WHERE project IS NOT NULL) AS msg_project_ts,
  arg_max(user, ts) AS user, max(ts) FILTER (WHERE user IS NOT NULL) AS user_ts,
  arg_max(machine, ts) AS machine, max(ts) FILTER (WHERE machine IS NOT NULL) AS machine_ts,
  CAST(NULL AS BIGINT) AS exchange_count
FROM messages
WHERE ` + where + `
GROUP BY platform, date, session_id
UNION ALL BY NAME
SELECT platform, date, session_id, count(*) FILTER (WHERE NOT sidechain) AS exchange_count
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
	return "WITH " + fmt.Sprintf(sessionsMeta, meta, "") + `, m AS (
  SELECT platform, session_id,
    min(first_ts) AS first_ts, max(last_ts) AS last_ts,
    CAST(sum(message_count) AS BIGINT) AS message_count, CAST(sum(user_count) AS BIGINT) AS user_count,
    CAST(sum(assistant_count) AS BIGINT) AS assistant_count, sum(tool_count) AS tool_count,
    CAST(sum(compactions) AS BIGINT) AS compactions, length(list_distinct(flatten(list(agents)))) AS subagents,
    sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
    sum(cache_creation_tokens) AS cache_creation_tokens, sum(cache_read_tokens) AS cache_read_tokens,
    list_sort(list_distinct(flatten(list(models)))) AS all_models,
    arg_min(msg_project, msg_project_ts) AS msg_project, arg_max(user, user_ts) AS user, arg_max(machine, machine_ts) AS machine
  FROM ` + parts + `
  WHERE message_count IS NOT NULL
  GROUP BY ALL
), e AS (
  SELECT platform, session_id, CAST(sum(exchange_count) AS BIGINT) AS exchange_count
  FROM ` + parts + `
  WHERE exchange_count IS NOT NULL
  GROUP BY ALL
)
` + strings.Replace(sessionsSelect, "  m.models,", "  CASE WHEN len(m.all_models) > 0 THEN m.all_models END AS models,", 1)
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
	return fmt.Sprintf(sessionsQuery, "session_rows", "WHERE platform = $1 AND session_id = $2\n  ", "exchange_rows")
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

// CatalogFile is the DuckDB database in the lake that holds the views for
// ad-hoc SQL: duckdb <lake>/pos.duckdb.
const CatalogFile = "pos.duckdb"

// WriteCatalog (re)defines the views in <lake>/pos.duckdb. It fails when
// another process has the database open for writing. The views read their
// tables by glob, so new files need no new definition: when the
// statements are those pos.duckdb was last written with (the lake's state
// records their hash), it is left as it is.
//
// The views name no absolute path: they read the lake pos.duckdb is in
// (catalogRoot), so a lake copied, moved or mounted elsewhere is read where
// it is.
func WriteCatalog(ctx context.Context, lake string) error {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return err
	}
	path := filepath.Join(lake, CatalogFile)
	stmts, err := CatalogSQL(lake)
	if err != nil {
		return err
	}
	stamp := filepath.Join(lake, "_state", catalogStamp)
	sum := strconv.FormatUint(xxhash.Sum64String(strings.Join(stmts, ";\n")), 16)
	if b, err := os.ReadFile(stamp); err == nil && string(b) == sum && fileExists(path) {
		return nil
	}
	// The database is attached to an in-memory one, not opened by a DSN:
	// a DSN ends the path at its first "?" and must parse as a URL, and a
	// lake's path may hold anything.
	db, err := sql.Open("duckdb", "?"+dsnOptions)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	attach := path
	if strings.ContainsRune(lake, '?') {
		// DuckDB reads what follows a "?" in a database's path as options
		// (it would write the WAL to "a.wal?b/…", links resolved): the
		// database is written in a private directory, then copied into
		// place.
		tmp, err := os.MkdirTemp("", "pos-catalog-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		attach = filepath.Join(tmp, CatalogFile)
		if err := copyFile(path, attach); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	// Attached as "pos", the name DuckDB gives the file when it is opened
	// itself, so views over views find each other either way.
	setup := []string{"ATTACH " + sqlString(attach) + " AS pos", "USE pos"}
	for _, s := range append(setup, stmts...) {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("defining views: %w", err)
		}
	}
	for _, s := range []string{"CHECKPOINT pos", "USE memory", "DETACH pos"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	if attach != path {
		tmp := TempName(path)
		if err := copyFile(attach, tmp); err != nil {
			os.Remove(tmp)
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	for _, p := range []string{path, path + ".wal"} {
		if _, err := os.Stat(p); err == nil {
			os.Chmod(p, 0o600)
		}
	}
	os.MkdirAll(filepath.Dir(stamp), 0o700)
	return extract.WriteFileAtomic(stamp, []byte(sum))
}

// copyFile copies the file from to a new file to, the user's alone.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// CatalogSQL returns the statements that define the views of
// <lake>/pos.duckdb: every view, reading the files below the directory
// pos.duckdb is in when it is read (see catalogRoot).
func CatalogSQL(lake string) ([]string, error) {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	return viewSQL(lakeSQL{abs: lake, root: catalogRoot(lake)})
}

// catalogStamp is the file in <lake>/_state with the hash of the
// statements pos.duckdb was last written with.
const catalogStamp = "catalog.hash"
