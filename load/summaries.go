package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/internal/durable"
	"github.com/pos-lake/pos/schema"
)

// The summaries table holds the session summaries pos-query summarize and
// pos-mcp made: one row per summary of one state of a session, keyed by
// platform, session, the session's last message id, strategy, model and
// the parameters that shape the text. A reader reuses a row while the
// session's last message is the same; once the session grows, its last
// message changes and a new summary is made and added beside the old one.
//
// Rows are written by WriteSummaries, not by pos-load: they are derived
// from the lake, not read from an agent's history.
const TableSummaries = "summaries"

// SummaryRow is a row of indexed/summaries.
type SummaryRow struct {
	ID            string    `parquet:"id"` // SummaryID of the key
	Platform      string    `parquet:"platform,dict"`
	SessionID     string    `parquet:"session_id,dict"`
	LastMessageID string    `parquet:"last_message_id"`
	LastTS        time.Time `parquet:"last_ts,optional,timestamp(millisecond)"`
	MessageCount  int64     `parquet:"message_count"`
	ExchangeCount int64     `parquet:"exchange_count"`
	Strategy      string    `parquet:"strategy,dict"`
	Model         string    `parquet:"model,optional,dict"` // the LLM's; empty for extractive
	Params        string    `parquet:"params,optional"`     // e.g. "v1 chunk=6000 words=300"
	Text          string    `parquet:"text"`
	Levels        string    `parquet:"levels,optional"` // JSON text: every level of a hierarchical summary
	Notes         []string  `parquet:"notes,list"`
	LLMCalls      int64     `parquet:"llm_calls"`
	InputTokens   int64     `parquet:"input_tokens"` // the LLM's, for this summary
	OutputTokens  int64     `parquet:"output_tokens"`
	DurationMS    int64     `parquet:"duration_ms"`
	IngestedAt    time.Time `parquet:"ingested_at,timestamp(millisecond)"` // when it was made
	ContentHash   string    `parquet:"content_hash"`
	// Date names the row's date partition: the session's first day.
	Date time.Time `parquet:"-"`
}

// SummaryID is the id of the summary of a session's state made with a
// strategy, model and parameters.
func SummaryID(platform, sessionID, lastMessageID, strategy, model, params string) string {
	key := strings.Join([]string{platform, sessionID, lastMessageID, strategy, model, params}, "\x00")
	return schema.ContentHash([]byte(key))
}

// WriteSummaries adds summary rows to <lake>/indexed/summaries, one file
// per partition, the way pos-load writes: under a temporary name, synced,
// then renamed into place, private (0600 files, 0700 directories). Rows
// need Platform, SessionID and Text; ID, IngestedAt and ContentHash are
// filled in when empty.
//
// When these are the table's first files, the views of LAKE/pos.duckdb
// are refreshed (best effort), so that ad-hoc SQL sees them.
//
// It takes no lock. Its files have names of their own and are never
// rewritten, and views keep the newest row of an id, so it cannot clash
// with pos-load or with another WriteSummaries. (A pos-load that starts
// during the write may remove the temporary file as a leftover of a dead
// run: the rename then fails and the summary is simply not stored.)
func WriteSummaries(ctx context.Context, lake string, rows []SummaryRow, now time.Time) error {
	if lake == "" {
		return errors.New("no lake directory")
	}
	if now.IsZero() {
		now = time.Now()
	}
	byPart := map[string][]SummaryRow{}
	var order []string
	for _, r := range rows {
		if r.Platform == "" || r.SessionID == "" {
			return fmt.Errorf("summary row without platform or session")
		}
		if r.ID == "" {
			r.ID = SummaryID(r.Platform, r.SessionID, r.LastMessageID, r.Strategy, r.Model, r.Params)
		}
		if r.IngestedAt.IsZero() {
			r.IngestedAt = now
		}
		if r.ContentHash == "" {
			r.ContentHash = schema.ContentHash([]byte(r.Text + "\x00" + r.Levels))
		}
		dir := Dir(lake, TableSummaries, partValue(r.Platform), dateOf(r.Date))
		if _, ok := byPart[dir]; !ok {
			order = append(order, dir)
		}
		byPart[dir] = append(byPart[dir], r)
	}
	first := !hasParquet(TableDir(lake, TableSummaries))
	runID := newRunID(now)
	for i, dir := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := fmt.Sprintf("part-%s-s%04d.parquet", runID, i+1)
		if err := writeSummaryFile(filepath.Join(dir, name), byPart[dir]); err != nil {
			return err
		}
	}
	if first {
		// The catalog's view was defined over an empty table: define it
		// again, so duckdb LAKE/pos.duckdb sees summaries before the next
		// pos-load. Best effort: the database may be open elsewhere.
		if _, err := os.Stat(filepath.Join(lake, CatalogFile)); err == nil {
			WriteCatalog(ctx, lake)
		}
	}
	return nil
}

func writeSummaryFile(path string, rows []SummaryRow) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp := TempName(path)
	err := writeParquetFile(tmp, rows)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	durable.SyncDirs(dir, map[string]bool{dir: true}) // the rename's durability: best effort
	return nil
}

// summaryViews defines the summaries view: the newest row of each id, with
// the partition columns platform and date.
func summaryViews(src map[string]string) []string {
	return []string{"CREATE OR REPLACE VIEW summaries AS SELECT * FROM " + src[TableSummaries] + latest}
}

// SummariesViewSQL returns the statement that (re)defines the summaries
// view of a lake. A reader that wrote the table's first file runs it again:
// a view defined over an empty table reads only its zero-row schema file.
func SummariesViewSQL(lake string) (string, error) {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return "", err
	}
	src, err := source(lakeSQL{abs: lake}, TableSummaries, readSchemas(lake))
	if err != nil {
		return "", err
	}
	return summaryViews(map[string]string{TableSummaries: src})[0], nil
}
