package load

import (
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

// partitionFiles lists the Parquet files of one partition of a table (none
// when it has no directory; files being written end in .tmp).
func partitionFiles(lake, table, platform, date string) ([]string, error) {
	return filepath.Glob(filepath.Join(fsglob.Quote(Dir(lake, table, platform, date)), "*.parquet"))
}

// rollupMessage is what the rollup needs of a message.
type rollupMessage struct {
	ID       string    `parquet:"id"`
	Ingested time.Time `parquet:"ingested_at"`
	Hash     string    `parquet:"content_hash"`
	Role     string    `parquet:"role"`
	Model    string    `parquet:"model"`
	Session  string    `parquet:"session_id"`
	Project  string    `parquet:"project"`
	TS       time.Time `parquet:"ts"`
	In       int64     `parquet:"input_tokens"`
	Out      int64     `parquet:"output_tokens"`
	CW       int64     `parquet:"cache_creation_tokens"`
	CR       int64     `parquet:"cache_read_tokens"`
	CW1h     int64     `parquet:"cache_creation_1h_tokens"`
	has1h    bool      // the file has the 1-hour column
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
			j, ok := latest[m.ID]
			if !ok {
				latest[m.ID] = len(kept)
				kept = append(kept, m)
				continue
			}
			if o := kept[j]; m.Ingested.After(o.Ingested) || m.Ingested.Equal(o.Ingested) && m.Hash < o.Hash {
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
		if m.Role != "assistant" || m.Model == "<synthetic>" {
			continue
		}
		var rank uint8
		for _, t := range thresholds {
			if m.In+m.CW+m.CR > t {
				rank++
			}
		}
		hour := m.TS.Truncate(time.Hour)
		k := key{m.Session, m.Project, m.Model, hour.UnixMicro(), rank}
		g := groups[k]
		if g == nil {
			g = &RollupRow{Platform: platform, Date: int32(day.Unix() / 86400), SessionID: m.Session, Project: m.Project,
				Model: m.Model, Hour: hour, CtxRank: rank}
			groups[k] = g
		}
		g.Messages++
		g.Input += m.In
		g.Output += m.Out
		g.CacheCreation += m.CW
		g.CacheRead += m.CR
		g.CacheCreation1h += min(m.CW1h, m.CW)
		if !m.has1h && platform == "claude_code" && m.CW > 0 {
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
	f, pf, err := OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return out, err
	}
	defer f.Close()
	base := len(out)
	if out, err = pqread.ReadRows(pf, out, "id"); err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	// A file that has the column has the split (NULL: none).
	_, has1h := pf.Schema().Lookup("cache_creation_1h_tokens")
	for i := base; i < len(out); i++ {
		out[i].has1h = has1h
	}
	return out, nil
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
