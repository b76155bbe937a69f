package load

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/internal/pqread"
)

// What search shows of its hits besides their chunks — the exchange a hit
// belongs to, its prompt, the session's title — read in Go from the few
// Parquet files that hold them, so that a search opens no DuckDB database
// (opening one costs more than the rest of a search on a small lake).

// ExchangeHead is what search reads of an exchange.
type ExchangeHead struct {
	ID, Platform, SessionID, AgentID string
	TS                               time.Time
	Prompt                           string // only for the exchanges asked for
}

var exchangeRowColumns = []string{"id", "session_id", "agent_id", "ts", "prompt"}

// ReadExchangeRows returns the exchanges of the given partitions whose
// session is in sessions (keys platform + "\x00" + session_id), each with
// its prompt when prompt says so. The exchanges table must have one
// version of each row (see Versioned): the view's choice of the latest is
// not made here.
func ReadExchangeRows(lake string, parts []Partition, sessions map[string]bool, prompt func(id string) bool) ([]ExchangeHead, error) {
	var out []ExchangeHead
	for _, p := range parts {
		files, err := appendParquetFiles(nil, Dir(lake, TableExchanges, p.Platform, p.Date))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, f := range files {
			type row struct {
				id, session, agent string
				ts                 time.Time
				prompt             string
			}
			rows, err := readFlatRows(f, nil, exchangeRowColumns, func(name string) bool { return name == "id" || name == "session_id" },
				func(r *row, name string, col pqread.Column, v parquet.Value) {
					if v.IsNull() {
						return
					}
					switch name {
					case "id":
						r.id = string(v.ByteArray())
					case "session_id":
						r.session = string(v.ByteArray())
					case "agent_id":
						r.agent = string(v.ByteArray())
					case "ts":
						r.ts = col.Time(v)
					case "prompt": // read after the id (columns are read in order)
						if prompt != nil && prompt(r.id) {
							r.prompt = string(v.ByteArray())
						}
					}
				})
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				if !sessions[p.Platform+"\x00"+r.session] {
					continue
				}
				out = append(out, ExchangeHead{ID: r.id, Platform: p.Platform, SessionID: r.session, AgentID: r.agent, TS: r.ts, Prompt: r.prompt})
			}
		}
	}
	return out, nil
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
	Labels      []string  `parquet:"labels,list"`
}

// ReadSessionTitleRows reads the title columns of the rows of the sessions
// in want (keys platform + "\x00" + session_id) from a file of
// SessionMetaRow rows (the session cache's copy of the session rollups).
// The flat columns are read first; the labels, a list, only when a
// wanted session has no title of the user's or the platform's.
func ReadSessionTitleRows(path string, want map[string]bool) ([]SessionTitleRow, error) {
	type row struct {
		SessionTitleRow
		wanted bool
	}
	names := []string{"platform", "session_id", "title", "title_source", "ingested_at", "first_ts", "ts", "project"}
	rows, err := readFlatRows(path, nil, names, func(name string) bool { return name == "platform" || name == "session_id" },
		func(r *row, name string, col pqread.Column, v parquet.Value) {
			if v.IsNull() || name != "platform" && name != "session_id" && !r.wanted {
				return
			}
			switch name {
			case "platform":
				r.Platform = string(v.ByteArray())
			case "session_id": // after the platform
				r.SessionID = string(v.ByteArray())
				r.wanted = want[r.Platform+"\x00"+r.SessionID]
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
			case "project":
				r.Project = string(v.ByteArray())
			}
		})
	if err != nil {
		return nil, err
	}
	titled := map[string]bool{}
	for _, r := range rows {
		if r.wanted && r.Title != "" && (r.TitleSource == "user" || r.TitleSource == "platform") {
			titled[r.Platform+"\x00"+r.SessionID] = true
		}
	}
	need := false
	for k := range want {
		need = need || !titled[k]
	}
	var labels [][]string
	if need {
		wanted := make([]bool, len(rows))
		for i, r := range rows {
			wanted[i] = r.wanted && !titled[r.Platform+"\x00"+r.SessionID]
		}
		if labels, err = readListColumn(path, len(rows), wanted, "labels", "list", "element"); err != nil {
			return nil, err
		}
	}
	var out []SessionTitleRow
	for i, r := range rows {
		if r.wanted {
			if labels != nil {
				r.Labels = labels[i]
			}
			out = append(out, r.SessionTitleRow)
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
	f, pf, err := OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
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
	ID         string    `parquet:"id"`
	SessionID  string    `parquet:"session_id"`
	TS         time.Time `parquet:"ts,timestamp(millisecond)"`
	Tools      []ToolRow `parquet:"tools,list"`
	ToolCount  int64     `parquet:"tool_count"`
	AgentID    string    `parquet:"agent_id,optional"`
	Cwd        string    `parquet:"cwd,optional"`
	SourceLine int64     `parquet:"source_line,optional"`
	Platform   string    `parquet:"-"` // the partition's
}

// ReadStoryMessages returns the messages with tools of the given
// partitions that keep says to keep (its platform, session, agent and
// time). The messages table must have one version of each row (see
// Versioned).
func ReadStoryMessages(lake string, parts []Partition, keep func(platform, session, agent string, ts time.Time) bool) ([]StoryMessage, error) {
	var out []StoryMessage
	buf := make([]StoryMessage, 64)
	for _, p := range parts {
		files, err := appendParquetFiles(nil, Dir(lake, TableMessages, p.Platform, p.Date))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, path := range files {
			err := func() error {
				f, pf, err := OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
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

// readListColumn reads a list of strings column (the path of its leaf)
// of a Parquet file of n rows, for the rows wanted says.
func readListColumn(path string, n int, wanted []bool, leaf ...string) ([][]string, error) {
	f, pf, err := OpenParquet(path, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([][]string, n)
	c, ok := pf.Schema().Lookup(leaf...)
	if !ok {
		return out, nil // a file before the column: NULL
	}
	row := -1
	buf := make([]parquet.Value, 1024)
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[c.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			vr := p.Values()
			for {
				k, err := vr.ReadValues(buf)
				for _, v := range buf[:k] {
					if v.RepetitionLevel() == 0 {
						row++
					}
					if row >= n {
						parquet.Release(p)
						pages.Close()
						return nil, fmt.Errorf("%s: more lists than rows", path)
					}
					if wanted[row] && v.DefinitionLevel() == c.MaxDefinitionLevel {
						out[row] = append(out[row], string(v.ByteArray()))
					}
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					parquet.Release(p)
					pages.Close()
					return nil, fmt.Errorf("%s: %w", path, err)
				}
			}
			parquet.Release(p)
		}
		pages.Close()
	}
	return out, nil
}
