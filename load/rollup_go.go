package load

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/internal/fsglob"
	"github.com/pos-lake/pos/load/internal/pqread"
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
	// A session, project or model fills many rows: one string each.
	strs := map[string]string{}
	intern := func(b []byte) string {
		if s, ok := strs[string(b)]; ok {
			return s
		}
		s := string(b)
		strs[s] = s
		return s
	}
	return readFlatRows(path, nil, RollupColumns, func(string) bool { return true },
		func(r *RollupRow, name string, col pqread.Column, v parquet.Value) {
			switch name {
			case "platform":
				r.Platform = intern(v.ByteArray())
			case "date":
				r.Date = v.Int32()
			case "session_id":
				r.SessionID = intern(v.ByteArray())
			case "project":
				r.Project = intern(v.ByteArray())
			case "model":
				r.Model = intern(v.ByteArray())
			case "hour":
				r.Hour = col.Time(v)
			case "ctx_rank":
				r.CtxRank = uint8(v.Int32())
			default:
				*r.count(name) = col.Int(v)
			}
		})
}

// readFlatRows appends to out a row of T for each row of the Parquet file
// at path, set filling a row's field from each of the named flat columns
// (a column the file does not have reads as NULL, unless need says it
// must be there).
func readFlatRows[T any](path string, out []T, names []string, need func(name string) bool,
	set func(r *T, name string, col pqread.Column, v parquet.Value)) ([]T, error) {
	return readRowGroups(path, out, names, need, set, nil)
}

