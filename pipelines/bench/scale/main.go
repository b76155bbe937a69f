// Command scale builds a larger lake from a lake for query benchmarks: the
// messages, exchanges, sessions and documents tables copied --copies times,
// copy k with fresh ids (id~k) and its times moved back k×--shift days, so
// that a 1 GB home's lake (about 130 k messages) becomes a lake of about a
// million messages without generating and loading 8 GB of transcripts:
//
//	go run ./pipelines/bench/scale --from LAKE --to DIR [--copies 8] [--shift 91]
//
// Copy 0 is the source lake's files, hard-linked (copied where links are
// not possible). Each later copy is written file by file, with pos-load's
// row types and writer settings, so every file of a table has the schema
// pos-load writes and the views read them as they read a loaded lake.
// Copies after the first leave the long text columns empty (see
// blankTexts). The raw layer is not copied: no query benchmarked reads it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/schema"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run() error {
	from := flag.String("from", "", "lake to copy")
	to := flag.String("to", "", "directory of the new lake (must not exist)")
	copies := flag.Int("copies", 8, "copies of each table")
	shift := flag.Int("shift", 91, "days between copies")
	flag.Parse()
	if *from == "" || *to == "" || *copies < 1 {
		return errors.New("usage: scale --from LAKE --to DIR [--copies 8] [--shift 91]")
	}
	if _, err := os.Stat(*to); err == nil {
		return fmt.Errorf("%s exists", *to)
	}
	start := time.Now()
	counts, err := build(scaler{from: *from, to: *to, copies: *copies, shift: *shift})
	if err != nil {
		return err
	}
	fmt.Printf("scale: %d copies of %s into %s: messages %d, exchanges %d, sessions %d, documents %d, chunks %d; %.1fs\n",
		*copies, *from, *to, counts[layout.TableMessages], counts[layout.TableExchanges], counts[layout.TableSessions],
		counts[layout.TableDocuments], counts[layout.TableChunks], time.Since(start).Seconds())
	return nil
}

// build writes the scaled lake and returns its rows per table.
func build(s scaler) (map[string]int64, error) {
	counts := map[string]int64{}
	var err error
	if counts[layout.TableMessages], err = copyTable(s, layout.TableMessages, func(r *layout.MessageRow, k int) {
		r.ID, r.SessionID, r.ParentID = s.id(r.ID, k), s.id(r.SessionID, k), s.id(r.ParentID, k)
		r.TS, r.IngestedAt = s.at(r.TS, k), s.at(r.IngestedAt, k)
		r.Text, r.Thinking, r.Tools, r.Meta, r.Extra, r.Files = "", "", nil, "", "", nil
	}); err != nil {
		return nil, err
	}
	if counts[layout.TableExchanges], err = copyTable(s, layout.TableExchanges, func(r *layout.ExchangeRow, k int) {
		r.ID, r.SessionID = s.id(r.ID, k), s.id(r.SessionID, k)
		r.PromptID, r.LastID = s.id(r.PromptID, k), s.id(r.LastID, k)
		r.TS, r.TSEnd, r.IngestedAt = s.at(r.TS, k), s.at(r.TSEnd, k), s.at(r.IngestedAt, k)
		r.Prompt, r.Response, r.Text, r.Extra, r.Files = "", "", "", "", nil
	}); err != nil {
		return nil, err
	}
	if counts[layout.TableSessions], err = copyTable(s, layout.TableSessions, func(r *layout.SessionRow, k int) {
		r.ID, r.SessionID, r.PlanID = s.id(r.ID, k), s.id(r.SessionID, k), s.id(r.PlanID, k)
		r.TS, r.FirstTS, r.LastTS, r.IngestedAt = s.at(r.TS, k), s.at(r.FirstTS, k), s.at(r.LastTS, k), s.at(r.IngestedAt, k)
		r.Meta, r.Extra = "", ""
	}); err != nil {
		return nil, err
	}
	if counts[layout.TableDocuments], err = copyTable(s, layout.TableDocuments, func(r *layout.DocumentRow, k int) {
		r.ID, r.SessionID = s.id(r.ID, k), s.id(r.SessionID, k)
		r.TS, r.IngestedAt = s.at(r.TS, k), s.at(r.IngestedAt, k)
		r.Text, r.Extra = "", ""
	}); err != nil {
		return nil, err
	}
	if counts[layout.TableChunks], err = copyChunks(s); err != nil {
		return nil, err
	}
	return counts, finish(s.to, counts)
}

