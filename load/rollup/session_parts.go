package rollup

import (
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/internal/pqread"
	"github.com/pos-lake/pos/load/layout"
	"golang.org/x/sync/errgroup"
)

// The session cache's rows computed in Go. DuckDB pays a fixed cost for
// each Parquet file it opens, and a lake of a million messages has
// thousands of message, exchange and session files, so building the cache
// with SessionPartsSQL and SessionMetaRowsSQL is mostly that cost. These
// read the same columns with parquet-go and give the same rows
// (TestSessionRowsInGo, in query): the session parts' columns are stated
// once, as rules (sessionMessageRules) that SessionPartsSQL, sessionParts
// and the sessions view's combining of parts (SessionsSQL) are all made
// from. They serve lakes whose messages, exchanges
// and sessions have a single version of each row; the SQL keeps the
// others.

// SessionPartRow is a row of SessionPartsSQL: the counts of one session in
// one partition, from its messages (ExchangeCount NULL) or from its
// exchanges (every other count NULL).
type SessionPartRow struct {
	Platform            string    `parquet:"platform"`
	Date                int32     `parquet:"date,date"`
	SessionID           string    `parquet:"session_id"`
	FirstTS             time.Time `parquet:"first_ts,optional,timestamp(millisecond)"`
	LastTS              time.Time `parquet:"last_ts,optional,timestamp(millisecond)"`
	MessageCount        *int64    `parquet:"message_count,optional"`
	UserCount           *int64    `parquet:"user_count,optional"`
	AssistantCount      *int64    `parquet:"assistant_count,optional"`
	ToolCount           *int64    `parquet:"tool_count,optional"`
	Compactions         *int64    `parquet:"compactions,optional"`
	Agents              []string  `parquet:"agents,list"`
	InputTokens         *int64    `parquet:"input_tokens,optional"`
	OutputTokens        *int64    `parquet:"output_tokens,optional"`
	CacheCreationTokens *int64    `parquet:"cache_creation_tokens,optional"`
	CacheReadTokens     *int64    `parquet:"cache_read_tokens,optional"`
	Models              []string  `parquet:"models,list"`
	MsgProject          string    `parquet:"msg_project,optional"`
	MsgProjectTS        time.Time `parquet:"msg_project_ts,optional,timestamp(millisecond)"`
	User                string    `parquet:"user,optional"`
	UserTS              time.Time `parquet:"user_ts,optional,timestamp(millisecond)"`
	Machine             string    `parquet:"machine,optional"`
	MachineTS           time.Time `parquet:"machine_ts,optional,timestamp(millisecond)"`
	ExchangeCount       *int64    `parquet:"exchange_count,optional"`
}

// SessionMetaRow is a row of SessionMetaRowsSQL: a session rollup's
// columns the sessions view reads, with its partition. A column a file
// predates is NULL, as the view reads it; an optional string's "" is NULL
// too, as the lake stores it.
type SessionMetaRow struct {
	Platform     string    `parquet:"platform"`
	Date         int32     `parquet:"date,date"`
	SessionID    string    `parquet:"session_id"`
	Title        string    `parquet:"title,optional"`
	TitleSource  string    `parquet:"title_source,optional"`
	IngestedAt   time.Time `parquet:"ingested_at,optional,timestamp(millisecond)"`
	FirstTS      time.Time `parquet:"first_ts,optional,timestamp(millisecond)"`
	TS           time.Time `parquet:"ts,optional,timestamp(millisecond)"`
	LastTS       time.Time `parquet:"last_ts,optional,timestamp(millisecond)"`
	Slug         string    `parquet:"slug,optional"`
	PlanID       string    `parquet:"plan_id,optional"`
	Cwd          string    `parquet:"cwd,optional"`
	GitBranch    string    `parquet:"git_branch,optional"`
	Project      string    `parquet:"project,optional"`
	Meta         string    `parquet:"meta,optional"`
	Completeness *string   `parquet:"completeness,optional"` // "" is not NULL here
	Labels       []string  `parquet:"labels,list"`
	PullRequests []string  `parquet:"pull_requests,list"`
}

