package query

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/load/searchrows"
	"github.com/pos-lake/pos/schema"
)

// What describing hits reads besides their chunks — the sessions' titles,
// the exchanges a report, a summary or a tool's chunk belongs to, the
// exchanges' prompts, which exchanges had a tool fail — is read in Go: from
// the session cache's two files, the exchanges files of the hits'
// partitions and the chunks files' sidecars. A search then opens no DuckDB
// database, which on a small lake costs more than the rest of the search.
// DuckDB answers what these cannot: a lake whose exchanges have versions,
// a session cache that cannot be brought up to date, chunks files of an
// older build without metadata in their sidecars.

// sessionTitle is the sessions view's choice of a session's title and
// project, made from its rollup rows.
type sessionTitle struct{ title, project string }

// titlesInGo computes the titles of the sessions in want (keys platform +
// "\x00" + session_id) from the session cache's rollup rows, as
// sessionTitles's SQL does: the latest title the user gave, else the
// platform's, else the last summary label, else the first prompt's; the
// project of the earliest row that has one.
func titlesInGo(rows []searchrows.SessionTitleRow, want map[string]bool) map[string]sessionTitle {
	type agg struct {
		rows []*searchrows.SessionTitleRow
	}
	by := map[string]*agg{}
	for i := range rows {
		r := &rows[i]
		k := r.Platform + "\x00" + r.SessionID
		if !want[k] {
			continue
		}
		a := by[k]
		if a == nil {
			a = &agg{}
			by[k] = a
		}
		a.rows = append(a.rows, r)
	}
	start := func(r *searchrows.SessionTitleRow) time.Time {
		if !r.FirstTS.IsZero() {
			return r.FirstTS
		}
		return r.TS
	}
	out := map[string]sessionTitle{}
	for k, a := range by {
		// arg_max(title, ingested_at) FILTER (title_source = src): rows
		// with a NULL title or time do not count.
		latest := func(src string) string {
			var best *searchrows.SessionTitleRow
			for _, r := range a.rows {
				if r.TitleSource == src && r.Title != "" && !r.IngestedAt.IsZero() && (best == nil || r.IngestedAt.After(best.IngestedAt)) {
					best = r
				}
			}
			if best == nil {
				return ""
			}
			return best.Title
		}
		// arg_min(x, coalesce(first_ts, ts)) over rows where x is set.
		earliest := func(x func(r *searchrows.SessionTitleRow) string) string {
			var best *searchrows.SessionTitleRow
			for _, r := range a.rows {
				if x(r) != "" && !start(r).IsZero() && (best == nil || start(r).Before(start(best))) {
					best = r
				}
			}
			if best == nil {
				return ""
			}
			return x(best)
		}
		// flatten(list(labels ORDER BY ingested_at))[-1]: NULL times last.
		label := func() string {
			ordered := slices.Clone(a.rows)
			slices.SortStableFunc(ordered, func(x, y *searchrows.SessionTitleRow) int {
				return cmp.Or(cmp.Compare(boolInt(x.IngestedAt.IsZero()), boolInt(y.IngestedAt.IsZero())), x.IngestedAt.Compare(y.IngestedAt))
			})
			for i := len(ordered) - 1; i >= 0; i-- {
				if ls := ordered[i].Labels; len(ls) > 0 {
					return ls[len(ls)-1]
				}
			}
			return ""
		}
		t := cmp.Or(latest("user"), latest("platform"), label(),
			earliest(func(r *searchrows.SessionTitleRow) string {
				if r.TitleSource != "prompt" {
					return ""
				}
				return r.Title
			}))
		out[k] = sessionTitle{t, earliest(func(r *searchrows.SessionTitleRow) string { return r.Project })}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sessionTitlesInGo fills in the hits' titles from the session cache's
// rollup file; ok is false when there is no current one to read.
func (d *DB) sessionTitlesInGo(ctx context.Context, hits []SearchHit, want map[string]bool) (bool, error) {
	if d.describeSQL {
		return false, nil
	}
	_, meta, ok := d.sessionCacheFiles(ctx)
	if !ok {
		return false, nil
	}
	titles, err := d.memo.titles(meta, want, func(missing map[string]bool) (map[string]sessionTitle, error) {
		rows, err := searchrows.ReadSessionTitleRows(meta, missing)
		if err != nil {
			return nil, err
		}
		return titlesInGo(rows, missing), nil
	})
	if err != nil {
		return false, nil // replaced meanwhile: the SQL answers
	}
	for i := range hits {
		if r, ok := titles[hits[i].Platform+"\x00"+hits[i].SessionID]; ok {
			hits[i].Title = r.title
			if hits[i].Project == "" {
				hits[i].Project = r.project
			}
		}
	}
	return true, nil
}

// exchangePartitionsInGo lists the partitions the sessions have exchanges
// in, from the session cache's parts file; ok is false without a current
// one.
func (d *DB) exchangePartitionsInGo(ctx context.Context, refs []SessionRef) ([]layout.Partition, bool) {
	if d.describeSQL {
		return nil, false
	}
	parts, _, ok := d.sessionCacheFiles(ctx)
	if !ok {
		return nil, false
	}
	rows, err := d.memo.partRefs(parts)
	if err != nil {
		return nil, false
	}
	want := map[string]bool{}
	for _, r := range refs {
		want[r.Platform+"\x00"+r.SessionID] = true
	}
	var out []layout.Partition
	for _, r := range rows {
		if r.ExchangeCount == nil || !want[r.Platform+"\x00"+r.SessionID] {
			continue
		}
		p := layout.Partition{Platform: r.Platform, Date: time.Unix(int64(r.Date)*86400, 0).UTC().Format(time.DateOnly)}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, true
}

// exchangesInGo reads the exchanges of the sessions in want from the
// exchanges files of parts, in the order of ts, then id (no time last),
// with the prompts of the ids prompt names; ok is false when the table
// has versions of its rows, which the view chooses among.
func (d *DB) exchangesInGo(parts []layout.Partition, want map[string]bool, prompt func(id string) bool) ([]searchrows.ExchangeHead, bool, error) {
	if d.describeSQL || layout.Versioned(d.lake)[layout.TableExchanges] {
		return nil, false, nil
	}
	rows, err := searchrows.ReadExchangeRows(d.lake, parts, want, prompt)
	if err != nil {
		return nil, false, err
	}
	slices.SortStableFunc(rows, func(a, b searchrows.ExchangeHead) int {
		return cmp.Or(cmp.Compare(boolInt(a.TS.IsZero()), boolInt(b.TS.IsZero())), a.TS.Compare(b.TS), cmp.Compare(a.ID, b.ID))
	})
	return rows, true, nil
}

// failedInGo tells which of ids are the parent of a tool_error chunk in
// the chunks files, from their sidecars' metadata; ok is false when a
// file's sidecar has none (an older build's).
func (d *DB) failedInGo(ctx context.Context, files []string, ids map[string]bool) (map[string]bool, bool, error) {
	if d.describeSQL {
		return nil, false, nil
	}
	ix := d.searchIndex()
	noMeta := make([]bool, len(files))
	failed, err := collectFiles(ctx, files, func(i int, path string, emit func(string)) error {
		err := ix.ReadRowMeta(path, nil, false, func(_ int64, _ time.Time, m searchindex.RowMeta) {
			if m.ContentType == schema.ContentToolError && ids[m.ParentID] {
				emit(m.ParentID)
			}
		})
		if noRowMeta(err) {
			noMeta[i] = true
			return nil
		}
		return err
	})
	if err != nil || slices.Contains(noMeta, true) {
		return nil, false, err
	}
	out := map[string]bool{}
	for _, id := range failed {
		out[id] = true
	}
	return out, true, nil
}

// describeMemo keeps what describing hits read from the session cache's
// files, for a process that searches again and again (pos-mcp): the titles
// of the sessions asked for, and the sessions' partitions, while the file
// they came from stays the same (its name, size and time: the cache writes
// new files when the lake changes).
type describeMemo struct {
	mu                sync.Mutex
	titlesOf, partsOf string
	byKey             map[string]keptTitle
	parts             []searchrows.SessionPartRef
}

// keptTitle is a session's title, or that the file has none (ok false).
type keptTitle struct {
	t  sessionTitle
	ok bool
}

// fileKey names a file's version; "" when it cannot be read.
func fileKey(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
}

// titles returns the titles of the sessions in want from meta: those kept,
// and those read reads (the sessions it is given).
func (m *describeMemo) titles(meta string, want map[string]bool, read func(map[string]bool) (map[string]sessionTitle, error)) (map[string]sessionTitle, error) {
	key := fileKey(meta)
	out := map[string]sessionTitle{}
	missing := map[string]bool{}
	m.mu.Lock()
	if m.titlesOf != key || key == "" {
		m.titlesOf, m.byKey = key, map[string]keptTitle{}
	}
	for k := range want {
		if t, ok := m.byKey[k]; !ok {
			missing[k] = true
		} else if t.ok {
			out[k] = t.t
		}
	}
	m.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	got, err := read(missing)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range missing {
		t, ok := got[k]
		if ok {
			out[k] = t
		}
		if m.titlesOf == key && key != "" {
			m.byKey[k] = keptTitle{t, ok} // none is kept too: the file has no rows of it
		}
	}
	return out, nil
}

// partRefs returns the rows of the session cache's parts file.
func (m *describeMemo) partRefs(path string) ([]searchrows.SessionPartRef, error) {
	key := fileKey(path)
	m.mu.Lock()
	if key != "" && m.partsOf == key {
		defer m.mu.Unlock()
		return m.parts, nil
	}
	m.mu.Unlock()
	rows, err := searchrows.ReadSessionPartRefs(path)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.partsOf, m.parts = key, rows
	m.mu.Unlock()
	return rows, nil
}
