package query

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// describeHits fills in what the results show: the chunk's text (for the
// snippet), the session's title and project, and the exchange a report or
// summary belongs to.
func (d *DB) describeHits(ctx context.Context, hits []SearchHit, terms []string) error {
	if len(hits) == 0 {
		return nil
	}
	// The chunks, read from their sidecars, else from their files only.
	byKey := map[int64][]int{}
	for i, h := range hits {
		byKey[h.chunkKey] = append(byKey[h.chunkKey], i)
	}
	fill := func(key int64, text string, idx int64, project, user, machine, tool string) {
		for _, i := range byKey[key] {
			h := &hits[i]
			h.text, h.ChunkIndex, h.Project, h.User, h.Machine = text, idx, project, user, machine
			h.Snippet = Snippet(text, terms, snippetWords)
			if embed.IsToolType(h.ContentType) {
				h.Tool, h.Lines = tool, MatchingLines(text, terms, matchingLines)
			}
		}
	}
	found, err := d.sidecarTexts(ctx, hits, fill)
	if err != nil {
		return err
	}
	var files []string
	var keys []any
	for _, h := range hits {
		if found[h.chunkKey] {
			continue
		}
		if !slices.Contains(keys, any(h.chunkKey)) {
			keys = append(keys, h.chunkKey)
		}
		if !slices.Contains(files, h.file) {
			files = append(files, h.file)
		}
	}
	if len(keys) == 0 {
		if err := d.sessionTitles(ctx, hits); err != nil {
			return err
		}
		return d.resolveExchanges(ctx, hits)
	}
	// With the lake's schema file when some files are older than the tool
	// column.
	src, list, err := catalog.FilesSource(d.lake, layout.TableChunks, files)
	if err != nil {
		return err
	}
	q := `SELECT chunk_key, text, chunk_index, coalesce(project, ''), coalesce(user, ''), coalesce(machine, ''), coalesce(tool, '')
FROM ` + src + `
WHERE chunk_key IN (` + placeholders(len(keys)) + `)`
	rows, err := d.db.QueryContext(ctx, q, append([]any{list}, keys...)...)
	if err != nil {
		return sqlErr(err)
	}
	for rows.Next() {
		var key, idx int64
		var text, project, user, machine, tool string
		if err := rows.Scan(&key, &text, &idx, &project, &user, &machine, &tool); err != nil {
			rows.Close()
			return sqlErr(err)
		}
		fill(key, text, idx, project, user, machine, tool)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return sqlErr(err)
	}
	if err := d.sessionTitles(ctx, hits); err != nil {
		return err
	}
	return d.resolveExchanges(ctx, hits)
}

// sessionTitles fills in the sessions' titles.
func (d *DB) sessionTitles(ctx context.Context, hits []SearchHit) error {
	var args []any
	seen := map[string]bool{}
	for _, h := range hits {
		k := h.Platform + "\x00" + h.SessionID
		if h.SessionID != "" && !seen[k] {
			seen[k] = true
			args = append(args, h.SessionID)
		}
	}
	if len(args) == 0 {
		return nil
	}
	want := map[string]bool{}
	for k := range seen {
		want[k] = true
	}
	if ok, err := d.sessionTitlesInGo(ctx, hits, want); ok || err != nil {
		return err
	}
	// The sessions view's choice of title (the user's, else the
	// platform's, else the latest summary label, else the first prompt) over these sessions' rollups
	// only: the view itself recounts every message of the lake. The rollups
	// are read from the session cache's copy, one file, when it can.
	rows, err := d.queryCached(ctx, func(view bool) (string, error) { return d.sessionRowsFrom(ctx, view) }, "session_rows",
		func(from string) (string, []any) {
			return `SELECT platform, session_id,
  coalesce(arg_max(title, ingested_at) FILTER (WHERE title_source = 'user'),
    arg_max(title, ingested_at) FILTER (WHERE title_source = 'platform'),
    flatten(list(labels ORDER BY ingested_at))[-1],
    arg_min(title, coalesce(first_ts, ts)) FILTER (WHERE title_source = 'prompt'), '') AS title,
  coalesce(arg_min(project, coalesce(first_ts, ts)), '') AS project
FROM ` + from + ` WHERE session_id IN (` + placeholders(len(args)) + `)
GROUP BY ALL`, args
		})
	if err != nil {
		return sqlErr(err)
	}
	defer rows.Close()
	type ref struct{ title, project string }
	titles := map[string]ref{}
	for rows.Next() {
		var p, s, t, proj string
		if err := rows.Scan(&p, &s, &t, &proj); err != nil {
			return sqlErr(err)
		}
		titles[p+"\x00"+s] = ref{t, proj}
	}
	for i := range hits {
		if r, ok := titles[hits[i].Platform+"\x00"+hits[i].SessionID]; ok {
			hits[i].Title = r.title
			if hits[i].Project == "" {
				hits[i].Project = r.project
			}
		}
	}
	return sqlErr(rows.Err())
}