// SessionCacheInGo reports whether the session cache of lake can be
// computed in Go: no version of a message, exchange or session was ever
// replaced there.
func SessionCacheInGo(lake string) bool {
	v := layout.Versioned(lake)
	return !v[layout.TableMessages] && !v[layout.TableExchanges] && !v[layout.TableSessions]
}

// WriteSessionParts writes to path the SessionPartsSQL rows of the given
// partitions ("platform/date"), computed in Go.
func WriteSessionParts(lake string, parts []string, path string) error {
	return writePartitionRows(path, parts, func(platform, date string, day int32) ([]SessionPartRow, error) {
		return sessionParts(lake, platform, date, day)
	})
}

// WriteSessionMeta writes to path the SessionMetaRowsSQL rows of the given
// partitions of the sessions table, read in Go.
func WriteSessionMeta(lake string, parts []string, path string) error {
	return writePartitionRows(path, parts, func(platform, date string, day int32) ([]SessionMetaRow, error) {
		return sessionMeta(lake, platform, date, day)
	})
}

// writePartitionRows writes to path the rows fn gives for each partition,
// in the partitions' order.
func writePartitionRows[T any](path string, parts []string, fn func(platform, date string, day int32) ([]T, error)) error {
	rows, err := forPartitions(parts, fn)
	if err != nil {
		return err
	}
	return layout.WriteParquetFile(path, rows)
}

