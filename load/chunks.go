package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/internal/fsglob"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// chunkRow makes a chunk's row, its postings and its vector's entry.
func chunkRow(r *schema.Record, hash string, index *chunkIndex) layout.ChunkRow {
	ag, c := agent(r), schema.Chunk{}
	if r.Chunk != nil {
		c = *r.Chunk
	}
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
		index.vecs.AddMeta(searchindex.RowMeta{ID: row.ID, ParentID: row.ParentID, ContentType: row.ContentType,
			Platform: row.Platform, SessionID: row.SessionID, AgentID: row.AgentID, Project: row.Project, User: row.User,
			Machine: row.Machine, Tool: row.Tool, ChunkIndex: row.ChunkIndex, Text: row.Text})
	}
	return row
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

// Embedding models: a lake holds the vectors of one model and dimension,
// recorded in <lake>/_state/embeddings.json when its first chunks are
// loaded; pos-load refuses chunks of another unless told to mix them, and
// pos-query embeds queries with it.
const embeddingsFile = "embeddings.json"

// EmbeddingModel is a model whose vectors a lake holds.
type EmbeddingModel struct {
	Model string `json:"model"`
	Dim   int    `json:"dim"`
	// Provider and BaseURL are how the latest chunks of the model were
	// embedded (the endpoint without credentials; no key is stored):
	// queries are embedded through the same endpoint.
	Provider string    `json:"provider,omitempty"`
	BaseURL  string    `json:"base_url,omitempty"`
	Since    time.Time `json:"since"` // when its first chunks were loaded
}

// ErrMixedEmbeddings is wrapped by the error a load returns for chunks of
// another model or dimension than the lake's.
var ErrMixedEmbeddings = errors.New("mixed embedding models")

// MixedEmbeddingsError says which model a lake holds and which came.
type MixedEmbeddingsError struct {
	Lake []EmbeddingModel
	Got  EmbeddingModel
}

func (e *MixedEmbeddingsError) Error() string {
	have := e.Lake[len(e.Lake)-1]
	return fmt.Sprintf("chunks embedded with %s (%d-d), but the lake's vectors are %s (%d-d): one lake holds one embedding model, "+
		"as vectors of different models cannot be compared; embed with the lake's model, load into another lake, "+
		"or pass --allow-mixed-embeddings (searches then use the latest model's chunks)",
		e.Got.Model, e.Got.Dim, have.Model, have.Dim)
}

func (e *MixedEmbeddingsError) Unwrap() error { return ErrMixedEmbeddings }

