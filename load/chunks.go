package load

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pos-lake/pos/internal/fsglob"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// chunkRow makes a chunk's row, its postings and its vector's entry.
func chunkRow(r *schema.Record, hash string, index *chunkIndex) layout.ChunkRow {
	ag, c := value(r.Agent), value(r.Chunk)
	key := layout.ChunkKey(r.ID, hash)
	n := 0
	if index != nil {
		n = index.post.add(key, r.Text)
		index.vecs.Add(key, r.TS, n, c.Model, c.Embedding)
	} else {
		n = len(lexical.Terms(r.Text))
	}
	row := layout.ChunkRow{
		ID: r.ID, ChunkKey: key, Platform: r.Platform, SessionID: r.SessionID, ParentID: r.ParentID,
		TS: r.TS, TSPrecision: r.TSPrecision, Role: r.Role, ContentType: r.ContentType, ChunkIndex: c.Index,
		Title: r.Title, Text: r.Text, TokenCount: int32(n), Model: c.Model, Dim: int32(len(c.Embedding)),
		Embedding: c.Embedding, AgentID: ag.ID, AgentType: ag.Type, Sidechain: ag.Sidechain,
		Cwd: r.Cwd, GitBranch: r.GitBranch, Project: r.Project, User: r.User, Machine: r.Machine,
		Completeness: r.Completeness, IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
		Tool: chunkTool(r),
	}
	if index != nil {
		index.vecs.AddMeta(rowMeta(&row))
	}
	return row
}

// rowMeta is what a chunk's sidecar holds of its row for search.
func rowMeta(row *layout.ChunkRow) searchindex.RowMeta {
	return searchindex.RowMeta{ID: row.ID, ParentID: row.ParentID, ContentType: row.ContentType,
		Platform: row.Platform, SessionID: row.SessionID, AgentID: row.AgentID, Project: row.Project, User: row.User,
		Machine: row.Machine, Tool: row.Tool, ChunkIndex: row.ChunkIndex, Text: row.Text}
}

// chunkTool is the name of the tool a chunk is of (pos-embed records it as
// the chunk's one tool).
func chunkTool(r *schema.Record) string {
	if len(r.Tools) == 0 {
		return ""
	}
	return r.Tools[0].Name
}

// postingsFileRows is the most rows of a postings file: a chunks file is
// finished when its postings reach it, which bounds the memory they take.
const postingsFileRows = 4 << 20

// postingsFile collects the postings of one chunks part file; they are
// sorted and written when the chunks file is finished, and published with
// it (first, so a chunk in the lake always has its postings).
type postingsFile struct {
	layout.PostingsFile
	counts map[string]int32
	terms  []string
}

func newPostingsFile(lake string, p *partition, partName string) *postingsFile {
	dir := layout.Dir(lake, layout.TablePostings, p.Platform, p.Date)
	path := filepath.Join(dir, partName)
	return &postingsFile{PostingsFile: layout.PostingsFile{Tmp: path + ".tmp", Path: path}, counts: map[string]int32{}}
}

// add indexes a chunk's text and returns its length in terms.
func (pf *postingsFile) add(key int64, text string) int {
	pf.terms = append(pf.terms[:0], lexical.Terms(text)...)
	clear(pf.counts)
	for _, t := range pf.terms {
		pf.counts[t]++
	}
	dl := int32(len(pf.terms))
	for t, n := range pf.counts {
		pf.Add(searchindex.PostingRow{Term: t, ChunkKey: key, TF: n, DL: dl})
	}
	return len(pf.terms)
}

func (pf *postingsFile) full() bool { return len(pf.Rows) >= postingsFileRows }

// ErrMixedEmbeddings is wrapped by the error a load returns for chunks of
// another model or dimension than the lake's.
var ErrMixedEmbeddings = errors.New("mixed embedding models")

// MixedEmbeddingsError says which model a lake holds and which came.
type MixedEmbeddingsError struct {
	Lake []layout.EmbeddingModel
	Got  layout.EmbeddingModel
}

func (e *MixedEmbeddingsError) Error() string {
	have := e.Lake[len(e.Lake)-1]
	return fmt.Sprintf("chunks embedded with %s (%d-d), but the lake's vectors are %s (%d-d): one lake holds one embedding model, "+
		"as vectors of different models cannot be compared; embed with the lake's model, load into another lake, "+
		"or pass --allow-mixed-embeddings (searches then use the latest model's chunks)",
		e.Got.Model, e.Got.Dim, have.Model, have.Dim)
}

func (e *MixedEmbeddingsError) Unwrap() error { return ErrMixedEmbeddings }

