package rollup

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/load/internal/pqread"
	"github.com/pos-lake/pos/load/layout"
)

// RollupRow is one row of the usage rollup file, with the columns of
// RollupColumns. A NULL project reads as "" (every use coalesces it).
type RollupRow struct {
	Platform      string    `parquet:"platform"`
	Date          int32     `parquet:"date,date"` // days since 1970-01-01
	SessionID     string    `parquet:"session_id"`
	Project       string    `parquet:"project"`
	Model         string    `parquet:"model"`
	Hour          time.Time `parquet:"hour,timestamp(microsecond)"`
	CtxRank       uint8     `parquet:"ctx_rank"`
	Messages      int64     `parquet:"messages"`
	Input         int64     `parquet:"input_tokens"`
	Output        int64     `parquet:"output_tokens"`
	CacheCreation int64     `parquet:"cache_creation_tokens"`
	CacheRead     int64     `parquet:"cache_read_tokens"`
	// CacheCreation1h is summed as least(1-hour writes, cache writes) per
	// message; No1h counts the Claude Code messages with cache writes whose
	// file predates the 1-hour column.
	CacheCreation1h int64 `parquet:"cache_creation_1h_tokens"`
	No1h            int64 `parquet:"no1h"`
}

// DateString is the row's date partition, YYYY-MM-DD.
func (r *RollupRow) DateString() string {
	return time.Unix(int64(r.Date)*86400, 0).UTC().Format(time.DateOnly)
}

// ReadRollupRows reads a rollup file whole: it is small, a row per session,
// model, hour and long-context rank.
func ReadRollupRows(path string) ([]RollupRow, error) {
	rows, err := pqread.ReadFile[RollupRow](path, nil, RollupColumns...)
	// A session, project or model fills many rows: one string each.
	strs := map[string]string{}
	intern := func(s *string) {
		if v, ok := strs[*s]; ok {
			*s = v
		} else {
			strs[*s] = *s
		}
	}
	for i := range rows {
		r := &rows[i]
		intern(&r.Platform)
		intern(&r.SessionID)
		intern(&r.Project)
		intern(&r.Model)
	}
	return rows, err
}

// rollupPlan is the rollup's rules made ready to apply in Go to the
// cells of the columns they read (cols).
type rollupPlan struct {
	cols   []string
	filter []int // of each of rollupFilter, its cell
	keys   []int // of each of rollupStringKeys, its cell
	ts     int
	prompt []int // of each of rollupPrompt, its cell
	col    []int // of each of rollupMeasures, the cells of col, atMost and positive (-1: none)
	atMost []int
	pos    []int
	// The cells of id, ingested_at and content_hash, which tell the
	// versions of a message apart: the last two are read for versioned
	// tables only, and come last.
	version [3]int
}

var rollupRules = sync.OnceValue(func() *rollupPlan {
	p := &rollupPlan{}
	cell := func(name string) int { return cellOf(&p.cols, name) }
	// The id first: every file has it.
	p.version[0] = cell("id")
	for _, c := range rollupFilter {
		p.filter = append(p.filter, cell(c.col))
	}
	for _, k := range rollupStringKeys {
		p.keys = append(p.keys, cell(k))
	}
	p.ts = cell("ts")
	for _, c := range rollupPrompt {
		p.prompt = append(p.prompt, cell(c))
	}
	for _, m := range rollupMeasures {
		p.col, p.atMost, p.pos = append(p.col, cell(m.col)), append(p.atMost, cell(m.atMost)), append(p.pos, cell(m.positive))
	}
	p.version[1], p.version[2] = cell("ingested_at"), cell("content_hash")
	return p
})

// partitionRows reads the cells of the rollup's columns (rollupRules) of
// each message of one messages partition ("platform/date"): the latest
// version of each message when the table is versioned.
func partitionRows(lake, part string, versioned bool) (platform string, day time.Time, rows [][]pqread.Cell, err error) {
	platform, date, _ := strings.Cut(part, "/")
	if day, err = time.Parse(time.DateOnly, date); err != nil {
		return "", day, nil, fmt.Errorf("partition %s: %w", part, err)
	}
	files, err := layout.PartFiles(lake, layout.TableMessages, platform, date)
	if err != nil {
		return "", day, nil, err
	}
	p := rollupRules()
	cols := p.cols
	if !versioned {
		cols = cols[:p.version[1]]
	}
	var cells []pqread.Cell
	for _, path := range files {
		if cells, err = readCells(path, cells, cols); err != nil {
			return "", day, nil, err
		}
	}
	w := len(cols)
	rows = make([][]pqread.Cell, 0, len(cells)/w)
	for i := 0; i+w <= len(cells); i += w {
		rows = append(rows, cells[i:i+w])
	}
	if versioned {
		// The newest version of each id (latest ingested_at, then the least
		// content hash), as the view's QUALIFY keeps.
		id, at, hash := p.version[0], p.version[1], p.version[2]
		latest := make(map[string]int, len(rows))
		kept := rows[:0:0]
		for _, m := range rows {
			j, ok := latest[m[id].Str]
			if !ok {
				latest[m[id].Str] = len(kept)
				kept = append(kept, m)
				continue
			}
			if o := kept[j]; m[at].Int > o[at].Int || m[at].Int == o[at].Int && m[hash].Str < o[hash].Str {
				kept[j] = m
			}
		}
		rows = kept
	}
	return platform, day, rows, nil
}

