package load

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/internal/pqread"
	"golang.org/x/sync/errgroup"
)

// The session cache's rows computed in Go. DuckDB pays a fixed cost for
// each Parquet file it opens, and a lake of a million messages has
// thousands of message, exchange and session files, so building the cache
// with SessionPartsSQL and SessionMetaRowsSQL is mostly that cost. These
// read the same columns with parquet-go and give the same rows
// (TestSessionRowsInGo, in query). They serve lakes whose messages,
// exchanges and sessions have a single version of each row; the SQL keeps
// the others.

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
	v := Versioned(lake)
	return !v[TableMessages] && !v[TableExchanges] && !v[TableSessions]
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
	return writeParquetFile(path, rows)
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

// partMessage is what the session parts read of a message. A NULL reads
// as the zero value, with has* saying which were NULL where it matters.
type partMessage struct {
	session, role, contentType, agent, model, project, user, machine string
	ts                                                               time.Time
	sidechain, hasSidechain                                          bool
	tools, in, out, cw, cr                                           int64
	hasTools, hasIn, hasOut, hasCW, hasCR                            bool
}

var partMessageColumns = []string{"session_id", "ts", "role", "content_type", "sidechain", "tool_count", "agent_id",
	"input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "model", "project", "user", "machine"}

// sessionAgg accumulates one session's SessionPartRow from its messages.
// msg_project_ts, user_ts and machine_ts (min or max of ts where the
// value is not NULL) are the times of the rows arg_min and arg_max keep.
type sessionAgg struct {
	row                     SessionPartRow
	n, users, assistants    int64
	compactions             int64
	tools, in, out, cw, cr  int64
	hasTools, hasIn, hasOut bool
	hasCW, hasCR            bool
	agents, models          map[string]bool
	minTS, maxTS            time.Time
	hasTS                   bool
	projectTS               time.Time // of the row arg_min(project, ts) keeps
	userTS, machineTS       time.Time // of the rows arg_max(user|machine, ts) keep
	hasProject, hasUser     bool
	hasMachine              bool
}

func (a *sessionAgg) add(m *partMessage) {
	a.n++
	if !m.ts.IsZero() {
		if !a.hasTS || m.ts.Before(a.minTS) {
			a.minTS = m.ts
		}
		if !a.hasTS || m.ts.After(a.maxTS) {
			a.maxTS = m.ts
		}
		a.hasTS = true
	}
	if m.role == "user" && (m.contentType == "text" || m.contentType == "command") && m.hasSidechain && !m.sidechain {
		a.users++
	}
	if m.role == "assistant" {
		a.assistants++
		if m.hasTools {
			a.tools += m.tools
			a.hasTools = true
		}
	}
	if m.contentType == "compact_boundary" {
		a.compactions++
	}
	if m.hasSidechain && m.sidechain && m.agent != "" {
		if a.agents == nil {
			a.agents = map[string]bool{}
		}
		a.agents[m.agent] = true
	}
	sum := func(total *int64, has *bool, v int64, ok bool) {
		if ok {
			*total += v
			*has = true
		}
	}
	sum(&a.in, &a.hasIn, m.in, m.hasIn)
	sum(&a.out, &a.hasOut, m.out, m.hasOut)
	sum(&a.cw, &a.hasCW, m.cw, m.hasCW)
	sum(&a.cr, &a.hasCR, m.cr, m.hasCR)
	if m.model != "" && m.model != "<synthetic>" {
		if a.models == nil {
			a.models = map[string]bool{}
		}
		a.models[m.model] = true
	}
	if m.ts.IsZero() {
		return // arg_min, arg_max and the FILTERed min and max skip a NULL ts
	}
	// arg_min and arg_max skip a NULL argument; of equal times the first
	// row seen wins, as DuckDB's scan of one partition gives it.
	if m.project != "" {
		if !a.hasProject || m.ts.Before(a.projectTS) {
			a.row.MsgProject, a.projectTS, a.hasProject = m.project, m.ts, true
		}
	}
	if m.user != "" {
		if !a.hasUser || m.ts.After(a.userTS) {
			a.row.User, a.userTS, a.hasUser = m.user, m.ts, true
		}
	}
	if m.machine != "" {
		if !a.hasMachine || m.ts.After(a.machineTS) {
			a.row.Machine, a.machineTS, a.hasMachine = m.machine, m.ts, true
		}
	}
}

func (a *sessionAgg) finish() SessionPartRow {
	r := a.row
	p := func(v int64) *int64 { return &v }
	r.FirstTS, r.LastTS = a.minTS, a.maxTS
	r.MessageCount, r.UserCount, r.AssistantCount, r.Compactions = p(a.n), p(a.users), p(a.assistants), p(a.compactions)
	opt := func(v int64, has bool) *int64 {
		if !has {
			return nil
		}
		return p(v)
	}
	r.ToolCount = opt(a.tools, a.hasTools)
	r.InputTokens, r.OutputTokens = opt(a.in, a.hasIn), opt(a.out, a.hasOut)
	r.CacheCreationTokens, r.CacheReadTokens = opt(a.cw, a.hasCW), opt(a.cr, a.hasCR)
	r.Agents = slices.Sorted(maps.Keys(a.agents))
	r.Models = slices.Sorted(maps.Keys(a.models))
	r.MsgProjectTS, r.UserTS, r.MachineTS = a.projectTS, a.userTS, a.machineTS
	return r
}

// sessionParts computes the SessionPartsSQL rows of one partition.
func sessionParts(lake, platform, date string, day int32) ([]SessionPartRow, error) {
	files, err := partitionFiles(lake, TableMessages, platform, date)
	if err != nil {
		return nil, err
	}
	aggs := map[string]*sessionAgg{}
	var order []string
	var msgs []partMessage
	for _, path := range files {
		msgs, err = readFlatRows(path, msgs[:0], partMessageColumns, func(name string) bool { return name == "session_id" },
			func(m *partMessage, name string, col pqread.Column, v parquet.Value) {
				null := v.IsNull()
				switch name {
				case "session_id":
					m.session = string(v.ByteArray())
				case "ts":
					m.ts = col.Time(v)
				case "role":
					m.role = string(v.ByteArray())
				case "content_type":
					m.contentType = string(v.ByteArray())
				case "sidechain":
					m.sidechain, m.hasSidechain = v.Boolean(), !null
				case "tool_count":
					m.tools, m.hasTools = col.Int(v), !null
				case "agent_id":
					m.agent = string(v.ByteArray())
				case "input_tokens":
					m.in, m.hasIn = col.Int(v), !null
				case "output_tokens":
					m.out, m.hasOut = col.Int(v), !null
				case "cache_creation_tokens":
					m.cw, m.hasCW = col.Int(v), !null
				case "cache_read_tokens":
					m.cr, m.hasCR = col.Int(v), !null
				case "model":
					m.model = string(v.ByteArray())
				case "project":
					m.project = string(v.ByteArray())
				case "user":
					m.user = string(v.ByteArray())
				case "machine":
					m.machine = string(v.ByteArray())
				}
			})
		if err != nil {
			return nil, err
		}
		for i := range msgs {
			m := &msgs[i]
			a := aggs[m.session]
			if a == nil {
				a = &sessionAgg{row: SessionPartRow{Platform: platform, Date: day, SessionID: m.session}}
				aggs[m.session] = a
				order = append(order, m.session)
			}
			a.add(m)
		}
	}
	out := make([]SessionPartRow, 0, len(order)*2)
	for _, s := range order {
		out = append(out, aggs[s].finish())
	}
	// The exchanges' rows: count(*) FILTER (WHERE NOT sidechain) per session.
	files, err = partitionFiles(lake, TableExchanges, platform, date)
	if err != nil {
		return nil, err
	}
	type exchange struct {
		session            string
		sidechain, hasSide bool
	}
	counts := map[string]*int64{}
	order = order[:0]
	var exs []exchange
	for _, path := range files {
		exs, err = readFlatRows(path, exs[:0], []string{"session_id", "sidechain"}, func(name string) bool { return name == "session_id" },
			func(e *exchange, name string, _ pqread.Column, v parquet.Value) {
				if name == "session_id" {
					e.session = string(v.ByteArray())
				} else {
					e.sidechain, e.hasSide = v.Boolean(), !v.IsNull()
				}
			})
		if err != nil {
			return nil, err
		}
		for _, e := range exs {
			c := counts[e.session]
			if c == nil {
				c = new(int64)
				counts[e.session] = c
				order = append(order, e.session)
			}
			if e.hasSide && !e.sidechain {
				*c++
			}
		}
	}
	for _, s := range order {
		out = append(out, SessionPartRow{Platform: platform, Date: day, SessionID: s, ExchangeCount: counts[s]})
	}
	return out, nil
}

// sessionMetaColumns are the flat columns of the sessions table
// SessionMetaRowsSQL reads; the lists (sessionMetaLists) are read apart.
var sessionMetaColumns = []string{"session_id", "title", "title_source", "ingested_at", "first_ts", "ts", "last_ts",
	"slug", "plan_id", "cwd", "git_branch", "project", "meta", "completeness"}

// sessionMeta reads the SessionMetaRowsSQL rows of one partition of the
// sessions table.
func sessionMeta(lake, platform, date string, day int32) ([]SessionMetaRow, error) {
	files, err := partitionFiles(lake, TableSessions, platform, date)
	if err != nil {
		return nil, err
	}
	var out []SessionMetaRow
	for _, path := range files {
		if out, err = readSessionMeta(path, platform, day, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readSessionMeta appends the rows of one sessions file: only the columns
// the rows hold are read (a rollup's models and extra are not).
func readSessionMeta(path, platform string, day int32, out []SessionMetaRow) ([]SessionMetaRow, error) {
	return readRowGroups(path, out, sessionMetaColumns, func(name string) bool { return name == "session_id" },
		func(r *SessionMetaRow, name string, col pqread.Column, v parquet.Value) {
			switch name {
			case "session_id":
				r.SessionID = string(v.ByteArray())
			case "title":
				r.Title = string(v.ByteArray())
			case "title_source":
				r.TitleSource = string(v.ByteArray())
			case "ingested_at":
				r.IngestedAt = col.Time(v)
			case "first_ts":
				r.FirstTS = col.Time(v)
			case "ts":
				r.TS = col.Time(v)
			case "last_ts":
				r.LastTS = col.Time(v)
			case "slug":
				r.Slug = string(v.ByteArray())
			case "plan_id":
				r.PlanID = string(v.ByteArray())
			case "cwd":
				r.Cwd = string(v.ByteArray())
			case "git_branch":
				r.GitBranch = string(v.ByteArray())
			case "project":
				r.Project = string(v.ByteArray())
			case "meta":
				r.Meta = string(v.ByteArray())
			case "completeness":
				if !v.IsNull() {
					c := string(v.ByteArray())
					r.Completeness = &c
				}
			}
		},
		func(pf *parquet.File, rg parquet.RowGroup, rows []SessionMetaRow) error {
			for i := range rows {
				rows[i].Platform, rows[i].Date = platform, day
			}
			for _, l := range sessionMetaLists {
				col, ok := pf.Schema().Lookup(l.name, "list", "element")
				if !ok {
					continue // a file that predates the column: NULL
				}
				// A list's values: repetition level 0 starts a row; a value
				// at the full definition level is an element (below it: an
				// empty list).
				row := -1
				err := pqread.ReadColumns(rg, []pqread.Column{{Index: col.ColumnIndex}}, func(_, _ int, v parquet.Value) error {
					if v.RepetitionLevel() == 0 {
						row++
					}
					if row < 0 || row >= len(rows) {
						return fmt.Errorf("%s: more lists than the row group has rows", l.name)
					}
					if v.DefinitionLevel() == col.MaxDefinitionLevel {
						p := l.of(&rows[row])
						*p = append(*p, string(v.ByteArray()))
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
}

// sessionMetaLists are the list columns of the sessions table
// SessionMetaRowsSQL reads, and where a row keeps each.
var sessionMetaLists = []struct {
	name string
	of   func(*SessionMetaRow) *[]string
}{
	{"labels", func(r *SessionMetaRow) *[]string { return &r.Labels }},
	{"pull_requests", func(r *SessionMetaRow) *[]string { return &r.PullRequests }},
}