// forPartitions runs fn on each partition, a few at a time, and returns
// their rows in the partitions' order.
func forPartitions[T any](parts []string, fn func(platform, date string, day int32) ([]T, error)) ([]T, error) {
	out := make([][]T, len(parts))
	var g errgroup.Group
	g.SetLimit(max(2, runtime.GOMAXPROCS(0)))
	for i, part := range parts {
		platform, date, ok := strings.Cut(part, "/")
		t, err := time.Parse(time.DateOnly, date)
		if !ok || err != nil {
			return nil, fmt.Errorf("partition %q: not platform/date", part)
		}
		day := int32(t.Unix() / 86400)
		g.Go(func() (err error) {
			out[i], err = fn(platform, date, day)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.Concat(out...), nil
}

// sessionMessageRules are the columns of SessionPartsSQL computed from a
// session's messages in one partition, and sessionExchangeRules those
// computed from its exchanges: the one statement of each column's rule,
// from which SessionPartsSQL's select lists, sessionParts's aggregation
// and the sessions view's combining of parts by session are made. Their names and order are SessionPartRow's, after
// platform, date and session_id.
var (
	sessionMessageRules = []partRule{
		{name: "first_ts", agg: aggMin, arg: "ts"},
		{name: "last_ts", agg: aggMax, arg: "ts"},
		{name: "message_count", agg: aggCount},
		{name: "user_count", agg: aggCount, where: []cond{in("role", "user"), in("content_type", "text", "command"), isFalse("sidechain")}},
		{name: "assistant_count", agg: aggCount, where: []cond{in("role", "assistant")}},
		{name: "tool_count", agg: aggSum, arg: "tool_count", where: []cond{in("role", "assistant")}},
		{name: "compactions", agg: aggCount, where: []cond{in("content_type", "compact_boundary")}},
		{name: "agents", agg: aggDistinct, arg: "agent_id", where: []cond{isTrue("sidechain")}},
		{name: "input_tokens", agg: aggSum, arg: "input_tokens"},
		{name: "output_tokens", agg: aggSum, arg: "output_tokens"},
		{name: "cache_creation_tokens", agg: aggSum, arg: "cache_creation_tokens"},
		{name: "cache_read_tokens", agg: aggSum, arg: "cache_read_tokens"},
		{name: "models", agg: aggDistinct, arg: "model", where: []cond{notEq("model", "<synthetic>")}},
		// The times of the rows arg_min and arg_max keep (at), so that the
		// parts of several partitions combine to the session's.
		{name: "msg_project", agg: aggArgMin, arg: "project", by: "ts", at: "msg_project_ts"},
		{name: "msg_project_ts", agg: aggMin, arg: "ts", where: []cond{notNull("project")}},
		{name: "user", agg: aggArgMax, arg: "user", by: "ts", at: "user_ts"},
		{name: "user_ts", agg: aggMax, arg: "ts", where: []cond{notNull("user")}},
		{name: "machine", agg: aggArgMax, arg: "machine", by: "ts", at: "machine_ts"},
		{name: "machine_ts", agg: aggMax, arg: "ts", where: []cond{notNull("machine")}},
	}
	sessionExchangeRules = []partRule{
		{name: "exchange_count", agg: aggCount, where: []cond{isFalse("sidechain")}},
	}
)

// partRule is a column of the session parts: an aggregate of a session's
// rows in a partition.
type partRule struct {
	name  string // the column
	agg   aggKind
	arg   string // the column aggregated (none for a count)
	by    string // the column arg_min and arg_max order by
	at    string // for arg_min and arg_max, the rule that keeps by of the row kept
	where []cond // the rows aggregated: those all of these hold for
}

type aggKind int

const (
	aggCount    aggKind = iota // the rows: BIGINT
	aggSum                     // the sum of arg, NULL for none: BIGINT
	aggMin                     // the least of arg, NULLs aside
	aggMax                     // the greatest of arg, NULLs aside
	aggArgMin                  // arg of the row of least by (of equal ones, the first read); NULLs aside
	aggArgMax                  // arg of the row of greatest by (likewise)
	aggDistinct                // the distinct values of arg, NULL aside: a list, NULL for none
)

// aggFuncs are the DuckDB aggregates of the kinds that are one call.
var aggFuncs = [...]string{aggSum: "sum", aggMin: "min", aggMax: "max", aggArgMin: "arg_min", aggArgMax: "arg_max"}

// call is the DuckDB call of a sum, min, max, arg_min or arg_max over col;
// arg_min and arg_max keep col of the row of least or greatest by.
func (a aggKind) call(col, by string) string {
	if a == aggArgMin || a == aggArgMax {
		return aggFuncs[a] + "(" + col + ", " + by + ")"
	}
	return aggFuncs[a] + "(" + col + ")"
}

// cond is a condition on a column; a NULL holds for none but notNull's
// negation.
type cond struct {
	col  string
	op   condOp
	vals []string
}

type condOp int

const (
	opIn      condOp = iota // the column is one of vals
	opNotEq                 // the column is not vals[0]
	opTrue                  // the boolean column is true
	opFalse                 // the boolean column is false
	opNotNull               // the column is not NULL
)

func in(col string, vals ...string) cond { return cond{col, opIn, vals} }
func notEq(col, val string) cond         { return cond{col, opNotEq, []string{val}} }
func isTrue(col string) cond             { return cond{col: col, op: opTrue} }
func isFalse(col string) cond            { return cond{col: col, op: opFalse} }
func notNull(col string) cond            { return cond{col: col, op: opNotNull} }

// conds is the rule's condition, with the one its aggregate implies.
func (r *partRule) conds() []cond {
	if r.agg == aggDistinct {
		return append(slices.Clone(r.where), notNull(r.arg))
	}
	return r.where
}

// sql is the rule's select item.
func (r *partRule) sql() string {
	var e string
	switch r.agg {
	case aggCount:
		e = "count(*)"
	case aggDistinct:
		e = "list(DISTINCT " + r.arg + ")"
	default:
		e = r.agg.call(r.arg, r.by)
	}
	if cs := r.conds(); len(cs) > 0 {
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = c.sql()
		}
		e += " FILTER (WHERE " + strings.Join(parts, " AND ") + ")"
	}
	if r.agg == aggSum {
		e = "CAST(" + e + " AS BIGINT)"
	}
	return e + " AS " + r.name
}

func (c cond) sql() string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch c.op {
	case opIn:
		if len(c.vals) == 1 {
			return c.col + " = " + quote(c.vals[0])
		}
		q := make([]string, len(c.vals))
		for i, v := range c.vals {
			q[i] = quote(v)
		}
		return c.col + " IN (" + strings.Join(q, ", ") + ")"
	case opNotEq:
		return c.col + " <> " + quote(c.vals[0])
	case opTrue:
		return c.col
	case opFalse:
		return "NOT " + c.col
	}
	return c.col + " IS NOT NULL"
}

// combineSQL is the select item that combines the rule's column over a
// session's parts, in any number of partitions, into the rule's aggregate
// over all its rows: counts and sums add up (a count stays a BIGINT, a sum
// is DuckDB's sum), the least of the least, the greatest of the greatest,
// arg_min and arg_max keep the value of the part whose at is least or
// greatest, and distinct values are those of every part (unsorted; none:
// an empty list or NULL).
func (r *partRule) combineSQL() string {
	var e string
	switch r.agg {
	case aggCount:
		e = "CAST(sum(" + r.name + ") AS BIGINT)"
	case aggDistinct:
		e = "list_distinct(flatten(list(" + r.name + ")))"
	default:
		e = r.agg.call(r.name, r.at)
	}
	return e + " AS " + r.name
}

// sessionCombineSelect is the select list that combines the parts' columns
// of rules, for SessionsFromPartsSQL.
func sessionCombineSelect(rules []partRule) string {
	items := make([]string, len(rules))
	for i := range rules {
		items[i] = rules[i].combineSQL()
	}
	return strings.Join(items, ",\n    ")
}

// sessionPartsSelect is the select list of rules, for SessionPartsSQL.
func sessionPartsSelect(rules []partRule) string {
	items := make([]string, len(rules))
	for i := range rules {
		items[i] = rules[i].sql()
	}
	return strings.Join(items, ",\n  ")
}

// partPlan is rules made ready to apply in Go to the cells of the columns
// they read (cols, session_id first).
type partPlan struct {
	rules []partRule
	cols  []string
	arg   []int // of each rule, the cell of arg and of by (-1: none)
	by    []int
	conds [][]boundCond
	field []int // of each rule, its field of SessionPartRow
}

type boundCond struct {
	cond
	cell int
}

// cellOf is the index of the column name among the columns a plan reads,
// adding it when new; -1 for no column.
func cellOf(cols *[]string, name string) int {
	if name == "" {
		return -1
	}
	if i := slices.Index(*cols, name); i >= 0 {
		return i
	}
	*cols = append(*cols, name)
	return len(*cols) - 1
}

func newPartPlan(rules []partRule) (*partPlan, error) {
	p := &partPlan{rules: rules, cols: []string{"session_id"}}
	cell := func(name string) int { return cellOf(&p.cols, name) }
	fields := map[string]int{}
	rt := reflect.TypeFor[SessionPartRow]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("parquet"), ",")
		fields[name] = i
	}
	for i := range rules {
		r := &rules[i]
		f, ok := fields[r.name]
		if !ok {
			return nil, fmt.Errorf("session parts: SessionPartRow has no column %s", r.name)
		}
		p.field = append(p.field, f)
		p.arg, p.by = append(p.arg, cell(r.arg)), append(p.by, cell(r.by))
		var bc []boundCond
		for _, c := range r.conds() {
			bc = append(bc, boundCond{c, cell(c.col)})
		}
		p.conds = append(p.conds, bc)
	}
	return p, nil
}