// rollupPartition computes the rollup rows of one messages partition
// ("platform/date") in Go, by the rules RollupSelect is made of: its rows
// over that partition of the messages view, the latest version of each
// message when the table is versioned. It spares pos-load opening DuckDB
// and paying its cost per file. RollupRowsMatchSQL (load) and
// TestRollupRowsCorpus (query) hold the two to the same rows.
func rollupPartition(lake, part string, thresholds []int64, versioned bool) ([]RollupRow, error) {
	platform, day, rows, err := partitionRows(lake, part, versioned)
	if err != nil {
		return nil, err
	}
	p := rollupRules()
	type key struct {
		strs [3]string
		hour int64
		rank uint8
	}
	if len(rollupStringKeys) != len(key{}.strs) {
		return nil, fmt.Errorf("rollup: %d string keys", len(rollupStringKeys))
	}
	groups := map[key][]int64{}
	var order []key
	sums := len(rollupMeasures)
rows:
	for _, m := range rows {
		for i, c := range rollupFilter {
			if (m[p.filter[i]].Str == c.val) == c.not { // NULL reads as ""
				continue rows
			}
		}
		var prompt int64
		for _, c := range p.prompt {
			prompt += m[c].Int // NULL reads as 0
		}
		var rank uint8
		for _, t := range thresholds {
			if prompt > t {
				rank++
			}
		}
		var k key
		for i, c := range p.keys {
			k.strs[i] = m[c].Str
		}
		k.rank = rank
		if ts := m[p.ts]; !ts.Null {
			k.hour = time.Unix(0, ts.Int).Truncate(time.Hour).UnixMicro()
		} else {
			k.hour = time.Time{}.UnixMicro()
		}
		g := groups[k]
		if g == nil {
			g = make([]int64, sums)
			groups[k] = g
			order = append(order, k)
		}
		for i, r := range rollupMeasures {
			switch r.kind {
			case measureCount:
				g[i]++
			case measureSum:
				v := m[p.col[i]].Int
				if r.atMost != "" {
					v = min(v, m[p.atMost[i]].Int)
				}
				g[i] += v
			case measureMissing:
				if m[p.col[i]].Null && platform == r.platform && m[p.pos[i]].Int > 0 {
					g[i]++
				}
			}
		}
	}
	out := make([]RollupRow, 0, len(groups))
	for _, k := range order {
		r := RollupRow{Platform: platform, Date: int32(day.Unix() / 86400), Hour: time.UnixMicro(k.hour).UTC(), CtxRank: k.rank}
		if err := r.set(k.strs[:], groups[k]); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// set fills the fields of the string keys and sums of r, by their columns'
// names.
func (r *RollupRow) set(strs []string, sums []int64) error {
	for i, k := range rollupStringKeys {
		switch k {
		case "session_id":
			r.SessionID = strs[i]
		case "project":
			r.Project = strs[i]
		case "model":
			r.Model = strs[i]
		default:
			return fmt.Errorf("rollup: RollupRow has no key %s", k)
		}
	}
	for i, m := range rollupMeasures {
		f := r.sum(m.name)
		if f == nil {
			return fmt.Errorf("rollup: RollupRow has no column %s", m.name)
		}
		*f = sums[i]
	}
	return nil
}

// sum is the field of r that holds the named sum.
func (r *RollupRow) sum(name string) *int64 {
	switch name {
	case "messages":
		return &r.Messages
	case "input_tokens":
		return &r.Input
	case "output_tokens":
		return &r.Output
	case "cache_creation_tokens":
		return &r.CacheCreation
	case "cache_read_tokens":
		return &r.CacheRead
	case "cache_creation_1h_tokens":
		return &r.CacheCreation1h
	case "no1h":
		return &r.No1h
	}
	return nil
}

// writeRollup writes rows, sorted as readers expect them (platform, date,
// session, hour), to path.
func writeRollup(path string, rows []RollupRow) error {
	slices.SortFunc(rows, CompareRollupRows)
	return layout.WriteParquetFile(path, rows)
}

// CompareRollupRows orders rows as the rollup file stores them: by
// platform, date, session and hour, then project, model and rank. Stats
// sums costs in this order whichever source its rows come from.
func CompareRollupRows(a, b RollupRow) int {
	if c := strings.Compare(a.Platform, b.Platform); c != 0 {
		return c
	}
	if a.Date != b.Date {
		return int(a.Date - b.Date)
	}
	if c := strings.Compare(a.SessionID, b.SessionID); c != 0 {
		return c
	}
	if c := a.Hour.Compare(b.Hour); c != 0 {
		return c
	}
	for _, c := range []int{strings.Compare(a.Project, b.Project), strings.Compare(a.Model, b.Model), int(a.CtxRank) - int(b.CtxRank)} {
		if c != 0 {
			return c
		}
	}
	return 0
}