// readRowGroups is readFlatRows, calling then (when given) after the flat
// columns of each row group with the file, the row group and its rows: to
// read a column that is not flat.
func readRowGroups[T any](path string, out []T, names []string, need func(name string) bool,
	set func(r *T, name string, col pqread.Column, v parquet.Value),
	then func(pf *parquet.File, rg parquet.RowGroup, rows []T) error) ([]T, error) {
	f, pf, err := OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return out, err
	}
	defer f.Close()
	cols := make([]pqread.Column, len(names))
	for i, name := range names {
		if cols[i], err = pqread.LookupColumn(pf, name, need(name)); err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, rg := range pf.RowGroups() {
		base := len(out)
		out = append(out, make([]T, rg.NumRows())...)
		rows := out[base:]
		err := pqread.ReadColumns(rg, cols, func(c, i int, v parquet.Value) error {
			if i >= len(rows) {
				return errors.New("a column has more values than the row group has rows")
			}
			set(&rows[i], names[c], cols[c], v)
			return nil
		})
		if err == nil && then != nil {
			err = then(pf, rg, rows)
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, nil
}

// partitionFiles lists the Parquet files of one partition of a table (none
// when it has no directory; files being written end in .tmp).
func partitionFiles(lake, table, platform, date string) ([]string, error) {
	return filepath.Glob(filepath.Join(fsglob.Quote(Dir(lake, table, platform, date)), "*.parquet"))
}

// count is the field of a count column.
func (r *RollupRow) count(name string) *int64 {
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
	}
	return &r.No1h
}

// rollupMessageColumns are the messages columns a partition's rollup reads.
var rollupMessageColumns = []string{"id", "ingested_at", "content_hash", "role", "model", "session_id", "project", "ts",
	"input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "cache_creation_1h_tokens"}

// rollupMessage is what the rollup needs of a message.
type rollupMessage struct {
	id, hash, role, model, session, project string
	ingested, ts                            time.Time
	in, out, cw, cr                         int64
	cw1h                                    int64
	has1h                                   bool // the file has the 1-hour column
}

// rollupPartition computes the rollup rows of one messages partition
// ("platform/date") in Go: RollupSelect over that partition of the
// messages view, the latest version of each message when the table is
// versioned. TestRollupGoMatchesSQL holds the two to the same rows.
func rollupPartition(lake, part string, thresholds []int64, versioned bool) ([]RollupRow, error) {
	platform, date, _ := strings.Cut(part, "/")
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return nil, fmt.Errorf("partition %s: %w", part, err)
	}
	files, err := partitionFiles(lake, TableMessages, platform, date)
	if err != nil {
		return nil, err
	}
	var msgs []rollupMessage
	for _, path := range files {
		if msgs, err = readRollupMessages(path, msgs); err != nil {
			return nil, err
		}
	}
	if versioned {
		// The newest version of each id (latest ingested_at, then the least
		// content hash), as the view's QUALIFY keeps.
		latest := make(map[string]int, len(msgs))
		kept := msgs[:0:0]
		for _, m := range msgs {
			j, ok := latest[m.id]
			if !ok {
				latest[m.id] = len(kept)
				kept = append(kept, m)
				continue
			}
			if o := kept[j]; m.ingested.After(o.ingested) || m.ingested.Equal(o.ingested) && m.hash < o.hash {
				kept[j] = m
			}
		}
		msgs = kept
	}
	type key struct {
		session, project, model string
		hour                    int64
		rank                    uint8
	}
	groups := map[key]*RollupRow{}
	for _, m := range msgs {
		if m.role != "assistant" || m.model == "<synthetic>" {
			continue
		}
		var rank uint8
		for _, t := range thresholds {
			if m.in+m.cw+m.cr > t {
				rank++
			}
		}
		hour := m.ts.Truncate(time.Hour)
		k := key{m.session, m.project, m.model, hour.UnixMicro(), rank}
		g := groups[k]
		if g == nil {
			g = &RollupRow{Platform: platform, Date: int32(day.Unix() / 86400), SessionID: m.session, Project: m.project,
				Model: m.model, Hour: hour, CtxRank: rank}
			groups[k] = g
		}
		g.Messages++
		g.Input += m.in
		g.Output += m.out
		g.CacheCreation += m.cw
		g.CacheRead += m.cr
		g.CacheCreation1h += min(m.cw1h, m.cw)
		if !m.has1h && platform == "claude_code" && m.cw > 0 {
			g.No1h++
		}
	}
	out := make([]RollupRow, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	return out, nil
}

// readRollupMessages appends the messages of one part file. Only the id
// must be there: a column a file predates reads as NULL, as the view's
// union_by_name gives it.
func readRollupMessages(path string, out []rollupMessage) ([]rollupMessage, error) {
	return readFlatRows(path, out, rollupMessageColumns, func(name string) bool { return name == "id" },
		func(m *rollupMessage, name string, col pqread.Column, v parquet.Value) {
			switch name {
			case "id":
				m.id = string(v.ByteArray())
			case "ingested_at":
				m.ingested = col.Time(v)
			case "content_hash":
				m.hash = string(v.ByteArray())
			case "role":
				m.role = string(v.ByteArray())
			case "model":
				m.model = string(v.ByteArray())
			case "session_id":
				m.session = string(v.ByteArray())
			case "project":
				m.project = string(v.ByteArray())
			case "ts":
				m.ts = col.Time(v)
			case "input_tokens":
				m.in = col.Int(v)
			case "output_tokens":
				m.out = col.Int(v)
			case "cache_creation_tokens":
				m.cw = col.Int(v)
			case "cache_read_tokens":
				m.cr = col.Int(v)
			case "cache_creation_1h_tokens":
				// A file that has the column has the split (NULL: none).
				m.cw1h, m.has1h = col.Int(v), col.Index >= 0
			}
		})
}

// writeRollup writes rows, sorted as readers expect them (platform, date,
// session, hour), to path.
func writeRollup(path string, rows []RollupRow) error {
	slices.SortFunc(rows, func(a, b RollupRow) int {
		return cmpRollup(&a, &b)
	})
	return writeParquetFile(path, rows)
}

// writeParquetFile writes rows to a new file at path, the user's alone,
// with WriterOptions, and syncs it.
func writeParquetFile[T any](path string, rows []T, opts ...parquet.WriterOption) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[T](f, WriterOptions(parquet.SchemaOf(new(T)), opts...)...)
	err = WriteRows(w, rows)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func cmpRollup(a, b *RollupRow) int {
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