var (
	messagePlan  = sync.OnceValues(func() (*partPlan, error) { return newPartPlan(sessionMessageRules) })
	exchangePlan = sync.OnceValues(func() (*partPlan, error) { return newPartPlan(sessionExchangeRules) })
)

func (c *boundCond) holds(row []pqread.Cell) bool {
	v := row[c.cell]
	if v.Null {
		return false
	}
	switch c.op {
	case opIn:
		return slices.Contains(c.vals, v.Str)
	case opNotEq:
		return v.Str != c.vals[0]
	case opTrue:
		return v.Int != 0
	case opFalse:
		return v.Int == 0
	}
	return true
}

// aggState is a rule's aggregate so far.
type aggState struct {
	n    int64 // the count, the sum, the least or greatest time (ns), or arg_min's or arg_max's by
	has  bool  // n or s holds a value
	s    string
	seen map[string]bool
}

func (p *partPlan) add(states []aggState, row []pqread.Cell) {
rules:
	for i := range p.rules {
		for j := range p.conds[i] {
			if !p.conds[i][j].holds(row) {
				continue rules
			}
		}
		st := &states[i]
		if p.rules[i].agg == aggCount {
			st.n++
			continue
		}
		v := row[p.arg[i]]
		if v.Null {
			continue
		}
		switch p.rules[i].agg {
		case aggSum:
			st.n += v.Int
			st.has = true
		case aggMin:
			if !st.has || v.Int < st.n {
				st.n, st.has = v.Int, true
			}
		case aggMax:
			if !st.has || v.Int > st.n {
				st.n, st.has = v.Int, true
			}
		case aggArgMin, aggArgMax:
			by := row[p.by[i]]
			if by.Null {
				continue
			}
			if !st.has || p.rules[i].agg == aggArgMin && by.Int < st.n || p.rules[i].agg == aggArgMax && by.Int > st.n {
				st.n, st.s, st.has = by.Int, v.Str, true
			}
		case aggDistinct:
			if st.seen == nil {
				st.seen = map[string]bool{}
			}
			st.seen[v.Str] = true
		}
	}
}