// embeddingsInData reads the models of the chunks in a lake's files (for a
// lake whose state file is missing or out of date).
func (l *Loader) embeddingsInData() ([]layout.EmbeddingModel, error) {
	files, _ := filepath.Glob(filepath.Join(fsglob.Quote(layout.TableDir(l.opt.Lake, layout.TableChunks)), "*", "*", "*.parquet"))
	if len(files) == 0 {
		return nil, nil
	}
	db, err := l.duck()
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(l.ctx, `SELECT model, dim, min(ingested_at) AS since FROM read_parquet(`+layout.LiteralPaths+`, union_by_name = true)
WHERE model IS NOT NULL AND model <> '' GROUP BY ALL ORDER BY since`, files)
	if err != nil {
		return nil, fmt.Errorf("reading the lake's embedding models: %w", err)
	}
	defer rows.Close()
	var out []layout.EmbeddingModel
	for rows.Next() {
		var m layout.EmbeddingModel
		if err := rows.Scan(&m.Model, &m.Dim, &m.Since); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// checkEmbedding admits a chunk's model and dimension: the lake's, or the
// first the lake sees, or another when mixing is allowed.
func (l *Loader) checkEmbedding(rec *schema.Record) error {
	if rec.Chunk == nil || rec.Chunk.Model == "" {
		return nil
	}
	got := layout.EmbeddingModel{Model: rec.Chunk.Model, Dim: len(rec.Chunk.Embedding), Provider: rec.Chunk.Provider, BaseURL: rec.Chunk.BaseURL}
	if l.lastModel.SameEndpoint(got) {
		return nil
	}
	l.vmu.Lock()
	defer l.vmu.Unlock()
	if l.models == nil {
		ms, err := layout.Embeddings(l.opt.Lake)
		if err == nil && len(ms) == 0 {
			ms, err = l.embeddingsInData()
		}
		if err != nil {
			return err
		}
		l.models = ms
		if l.models == nil {
			l.models = []layout.EmbeddingModel{}
		}
	}
	for i, m := range l.models {
		if m.Model == got.Model && m.Dim == got.Dim {
			l.lastModel = got
			if got.Provider == "" || m.SameEndpoint(got) {
				return nil
			}
			// The model's chunks now come from another endpoint (or an
			// older lake did not record one): queries follow.
			l.models[i].Provider, l.models[i].BaseURL = got.Provider, got.BaseURL
			return layout.WriteEmbeddings(l.opt.Lake, l.models)
		}
	}
	if len(l.models) > 0 && !l.opt.AllowMixedEmbeddings {
		// The state may name a model whose load never completed: the data
		// decides.
		data, err := l.embeddingsInData()
		if err != nil {
			return err
		}
		if len(data) > 0 {
			return &MixedEmbeddingsError{Lake: data, Got: got}
		}
		l.models = l.models[:0]
	}
	got.Since = l.opt.Now().UTC()
	l.models = append(l.models, got)
	l.lastModel = got
	// Recorded before a file of the model is in place.
	return layout.WriteEmbeddings(l.opt.Lake, l.models)
}

// updateSearchIndex brings the lake's search index up to date with its
// chunks files (searchindex.Update); run names the new segments.
func updateSearchIndex(ls *layout.Listing, lake, run string) error {
	parts, err := ls.TablePartitions(lake, layout.TableChunks)
	if err != nil {
		return err
	}
	var files []string
	for _, p := range parts {
		files, err = ls.AppendParquetFiles(files, layout.Dir(lake, layout.TableChunks, p.Platform, p.Date))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return searchindex.Update(lake, run, files)
}

// chunkIndex is what a chunks part file carries beside it: its postings
// and its vector sidecar, published before it.
type chunkIndex struct {
	post *postingsFile
	vecs *searchindex.SidecarWriter
}

func newChunkIndex(lake string, p *partition, partName string) *chunkIndex {
	return &chunkIndex{
		post: newPostingsFile(lake, p, partName),
		vecs: searchindex.NewSidecarWriter(filepath.Join(p.dir, partName)),
	}
}

func (x *chunkIndex) full() bool { return x.post.full() }

func (x *chunkIndex) write() error {
	x.vecs.SetPostings(x.post.Sorted())
	if err := x.post.Write(); err != nil {
		return err
	}
	if err := x.vecs.Write(); err != nil {
		os.Remove(x.post.Tmp)
		return err
	}
	return nil
}

func (x *chunkIndex) tmps() []string { return []string{x.post.Tmp, x.vecs.Tmp()} }

// publish renames the postings and the sidecar into place.
func (x *chunkIndex) publish() (int, error) {
	for i, f := range [][2]string{{x.post.Tmp, x.post.Path}, {x.vecs.Tmp(), x.vecs.Path()}} {
		if err := os.Rename(f[0], f[1]); err != nil {
			return i, fmt.Errorf("publishing %s: %w", f[1], err)
		}
	}
	return 2, nil
}

func (x *chunkIndex) abort() {
	os.Remove(x.post.Tmp)
	os.Remove(x.vecs.Tmp())
}
