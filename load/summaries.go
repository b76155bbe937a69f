package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/internal/durable"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
)

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
func WriteSummaries(ctx context.Context, lake string, rows []layout.SummaryRow, now time.Time) error {
	if lake == "" {
		return errors.New("no lake directory")
	}
	if now.IsZero() {
		now = time.Now()
	}
	byPart := map[string][]layout.SummaryRow{}
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
		dir := layout.Dir(lake, layout.TableSummaries, layout.PartValue(r.Platform), layout.DateOf(r.Date))
		if _, ok := byPart[dir]; !ok {
			order = append(order, dir)
		}
		byPart[dir] = append(byPart[dir], r)
	}
	first := !layout.HasParquet(layout.TableDir(lake, layout.TableSummaries))
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
		if _, err := os.Stat(filepath.Join(lake, catalog.CatalogFile)); err == nil {
			catalog.WriteCatalog(ctx, lake)
		}
	}
	return nil
}

func writeSummaryFile(path string, rows []layout.SummaryRow) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp := layout.TempName(path)
	err := layout.WriteParquetFile(tmp, rows)
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