// finish sets the rules' columns of r from their aggregates.
func (p *partPlan) finish(states []aggState, r *SessionPartRow) {
	rv := reflect.ValueOf(r).Elem()
	for i := range p.rules {
		st := &states[i]
		f := rv.Field(p.field[i])
		switch p.rules[i].agg {
		case aggCount:
			f.Set(reflect.ValueOf(&st.n))
		case aggSum:
			if st.has {
				f.Set(reflect.ValueOf(&st.n))
			}
		case aggMin, aggMax:
			if st.has {
				f.Set(reflect.ValueOf(time.Unix(0, st.n).UTC()))
			}
		case aggArgMin, aggArgMax:
			f.SetString(st.s)
		case aggDistinct:
			if len(st.seen) > 0 {
				f.Set(reflect.ValueOf(slices.Sorted(maps.Keys(st.seen))))
			}
		}
	}
}

// sessionParts computes the SessionPartsSQL rows of one partition: the
// rows of the messages' sessions, then those of the exchanges', each
// session in the order first read.
func sessionParts(lake, platform, date string, day int32) ([]SessionPartRow, error) {
	var out []SessionPartRow
	for _, t := range []struct {
		table string
		plan  func() (*partPlan, error)
	}{{layout.TableMessages, messagePlan}, {layout.TableExchanges, exchangePlan}} {
		p, err := t.plan()
		if err != nil {
			return nil, err
		}
		files, err := layout.PartFiles(lake, t.table, platform, date)
		if err != nil {
			return nil, err
		}
		aggs := map[string][]aggState{}
		var order []string
		var cells []pqread.Cell
		w := len(p.cols)
		for _, path := range files {
			if cells, err = readCells(path, cells[:0], p.cols); err != nil {
				return nil, err
			}
			for i := 0; i+w <= len(cells); i += w {
				row := cells[i : i+w]
				st := aggs[row[0].Str]
				if st == nil {
					st = make([]aggState, len(p.rules))
					aggs[row[0].Str] = st
					order = append(order, row[0].Str)
				}
				p.add(st, row)
			}
		}
		for _, s := range order {
			r := SessionPartRow{Platform: platform, Date: day, SessionID: s}
			p.finish(aggs[s], &r)
			out = append(out, r)
		}
	}
	return out, nil
}

// readCells appends the cells of the named columns of each row of the
// Parquet file at path; the first column must be there.
func readCells(path string, out []pqread.Cell, names []string) ([]pqread.Cell, error) {
	f, pf, err := layout.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return out, err
	}
	defer f.Close()
	if out, err = pqread.ReadCells(pf, out, names, names[0]); err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// sessionMeta reads the SessionMetaRowsSQL rows of one partition of the
// sessions table: only the columns the rows hold (a rollup's models and
// extra are not).
func sessionMeta(lake, platform, date string, day int32) ([]SessionMetaRow, error) {
	files, err := layout.PartFiles(lake, layout.TableSessions, platform, date)
	if err != nil {
		return nil, err
	}
	var out []SessionMetaRow
	for _, path := range files {
		base := len(out)
		if out, err = pqread.ReadFile(path, out, "session_id"); err != nil {
			return nil, err
		}
		for i := base; i < len(out); i++ {
			out[i].Platform, out[i].Date = platform, day
		}
	}
	return out, nil
}