// Embeddings returns the embedding models of a lake, the latest last; none
// for a lake without chunks.
func Embeddings(lake string) ([]EmbeddingModel, error) {
	b, err := os.ReadFile(filepath.Join(lake, "_state", embeddingsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st struct {
		Models []EmbeddingModel `json:"models"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", embeddingsFile, err)
	}
	return st.Models, nil
}

func writeEmbeddings(lake string, ms []EmbeddingModel) error {
	b, _ := json.MarshalIndent(map[string]any{"models": ms}, "", " ")
	return atomicfile.Write(filepath.Join(lake, "_state", embeddingsFile), b)
}

// embeddingsInData reads the models of the chunks in a lake's files (for a
// lake whose state file is missing or out of date).
func (l *Loader) embeddingsInData() ([]EmbeddingModel, error) {
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
	var out []EmbeddingModel
	for rows.Next() {
		var m EmbeddingModel
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
	got := EmbeddingModel{Model: rec.Chunk.Model, Dim: len(rec.Chunk.Embedding), Provider: rec.Chunk.Provider, BaseURL: rec.Chunk.BaseURL}
	if l.lastModel.sameEndpoint(got) {
		return nil
	}
	l.vmu.Lock()
	defer l.vmu.Unlock()
	if l.models == nil {
		ms, err := Embeddings(l.opt.Lake)
		if err == nil && len(ms) == 0 {
			ms, err = l.embeddingsInData()
		}
		if err != nil {
			return err
		}
		l.models = ms
		if l.models == nil {
			l.models = []EmbeddingModel{}
		}
	}
	for i, m := range l.models {
		if m.Model == got.Model && m.Dim == got.Dim {
			l.lastModel = got
			if got.Provider == "" || m.sameEndpoint(got) {
				return nil
			}
			// The model's chunks now come from another endpoint (or an
			// older lake did not record one): queries follow.
			l.models[i].Provider, l.models[i].BaseURL = got.Provider, got.BaseURL
			return writeEmbeddings(l.opt.Lake, l.models)
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
	return writeEmbeddings(l.opt.Lake, l.models)
}

// sameEndpoint reports whether two chunks' models were embedded alike:
// one model and dimension, through one provider and endpoint.
func (m EmbeddingModel) sameEndpoint(o EmbeddingModel) bool {
	return m.Model == o.Model && m.Dim == o.Dim && m.Provider == o.Provider && m.BaseURL == o.BaseURL
}

// LakeEmbedding returns the model and dimension a lake's searches use: the
// latest model loaded, with the provider and endpoint it was embedded
// through when the lake recorded them. ok is false for a lake without
// vectors.
func LakeEmbedding(ctx context.Context, lake string) (EmbeddingModel, bool, error) {
	ms, err := Embeddings(lake)
	if err != nil || len(ms) == 0 {
		return EmbeddingModel{}, false, err
	}
	return ms[len(ms)-1], true, nil
}

// chunkViews defines the views over chunks and their postings:
//
//	chunks      the latest version of each chunk, with vector: its
//	            embedding as FLOAT[dim] for array_cosine_similarity (the
//	            lake's latest model's dimension; NULL for other chunks)
//	chunk_rows  every version, with the file it is in (filename); search
//	            scores these and keeps the latest version after
//	postings    the lexical index: term, chunk_key, tf, dl
//	session_rows every version of every session rollup, as loaded: search
//	            reads the titles of a few sessions from it without the
//	            sessions view's recount of all messages
func chunkViews(lake string, src map[string]string, versioned map[string]bool) []string {
	ms, _ := Embeddings(lake)
	vector := ""
	if len(ms) > 0 {
		d := ms[len(ms)-1].Dim
		vector = fmt.Sprintf(", CASE WHEN len(embedding) = %d THEN CAST(embedding AS FLOAT[%d]) END AS vector", d, d)
	}
	q := "SELECT *" + vector + " FROM " + src[layout.TableChunks]
	if versioned[layout.TableChunks] {
		q += latest
	}
	return []string{
		"CREATE OR REPLACE VIEW chunks AS " + q,
		"CREATE OR REPLACE VIEW chunk_rows AS SELECT *, filename FROM " + src[layout.TableChunks],
		"CREATE OR REPLACE VIEW postings AS SELECT * FROM " + src[layout.TablePostings],
		"CREATE OR REPLACE VIEW session_rows AS SELECT * FROM " + src[layout.TableSessions],
	}
}

// FilesSource returns a read_parquet call over a list of a table's files,
// bound as its one parameter, with the views' options: hive partitioning,
// and, when the table's files were written with other schemas (an older
// build's), union by name with a zero-row file of this build's schema,
// which FilesSource prepends to the list it returns.
func FilesSource(lake, table string, files []string) (string, []string, error) {
	if fps := layout.ReadSchemas(lake)[table]; len(fps) == 1 && fps[0] == layout.SchemaFingerprint(table) {
		return "read_parquet(" + layout.LiteralPaths + ", " + hiveOpts + ")", files, nil
	}
	f, err := schemaFile(lake, table, true)
	if err != nil {
		return "", nil, err
	}
	return "read_parquet(" + layout.LiteralPaths + ", union_by_name = true, " + hiveOpts + ")", append([]string{f}, files...), nil
}

// updateSearchIndex brings the lake's search index up to date with its
// chunks files (searchindex.Update); run names the new segments.
func updateSearchIndex(lake, run string) error {
	parts, err := layout.TablePartitions(lake, layout.TableChunks)
	if err != nil {
		return err
	}
	var files []string
	for _, p := range parts {
		files, err = layout.AppendParquetFiles(files, layout.Dir(lake, layout.TableChunks, p.Platform, p.Date))
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