// resolveExchanges finds the exchange a subagent report or a compaction
// summary belongs to: the last exchange of the report's subagent thread,
// the exchange of the summary's thread under way when it was written. One
// query reads the exchanges of the sessions concerned.
func (d *DB) resolveExchanges(ctx context.Context, hits []SearchHit) error {
	var todo []int
	var args []any
	var refs []SessionRef
	for i, h := range hits {
		switch {
		case h.ExchangeID != "" || h.SessionID == "":
		case h.ContentType == schema.ContentSubagentSummary && h.AgentID != "",
			(h.ContentType == schema.ContentCompactSummary || h.ContentType == schema.ContentSummaryLabel || embed.IsToolType(h.ContentType)) && !h.TS.IsZero():
			todo = append(todo, i)
			args = append(args, h.SessionID)
			refs = append(refs, SessionRef{Platform: h.Platform, SessionID: h.SessionID})
		}
	}
	if len(todo) == 0 {
		return nil
	}
	bySession := map[string][]exchangeRef{}
	read := false
	if parts, ok := d.exchangePartitionsInGo(ctx, refs); ok {
		want := map[string]bool{}
		for _, r := range refs {
			want[r.Platform+"\x00"+r.SessionID] = true
		}
		rows, ok, err := d.exchangesInGo(parts, want, nil)
		if err != nil {
			return err
		}
		for _, e := range rows {
			k := e.Platform + "\x00" + e.SessionID
			bySession[k] = append(bySession[k], exchangeRef{id: e.ID, thread: e.AgentID, ts: e.TS})
		}
		read = ok
	}
	if !read {
		var err error
		if bySession, err = d.exchangesSQL(ctx, refs, args); err != nil {
			return err
		}
	}
	for _, i := range todo {
		h := &hits[i]
		if embed.IsToolType(h.ContentType) && slices.ContainsFunc(bySession[h.Platform+"\x00"+h.SessionID], func(e exchangeRef) bool { return e.id == h.ParentID }) {
			h.ExchangeID = h.ParentID // linked by pos-embed
			continue
		}
		for _, e := range bySession[h.Platform+"\x00"+h.SessionID] { // in time order: the last match wins
			if e.thread != h.AgentID {
				continue
			}
			if h.ContentType == schema.ContentSubagentSummary || !e.ts.After(h.TS) {
				h.ExchangeID = e.id
			}
		}
	}
	return nil
}

// exchangeRef is an exchange as resolveExchanges reads it.
type exchangeRef struct {
	id, thread string
	ts         time.Time
}

// exchangesSQL reads the sessions' exchanges with DuckDB: from their
// partitions when the session cache knows them, else from the view.
func (d *DB) exchangesSQL(ctx context.Context, refs []SessionRef, args []any) (map[string][]exchangeRef, error) {
	// The sessions' exchange partitions only, when the session cache
	// knows them; else the view.
	src := "exchange_rows"
	if _, parts, ok := d.partitionsOf(ctx, refs); ok {
		s, err := catalog.PartitionSource(d.lake, "exchange_rows", parts)
		if err != nil {
			return nil, err
		}
		src = s
	} else if err := d.need(ctx, "exchange_rows"); err != nil {
		return nil, err
	}
	rows, err := d.db.QueryContext(ctx, `SELECT id, platform, session_id, coalesce(agent_id, ''), ts FROM `+src+`
WHERE session_id IN (`+placeholders(len(args))+`) ORDER BY ts, id`, args...)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	bySession := map[string][]exchangeRef{}
	for rows.Next() {
		var e exchangeRef
		var platform, session, agentID string
		var ts sql.NullTime
		if err := rows.Scan(&e.id, &platform, &session, &agentID, &ts); err != nil {
			return nil, sqlErr(err)
		}
		e.thread, e.ts = agentID, utc(ts)
		k := platform + "\x00" + session
		bySession[k] = append(bySession[k], e)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlErr(err)
	}
	return bySession, nil
}

// groupSessions ranks the sessions of the best units: a session scores its
// best unit's score, plus half its second's, a quarter its third's …, so a
// session that keeps coming back to a topic ranks above one that mentions
// it once, and a long tail of weak matches adds nearly nothing. It returns
// the first k sessions with the best units of each, at most keep, in rank
// order.
func groupSessions(units []SearchHit, k, keep int) ([]SessionHit, [][]SearchHit) {
	type group struct {
		s      SessionHit
		units  []SearchHit
		weight float64
	}
	by := map[string]*group{}
	var order []*group
	pool := units[:min(len(units), max(50, 5*k))]
	for _, h := range pool { // in score order
		key := h.Platform + "\x00" + h.SessionID
		g := by[key]
		if g == nil {
			g = &group{s: SessionHit{Platform: h.Platform, SessionID: h.SessionID, ContentType: h.ContentType}, weight: 1}
			by[key] = g
			order = append(order, g)
		}
		if len(g.units) < keep {
			g.units = append(g.units, h)
		}
		g.s.Score += g.weight * h.Score
		g.weight /= 2
		g.s.Hits++
		if !h.TS.IsZero() && (g.s.FirstTS.IsZero() || h.TS.Before(g.s.FirstTS)) {
			g.s.FirstTS = h.TS
		}
		if h.TS.After(g.s.LastTS) {
			g.s.LastTS = h.TS
		}
	}
	slices.SortStableFunc(order, func(a, b *group) int { return cmp.Compare(b.s.Score, a.s.Score) })
	order = order[:min(k, len(order))]
	sessions, best := make([]SessionHit, len(order)), make([][]SearchHit, len(order))
	for i, g := range order {
		sessions[i], best[i] = g.s, g.units
		sessions[i].Rank = i + 1
	}
	return sessions, best
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
