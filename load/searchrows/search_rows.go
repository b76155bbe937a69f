package searchrows

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/internal/pqread"
	"github.com/pos-lake/pos/load/layout"
)

// What search shows of its hits besides their chunks — the exchange a hit
// belongs to, its prompt, the session's title — read in Go from the few
// Parquet files that hold them, so that a search opens no DuckDB database
// (opening one costs more than the rest of a search on a small lake).

// ExchangeHead is what search reads of an exchange.
type ExchangeHead struct {
	ID        string    `parquet:"id"`
	Platform  string    `parquet:"-"` // the partition's
	SessionID string    `parquet:"session_id"`
	AgentID   string    `parquet:"agent_id"`
	TS        time.Time `parquet:"ts"`
	Prompt    string    `parquet:"-"` // only for the exchanges asked for
}

// ReadExchangeRows returns the exchanges of the given partitions whose
// session is in sessions (keys platform + "\x00" + session_id), each with
// its prompt when prompt says so. The exchanges table must have one
// version of each row (see Versioned): the view's choice of the latest is
// not made here.
func ReadExchangeRows(lake string, parts []layout.Partition, sessions map[string]bool, prompt func(id string) bool) ([]ExchangeHead, error) {
	var out []ExchangeHead
	for _, p := range parts {
		files, err := layout.AppendParquetFiles(nil, layout.Dir(lake, layout.TableExchanges, p.Platform, p.Date))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, f := range files {
			rows, err := readExchangeHeads(f, prompt)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				if !sessions[p.Platform+"\x00"+r.SessionID] {
					continue
				}
				r.Platform = p.Platform
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// readExchangeHeads reads the exchanges of one file, with the prompts of
// those prompt asks for (none when it is nil).
func readExchangeHeads(path string, prompt func(id string) bool) ([]ExchangeHead, error) {
	f, pf, err := layout.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := pqread.ReadRows[ExchangeHead](pf, nil, "id", "session_id")
	if err == nil && prompt != nil {
		want := make([]bool, len(rows))
		for i := range rows {
			want[i] = prompt(rows[i].ID)
		}
		err = readStrings(pf, want, func(row int, s string) { rows[row].Prompt = s }, "prompt")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

// readStrings calls fn with the strings of a column of strings (leaf, its
// path) of every row group of pf, for the rows want says.
func readStrings(pf *parquet.File, want []bool, fn func(row int, s string), leaf ...string) error {
	base := 0
	for _, rg := range pf.RowGroups() {
		n := int(rg.NumRows())
		if base+n > len(want) {
			return errors.New("the file has more rows than were read")
		}
		err := pqread.ReadStrings(pf, rg, n, want[base:base+n], func(row int, s string) { fn(base+row, s) }, leaf...)
		if err != nil {
			return err
		}
		base += n
	}
	return nil
}

// SessionTitleRow is what search reads of a session cache's rollup row:
// the columns the sessions view chooses a title and project from.
type SessionTitleRow struct {
	Platform    string    `parquet:"platform"`
	SessionID   string    `parquet:"session_id"`
	Title       string    `parquet:"title,optional"`
	TitleSource string    `parquet:"title_source,optional"`
	IngestedAt  time.Time `parquet:"ingested_at,optional,timestamp(millisecond)"`
	FirstTS     time.Time `parquet:"first_ts,optional,timestamp(millisecond)"`
	TS          time.Time `parquet:"ts,optional,timestamp(millisecond)"`
	Project     string    `parquet:"project,optional"`
	// Labels are read apart from the flat columns, and only for the
	// sessions with no title of the user's or the platform's.
	Labels []string `parquet:"-"`
}

// ReadSessionTitleRows reads the title columns of the rows of the sessions
// in want (keys platform + "\x00" + session_id) from a file of
// SessionMetaRow rows (the session cache's copy of the session rollups).
// The flat columns are read first; the labels, a list, only when a
// wanted session has no title of the user's or the platform's.
func ReadSessionTitleRows(path string, want map[string]bool) ([]SessionTitleRow, error) {
	f, pf, err := layout.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := pqread.ReadRows[SessionTitleRow](pf, nil, "platform", "session_id")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	wanted := make([]bool, len(rows))
	for i, r := range rows {
		wanted[i] = want[r.Platform+"\x00"+r.SessionID]
	}
	titled := map[string]bool{}
	for i, r := range rows {
		if wanted[i] && r.Title != "" && (r.TitleSource == "user" || r.TitleSource == "platform") {
			titled[r.Platform+"\x00"+r.SessionID] = true
		}
	}
	need := false
	for k := range want {
		need = need || !titled[k]
	}
	if need {
		untitled := make([]bool, len(rows))
		for i, r := range rows {
			untitled[i] = wanted[i] && !titled[r.Platform+"\x00"+r.SessionID]
		}
		err := readStrings(pf, untitled, func(row int, s string) { rows[row].Labels = append(rows[row].Labels, s) }, "labels", "list", "element")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	var out []SessionTitleRow
	for i, r := range rows {
		if wanted[i] {
			out = append(out, r)
		}
	}
	return out, nil
}

// SessionPartRef is what search reads of a session cache's parts row:
// which partitions hold a session's exchanges.
type SessionPartRef struct {
	Platform      string `parquet:"platform"`
	Date          int32  `parquet:"date,date"`
	SessionID     string `parquet:"session_id"`
	ExchangeCount *int64 `parquet:"exchange_count,optional"`
}

// ReadSessionPartRefs reads the partition columns of a file of
// SessionPartRow rows (the session cache's parts).
func ReadSessionPartRefs(path string) ([]SessionPartRef, error) {
	return readStructRows[SessionPartRef](path)
}

// readStructRows reads the columns of T of every row of a Parquet file.
func readStructRows[T any](path string) ([]T, error) {
	f, pf, err := layout.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	out := make([]T, pf.NumRows())
	n, err := r.Read(out)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out[:n], nil
}

// StoryMessage is what search reads of a message that called or answered
// tools, to tell an exchange's story.
type StoryMessage struct {
	ID         string           `parquet:"id"`
	SessionID  string           `parquet:"session_id"`
	TS         time.Time        `parquet:"ts,timestamp(millisecond)"`
	Tools      []layout.ToolRow `parquet:"tools,list"`
	ToolCount  int64            `parquet:"tool_count"`
	AgentID    string           `parquet:"agent_id,optional"`
	Cwd        string           `parquet:"cwd,optional"`
	SourceLine int64            `parquet:"source_line,optional"`
	Platform   string           `parquet:"-"` // the partition's
}

// ReadStoryMessages returns the messages with tools of the given
// partitions that keep says to keep (its platform, session, agent and
// time). The messages table must have one version of each row (see
// Versioned).
func ReadStoryMessages(lake string, parts []layout.Partition, keep func(platform, session, agent string, ts time.Time) bool) ([]StoryMessage, error) {
	var out []StoryMessage
	buf := make([]StoryMessage, 64)
	for _, p := range parts {
		files, err := layout.AppendParquetFiles(nil, layout.Dir(lake, layout.TableMessages, p.Platform, p.Date))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, path := range files {
			err := func() error {
				f, pf, err := layout.OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
				if err != nil {
					return err
				}
				defer f.Close()
				r := parquet.NewGenericReader[StoryMessage](pf)
				defer r.Close()
				for {
					clear(buf) // the rows kept hold their tools' slices
					n, err := r.Read(buf)
					for _, m := range buf[:n] {
						if m.ToolCount > 0 && keep(p.Platform, m.SessionID, m.AgentID, m.TS) {
							m.Platform, m.TS = p.Platform, m.TS.UTC()
							out = append(out, m)
						}
					}
					if errors.Is(err, io.EOF) {
						return nil
					}
					if err != nil {
						return err
					}
				}
			}()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return out, nil
}