// copyChunks links the chunks files, their vector sidecars and the
// postings as copy 0, and loads copies 1 to copies-1 of each chunk through
// pos-load's loader (fresh ids, shifted times, the same text and vector),
// which indexes them as it indexes pos-embed's chunks. It returns the
// chunks in the new lake.
func copyChunks(s scaler) (int64, error) {
	var total int64
	for _, table := range []string{layout.TableChunks, layout.TablePostings} {
		root := layout.TableDir(s.from, table)
		files, err := filepath.Glob(filepath.Join(root, "platform=*", "date=*", "*"))
		if err != nil {
			return 0, err
		}
		for _, path := range files {
			rel, _ := filepath.Rel(root, path)
			if err := link(path, filepath.Join(layout.TableDir(s.to, table), rel)); err != nil {
				return 0, err
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(layout.TableDir(s.from, layout.TableChunks), "platform=*", "date=*", "*.parquet"))
	if err != nil || len(files) == 0 {
		return 0, err
	}
	// The lake's embedding model, which the loader checks chunks against.
	if b, err := os.ReadFile(filepath.Join(s.from, "_state", "embeddings.json")); err == nil {
		if err := os.MkdirAll(filepath.Join(s.to, "_state"), 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(s.to, "_state", "embeddings.json"), b, 0o644); err != nil {
			return 0, err
		}
	}
	l, err := load.Open(context.Background(), load.Options{Lake: s.to, NoCatalog: true, Now: time.Now})
	if err != nil {
		return 0, err
	}
	for _, path := range files {
		rows, err := readRows[layout.ChunkRow](path)
		if err != nil {
			l.Abort()
			return 0, err
		}
		total += int64(len(rows)) * int64(s.copies)
		for k := 1; k < s.copies; k++ {
			for i := range rows {
				if err := l.Add(chunkRecord(&rows[i], s, k)); err != nil {
					l.Abort()
					return 0, err
				}
			}
		}
	}
	return total, l.Close()
}

// chunkRecord is copy k of a chunks row, as the record pos-embed emits.
func chunkRecord(c *layout.ChunkRow, s scaler, k int) *schema.Record {
	r := schema.New(schema.KindChunk)
	r.ID, r.Platform, r.SessionID, r.ParentID = s.id(c.ID, k), c.Platform, s.id(c.SessionID, k), s.id(c.ParentID, k)
	r.TS, r.IngestedAt = s.at(c.TS, k), s.at(c.IngestedAt, k)
	r.TSPrecision, r.Role, r.ContentType, r.Title, r.Text = c.TSPrecision, c.Role, c.ContentType, c.Title, c.Text
	r.Cwd, r.GitBranch, r.Project, r.User, r.Machine, r.Completeness = c.Cwd, c.GitBranch, c.Project, c.User, c.Machine, c.Completeness
	if c.AgentID != "" || c.AgentType != "" || c.Sidechain {
		r.Agent = &schema.Agent{ID: c.AgentID, Type: c.AgentType, Sidechain: c.Sidechain}
	}
	r.Chunk = &schema.Chunk{Index: c.ChunkIndex, Model: c.Model, Dim: int64(c.Dim), Embedding: c.Embedding}
	return r
}

type scaler struct {
	from, to      string
	copies, shift int
}

// id is copy k's id for a copy-0 id (empty stays empty).
func (s scaler) id(v string, k int) string {
	if v == "" {
		return ""
	}
	return fmt.Sprintf("%s~%d", v, k)
}

// at moves a time back k×shift days (a zero time stays zero).
func (s scaler) at(t time.Time, k int) time.Time {
	if t.IsZero() {
		return t
	}
	return t.AddDate(0, 0, -k*s.shift)
}

// copyTable links the table's files into the new lake as copy 0 and writes
// copies 1 to copies-1 of each, rewritten by mod, into the partition of its
// shifted date. It returns the rows in the new lake.
func copyTable[T any](s scaler, table string, mod func(*T, int)) (int64, error) {
	root := layout.TableDir(s.from, table)
	files, err := filepath.Glob(filepath.Join(root, "platform=*", "date=*", "*.parquet"))
	if err != nil {
		return 0, err
	}
	var total int64
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		parts := strings.Split(rel, string(filepath.Separator)) // platform=P, date=D, file
		day, err := time.Parse("2006-01-02", strings.TrimPrefix(parts[1], "date="))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		dst := filepath.Join(layout.TableDir(s.to, table), rel)
		if err := link(path, dst); err != nil {
			return 0, err
		}
		rows, err := readRows[T](path)
		if err != nil {
			return 0, err
		}
		total += int64(len(rows)) * int64(s.copies)
		for k := 1; k < s.copies; k++ {
			out := make([]T, len(rows))
			copy(out, rows)
			for i := range out {
				mod(&out[i], k)
			}
			dir := filepath.Join(layout.TableDir(s.to, table), parts[0], "date="+day.AddDate(0, 0, -k*s.shift).Format("2006-01-02"))
			name := fmt.Sprintf("part-scale%d-%s", k, parts[2])
			if err := writeRows(filepath.Join(dir, name), out); err != nil {
				return 0, err
			}
		}
	}
	return total, nil
}

func readRows[T any](path string) ([]T, error) {
	f, pf, err := layout.OpenParquet(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	rows := make([]T, pf.NumRows())
	n, err := r.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(n) != pf.NumRows() {
		return nil, fmt.Errorf("%s: read %d of %d rows", path, n, pf.NumRows())
	}
	return rows, nil
}

// writeRows writes rows as pos-load writes a part file: zstd pages, its
// metadata, a temporary name renamed when complete.
func writeRows[T any](path string, rows []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[T](f, layout.WriterOptions(parquet.SchemaOf(new(T)), parquet.MaxRowsPerRowGroup(50_000))...)
	err = layout.WriteRows(w, rows)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil {
		os.Remove(path + ".tmp")
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// link hard-links src to dst, or copies it where links fail.
func link(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// finish writes the lake's state as pos-load would for tables holding one
// version of each record in this build's schema: the views then read the
// files plainly (no union_by_name, no search for newer versions).
func finish(lake string, counts map[string]int64) error {
	if err := os.MkdirAll(filepath.Join(lake, "_state"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(lake, "_state", "versioned.json"),
		[]byte(`{"raw":false,"messages":false,"exchanges":false,"sessions":false,"documents":false,"decisions":false,"file_refs":false,"chunks":false,"other":false}`), 0o644); err != nil {
		return err
	}
	if _, err := catalog.ViewSQL(lake); err != nil { // writes the schema files
		return err
	}
	fps := map[string][]string{}
	for _, table := range layout.Tables {
		m, _ := filepath.Glob(filepath.Join(lake, "_schema", "*", table))
		if len(m) == 1 && counts[table] > 0 {
			fps[table] = []string{filepath.Base(filepath.Dir(m[0]))}
		}
	}
	b, _ := json.Marshal(fps)
	if err := os.WriteFile(filepath.Join(lake, "_state", "schemas.json"), b, 0o644); err != nil {
		return err
	}
	// The usage rollup pos-load keeps, which pos-query stats reads.
	return rollup.UpdateRollup(context.Background(), lake)
}
