package cursor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
)

// dbRun reads one database.
type dbRun struct {
	*run
	emit      extract.Emit
	d         *dbFile
	project   string // the workspace's folder (workspace.json)
	workspace string // the workspaceStorage directory's name
}

var errNotJSON = errors.New("value is not JSON (kept as a raw record)")

// database reads a database whole from a private snapshot and ends with
// its checkpoint.
func (r *run) database(ctx context.Context, d *dbFile, emit extract.Emit) error {
	dr := &dbRun{run: r, emit: emit, d: d, project: r.idx.projects[d.path], workspace: workspaceName(d.path)}
	if st := r.opt.Stats; st != nil {
		st.Files.Add(1)
		st.Bytes.Add(d.fp.Size + max(d.walSize, 0))
	}
	snap, cleanup, err := snapshot(ctx, d.path, r.idx.tmp)
	if err != nil && damaged(err) && ctx.Err() == nil {
		// Damaged: what still reads is salvaged, and what does not is
		// named. The watermark follows, as for a bad line: the same file
		// read again would give the same rows.
		var lost []lostRows
		cause := err
		snap, cleanup, lost, err = salvage(ctx, r.opt, d.path, r.idx.tmp)
		if err != nil {
			err = fmt.Errorf("%v; nothing could be salvaged: %w", cause, err)
		}
		for _, l := range lost {
			if serr := r.opt.Skip(&schema.BadInput{Path: d.path, Key: l.table, Err: l}); serr != nil {
				if cleanup != nil {
					cleanup()
				}
				return serr
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Not a database, damaged past salvage, or locked past the
		// timeout: say so and go on with the others; no watermark, so the
		// next run tries again.
		return r.opt.Skip(&schema.BadInput{Path: d.path, Err: fmt.Errorf("cannot copy the database: %w", err)})
	}
	defer cleanup()
	db, err := openSnapshot(snap)
	if err != nil {
		return &extract.ReadError{Path: d.path, Err: err}
	}
	defer db.Close()
	item, kv, err := tables(ctx, db)
	if err != nil {
		return r.opt.Skip(&schema.BadInput{Path: d.path, Err: fmt.Errorf("cannot read the database: %w", err)})
	}
	if item {
		rows, err := itemRows(ctx, db)
		if err != nil {
			return &extract.ReadError{Path: d.path, Err: err}
		}
		for _, row := range rows {
			if err := dr.itemRow(ctx, row); err != nil {
				return err
			}
		}
	}
	if kv {
		if err := dr.kv(ctx, db); err != nil {
			return err
		}
	}
	if r.opt.State == nil {
		return nil
	}
	f, _, err := r.opt.OpenFile(d.path)
	if err != nil {
		return r.opt.SkipFile(d.path, err)
	}
	defer f.Close()
	cp, err := extract.Checkpoint(platform, f, d.path, d.fp, d.fp.Size, d.fp.Size, 0, d.context())
	if err != nil {
		return err
	}
	return dr.out(cp)
}

// newRec starts a record with the provenance of a row of this database.
func (dr *dbRun) newRec(kind schema.Kind, key string) *schema.Record {
	rec := schema.New(kind)
	rec.Platform = platform
	rec.Source = &schema.Source{Path: dr.d.path, Key: key, Mtime: dr.d.mtime}
	dr.opt.Stamp(rec, platform, AdapterVersion)
	return rec
}

// out emits a record; raw records and messages older than --since are
// dropped.
func (dr *dbRun) out(rec *schema.Record) error {
	return emitOut(dr.opt, dr.emit, rec)
}

func emitOut(opt *extract.Options, emit extract.Emit, rec *schema.Record) error {
	if (rec.Kind == schema.KindRaw || rec.Kind == schema.KindMessage) && !opt.Since.IsZero() && rec.TS.Before(opt.Since) {
		return nil
	}
	if opt.Stats != nil {
		opt.Stats.Records.Add(1)
	}
	return emit(rec)
}

// rawRecord emits a row as a raw record.
func (dr *dbRun) rawRecord(row *row, raw json.RawMessage, session, nativeType string, ts time.Time, prec string) error {
	rec := dr.newRec(schema.KindRaw, row.sourceKey())
	rec.SessionID, rec.NativeType = session, nativeType
	rec.TS, rec.TSPrecision = ts, prec
	if ts.IsZero() {
		rec.TS, rec.TSPrecision = dr.d.mtime, schema.PrecisionFileMtime
	}
	rec.Project = dr.project
	rec.Completeness = schema.CompleteFull
	if row.null {
		rec.Completeness = schema.CompleteMetadata
	}
	rec.Raw = raw
	rec.ID = schema.RawID(rec)
	return dr.out(rec)
}

// message emits a message; one made from a row of its own carries the row
// as Raw and goes out as that raw record followed by the message.
func (dr *dbRun) message(rec *schema.Record) error {
	if len(rec.Raw) > 0 {
		if err := dr.out(schema.SplitRaw(rec)); err != nil {
			return err
		}
		rec.Raw = nil
	}
	return dr.out(rec)
}

func (dr *dbRun) countRow() {
	if dr.opt.Stats != nil {
		dr.opt.Stats.Lines.Add(1)
	}
}

// badValue reports a whitelisted row whose value is not JSON.
func (dr *dbRun) badValue(row *row) error {
	return dr.opt.Skip(&schema.BadInput{Path: dr.d.path, Key: row.sourceKey(), Err: errNotJSON})
}

// itemRow reads a whitelisted ItemTable row.
func (dr *dbRun) itemRow(ctx context.Context, row *row) error {
	dr.countRow()
	raw, isJSON := row.raw()
	if !isJSON && !row.null {
		if err := dr.badValue(row); err != nil {
			return err
		}
		return dr.rawRecord(row, raw, "", row.key, time.Time{}, "")
	}
	switch row.key {
	case keyChatData:
		return dr.chatData(ctx, row, raw)
	case keyComposerData:
		return dr.composerList(ctx, row, raw)
	}
	return dr.rawRecord(row, raw, "", row.key, time.Time{}, "")
}

// chatData reads the 2023 aichat tabs.
func (dr *dbRun) chatData(ctx context.Context, row *row, raw json.RawMessage) error {
	var cd chatData
	ok := !row.null && decode(raw, &cd) == nil
	var latest time.Time
	for _, t := range cd.Tabs {
		if ts, ok := t.LastSendTime.Time(); ok && ts.After(latest) {
			latest = ts
		}
	}
	if err := dr.rawRecord(row, raw, "", "aichat.chatdata", latest, schema.PrecisionDerived); err != nil || !ok {
		return err
	}
	for i := range cd.Tabs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := dr.tab(row, i, &cd.Tabs[i]); err != nil {
			return err
		}
	}
	return nil
}

// tab reads one 2023 chat tab: a session of its own.
func (dr *dbRun) tab(row *row, i int, t *chatTab) error {
	key := row.sourceKey() + "#/tabs/" + strconv.Itoa(i)
	sid := t.TabID
	if sid == "" {
		sid = "tab-" + schema.ID(platform, dr.d.path, key)[:16]
	}
	last, hasLast := t.LastSendTime.Time()
	cv := dr.newConversation(sid, dr.project, layoutAIChat)
	if hasLast {
		cv.fallback, cv.fbPrec = last, schema.PrecisionDerived
	}
	// The tab's last prompt was sent at lastSendTime.
	lastPrompt := -1
	bubbles := make([]*bubble, len(t.Bubbles))
	for j, rb := range t.Bubbles {
		var b bubble
		if decode(rb, &b) != nil {
			continue // not an object: kept in the row's raw record
		}
		bubbles[j] = &b
		if bubbleRole(b.Type, 0) == 1 && !draft(&b) {
			lastPrompt = j
		}
	}
	for j, b := range bubbles {
		if b == nil || (bubbleRole(b.Type, 0) == 1 && draft(b)) {
			// The empty input box Cursor keeps after the last answer is not
			// a message.
			continue
		}
		e := &convEntry{b: b, role: bubbleRole(b.Type, 0), id: cmp.Or(b.ID, b.BubbleID), key: key + "/bubbles/" + strconv.Itoa(j)}
		if e.id == "" {
			e.id = "index-" + strconv.Itoa(j)
		}
		if e.role == 1 {
			// The last prompt was sent at lastSendTime. An earlier one, about
			// when Cursor cached its context; but Cursor caches again when a
			// tab is reopened, so a cache time after lastSendTime says
			// nothing.
			e.hint = earliest(b.ContextCacheTimestamp, b.LongFilesFitTimestamp)
			if hasLast && (j == lastPrompt || e.hint.After(last)) {
				e.hint = time.Time{}
				if j == lastPrompt {
					e.hint = last
				}
			}
		}
		if err := cv.add(e); err != nil {
			return err
		}
	}
	if err := cv.flush(); err != nil {
		return err
	}
	s := dr.newRec(schema.KindSession, key)
	// Cut after pos-scrub (excerpt.Finish).
	title := validUTF8(excerpt.Source(t.ChatTitle))
	if title == "New chat" {
		title = "" // Cursor's placeholder, not a name
	}
	m := &sessionMeta{Layout: layoutAIChat, TabState: t.TabState, Bubbles: cv.n}
	if hasLast {
		m.LastUpdatedAt = last.Format(time.RFC3339Nano)
	}
	ts, prec := cv.firstTS, cv.firstPrec
	if ts.IsZero() && hasLast {
		ts, prec = last, schema.PrecisionDerived
	}
	return dr.session(s, sid, title, cv, ts, prec, m)
}

// draft tells the empty input bubble at the end of a 2023 tab.
func draft(b *bubble) bool {
	return strings.TrimSpace(b.text()) == "" && len(b.Selections) == 0
}

func earliest(ts ...flexTime) time.Time {
	var out time.Time
	for _, f := range ts {
		if t, ok := f.Time(); ok && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

// composerList reads ItemTable composer.composerData: composers with
// their conversation inline (2024), or heads of composers whose bodies are
// in the global database (2025).
func (dr *dbRun) composerList(ctx context.Context, row *row, raw json.RawMessage) error {
	var list composerList
	ok := !row.null && decode(raw, &list) == nil
	comps := make([]*composer, len(list.AllComposers))
	var latest time.Time
	for i, el := range list.AllComposers {
		var c composer
		if decode(el, &c) != nil || c.ComposerID == "" {
			continue
		}
		comps[i] = &c
		for _, f := range []flexTime{c.CreatedAt, c.LastUpdatedAt} {
			if t, ok := f.Time(); ok && t.After(latest) {
				latest = t
			}
		}
	}
	if err := dr.rawRecord(row, raw, "", "composer.composerData", latest, schema.PrecisionDerived); err != nil || !ok {
		return err
	}
	for i, c := range comps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c == nil {
			continue
		}
		key := row.sourceKey() + "#/allComposers/" + strconv.Itoa(i)
		var err error
		switch {
		case len(c.Conversation) > 0:
			// 2024: the conversation is here.
			err = dr.composer(ctx, nil, nil, c, key, layoutInline)
		case dr.idx.composers[c.ComposerID]:
			// 2025: the global database's composerData has it.
		case c.Type == "head":
			// A head whose body no database holds: the session is known by
			// its metadata only.
			err = dr.headOnly(c, key)
		default:
			err = dr.composer(ctx, nil, nil, c, key, layoutInline) // an empty 2024 composer
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// headOnly emits the session of a composer head without a body.
func (dr *dbRun) headOnly(c *composer, key string) error {
	cv := dr.newConversation(c.ComposerID, dr.project, layoutHead)
	s := dr.newRec(schema.KindSession, key)
	ts, prec := c.CreatedAt.t, schema.PrecisionExact
	if ts.IsZero() {
		ts, prec = c.LastUpdatedAt.t, schema.PrecisionDerived
	}
	m := composerMeta(c, nil, layoutHead)
	m.Workspace = dr.workspace
	s.Completeness = schema.CompleteMetadata
	return dr.session(s, c.ComposerID, c.title(), cv, ts, prec, m)
}
