package cursor

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// kv reads the cursorDiskKV composers and their bubbles, then the bubbles
// of composers that have no composerData row.
func (dr *dbRun) kv(ctx context.Context, db *sql.DB) error {
	stmt, err := db.PrepareContext(ctx, `SELECT key, value FROM cursorDiskKV WHERE key = ?`)
	if err != nil {
		return &extract.ReadError{Path: dr.d.path, Err: err}
	}
	defer stmt.Close()
	var ids []string
	if err := kvKeys(ctx, db, prefixComposer, func(k string) error {
		ids = append(ids, strings.TrimPrefix(k, prefixComposer))
		return nil
	}); err != nil {
		return &extract.ReadError{Path: dr.d.path, Err: err}
	}
	read := map[string]bool{}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		row, err := kvGet(ctx, stmt, prefixComposer+id)
		if err != nil {
			return &extract.ReadError{Path: dr.d.path, Err: err}
		}
		if row == nil {
			continue
		}
		ok, err := dr.kvComposer(ctx, db, stmt, row, id)
		if err != nil {
			return err
		}
		read[id] = ok
	}
	// Bubbles whose composer has no (readable) composerData row: raw only,
	// since nothing says their order.
	var orphans []string
	if err := kvKeys(ctx, db, prefixBubble, func(k string) error {
		if c, _, ok := splitBubbleKey(k); !ok || !read[c] {
			orphans = append(orphans, k)
		}
		return nil
	}); err != nil {
		return &extract.ReadError{Path: dr.d.path, Err: err}
	}
	return dr.orphans(ctx, stmt, orphans)
}

// orphans emits bubble rows that are in no conversation order as raw
// records.
func (dr *dbRun) orphans(ctx context.Context, stmt *sql.Stmt, keys []string) error {
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		row, err := kvGet(ctx, stmt, k)
		if err != nil {
			return &extract.ReadError{Path: dr.d.path, Err: err}
		}
		if row == nil {
			continue
		}
		dr.countRow()
		raw, isJSON := row.raw()
		if !isJSON && !row.null {
			if err := dr.badValue(row); err != nil {
				return err
			}
		}
		c, _, _ := splitBubbleKey(k)
		ts, prec := time.Time{}, ""
		var b bubble
		if isJSON && decode(raw, &b) == nil {
			if t, ok := b.CreatedAt.Time(); ok {
				ts, prec = t, schema.PrecisionExact
			} else if b.TimingInfo != nil {
				if t, ok := b.TimingInfo.ClientRpcSendTime.Time(); ok {
					ts, prec = t, schema.PrecisionExact
				}
			}
		}
		if err := dr.rawRecord(row, raw, c, "bubbleId", ts, prec); err != nil {
			return err
		}
	}
	return nil
}

// kvComposer reads a composerData row, its conversation and its other
// bubbles. It returns false when the row is not a composer, so its bubbles
// are read as orphans.
func (dr *dbRun) kvComposer(ctx context.Context, db *sql.DB, stmt *sql.Stmt, row *row, id string) (bool, error) {
	dr.countRow()
	raw, isJSON := row.raw()
	if !isJSON && !row.null {
		if err := dr.badValue(row); err != nil {
			return false, err
		}
	}
	var c composer
	ok := isJSON && decode(raw, &c) == nil
	if c.ComposerID == "" {
		c.ComposerID = id
	}
	project := dr.composerProject(&c)
	ts, prec := c.CreatedAt.t, schema.PrecisionExact
	if ts.IsZero() {
		ts, prec = c.LastUpdatedAt.t, schema.PrecisionDerived
	}
	rec := dr.newRec(schema.KindRaw, row.sourceKey())
	rec.SessionID, rec.NativeType, rec.NativeID = id, "composerData", id
	rec.TS, rec.TSPrecision = ts, prec
	if ts.IsZero() {
		rec.TS, rec.TSPrecision = dr.d.mtime, schema.PrecisionFileMtime
	}
	rec.Project = project
	rec.Completeness = schema.CompleteFull
	if row.null {
		rec.Completeness = schema.CompleteMetadata
	}
	rec.Raw = raw
	rec.ID = schema.RawID(rec)
	if err := dr.out(rec); err != nil {
		return false, err
	}
	if !ok {
		return false, nil
	}
	return true, dr.composer(ctx, db, stmt, &c, row.sourceKey(), layoutKV)
}

// composerProject is the folder a composer belongs to: its workspace's
// (from the head a workspace database keeps), the database's own for an
// inline composer, else what the composer records.
func (dr *dbRun) composerProject(c *composer) string {
	if h := dr.idx.heads[c.ComposerID]; h != nil && h.project != "" {
		return h.project
	}
	if dr.project != "" {
		return dr.project
	}
	if w := c.WorkspaceIdentifier; w != nil && w.URI != nil {
		if p := w.URI.path(); p != "" {
			return p
		}
	}
	for _, r := range c.TrackedGitRepos {
		if s := jsonString(r); s != "" && s[0] != '{' {
			return s
		}
		var o struct {
			RepoPath string `json:"repoPath"`
			Path     string `json:"path"`
		}
		if decode(r, &o) == nil && cmp.Or(o.RepoPath, o.Path) != "" {
			return cmp.Or(o.RepoPath, o.Path)
		}
	}
	return ""
}

// composer reads a composer's conversation and emits its session. With db
// set (2025) the bodies are bubbleId rows in conversation order; without,
// the conversation is inline (2024). key is where the composer is.
func (dr *dbRun) composer(ctx context.Context, db *sql.DB, stmt *sql.Stmt, c *composer, key, layout string) error {
	id := c.ComposerID
	head := dr.idx.heads[id]
	cv := dr.newConversation(id, dr.composerProject(c), layout)
	switch {
	case !c.CreatedAt.t.IsZero():
		cv.fallback, cv.fbPrec = c.CreatedAt.t, schema.PrecisionDerived
	case !c.LastUpdatedAt.t.IsZero():
		cv.fallback, cv.fbPrec = c.LastUpdatedAt.t, schema.PrecisionDerived
	case head != nil && !head.created.IsZero():
		cv.fallback, cv.fbPrec = head.created, schema.PrecisionDerived
	}
	seen := map[string]bool{}
	if len(c.Conversation) > 0 {
		for j, el := range c.Conversation {
			if err := ctx.Err(); err != nil {
				return err
			}
			e := &convEntry{key: pointer(key, "conversation", strconv.Itoa(j))}
			var b bubble
			if decode(el, &b) == nil {
				e.b = &b
			}
			e.role = bubbleRole(b.Type, 0)
			e.id = cmp.Or(b.BubbleID, "index-"+strconv.Itoa(j))
			if err := cv.add(e); err != nil {
				return err
			}
		}
	} else if db != nil {
		for j, h := range c.Headers {
			if err := ctx.Err(); err != nil {
				return err
			}
			seen[h.BubbleID] = true
			e, err := dr.headerEntry(ctx, stmt, c, key, j, &h)
			if err != nil {
				return err
			}
			if err := cv.add(e); err != nil {
				return err
			}
		}
	}
	if err := cv.flush(); err != nil {
		return err
	}
	if db != nil {
		// The composer's other bubble rows (edited away, not yet in the
		// order, or beside an inline conversation): raw records only.
		var others []string
		prefix := prefixBubble + id + ":"
		if err := kvKeys(ctx, db, prefix, func(k string) error {
			if !seen[strings.TrimPrefix(k, prefix)] {
				others = append(others, k)
			}
			return nil
		}); err != nil {
			return &extract.ReadError{Path: dr.d.path, Err: err}
		}
		if err := dr.orphans(ctx, stmt, others); err != nil {
			return err
		}
	}
	s := dr.newRec(schema.KindSession, key)
	ts, prec := c.CreatedAt.t, schema.PrecisionExact
	if ts.IsZero() {
		ts, prec = cv.firstTS, cv.firstPrec
	}
	if ts.IsZero() && head != nil && !head.created.IsZero() {
		ts, prec = head.created, schema.PrecisionExact
	}
	m := composerMeta(c, head, layout)
	if head != nil {
		m.Workspace = head.workspace
	} else if layout == layoutInline {
		m.Workspace = dr.workspace
	}
	m.Bubbles, m.BodiesMissing = cv.n, cv.missing
	if m.LinesAdded == nil && cv.diffs {
		m.LinesAdded, m.LinesRemoved, m.LinesSource = &cv.added, &cv.removed, "tool_diffs"
	}
	title := c.title()
	if title == "" && head != nil {
		title = head.name
	}
	return dr.session(s, id, title, cv, ts, prec, m)
}

// headerEntry reads the body of the j-th bubble of a composer's order.
func (dr *dbRun) headerEntry(ctx context.Context, stmt *sql.Stmt, c *composer, key string, j int, h *header) (*convEntry, error) {
	e := &convEntry{id: h.BubbleID, role: h.Type, hdr: h, key: pointer(key, "fullConversationHeadersOnly", strconv.Itoa(j))}
	if h.BubbleID == "" {
		e.id = "index-" + strconv.Itoa(j)
		return e, nil
	}
	row, err := kvGet(ctx, stmt, prefixBubble+c.ComposerID+":"+h.BubbleID)
	if err != nil {
		return nil, &extract.ReadError{Path: dr.d.path, Err: err}
	}
	if row == nil {
		if v, ok := c.ConvMap[h.BubbleID]; ok {
			var b bubble
			if decode(v, &b) == nil {
				e.b = &b
				e.key = pointer(key, "conversationMap", h.BubbleID)
			}
		}
		return e, nil
	}
	dr.countRow()
	raw, isJSON := row.raw()
	if !isJSON && !row.null {
		if err := dr.badValue(row); err != nil {
			return nil, err
		}
	}
	e.key, e.raw = row.sourceKey(), raw
	var b bubble
	if isJSON && decode(raw, &b) == nil {
		e.b = &b
		e.role = bubbleRole(b.Type, h.Type)
	}
	return e, nil
}

// session emits a composer's or tab's session record.
func (dr *dbRun) session(s *schema.Record, sid, title string, cv *conversation, ts time.Time, prec string, m *sessionMeta) error {
	s.ID = schema.SessionRecordID(platform, sid)
	s.SessionID = sid
	s.Title = title
	s.Session = &schema.Session{}
	if title != "" {
		s.Session.TitleSource = schema.TitlePlatform
	}
	s.TS, s.TSPrecision = ts, prec
	if s.TS.IsZero() {
		s.TS, s.TSPrecision = dr.d.mtime, schema.PrecisionFileMtime
	}
	s.Project = cv.project
	if s.Completeness == "" {
		s.Completeness = schema.CompleteFull
		switch {
		case cv.n > 0 && cv.missing == cv.n:
			s.Completeness = schema.CompleteMetadata
		case cv.missing > 0:
			s.Completeness = schema.CompletePartial
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.Meta = b
	return dr.out(s)
}

// pointer extends a Source.Key with a JSON pointer into the row's value:
// "<table>:<key>#/a/b". Pointer tokens escape '~' and '/'.
func pointer(key string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(key)
	if !strings.Contains(key, "#") {
		b.WriteByte('#')
	}
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
