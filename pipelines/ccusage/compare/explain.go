package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// contribution is what one API message adds to each day and model.
type contribution map[rowKey]tokens

func (c contribution) add(k rowKey, t tokens) {
	x := c[k]
	x.add(t)
	c[k] = x
}

// item is one message (or line) counted differently by the two tools.
type item struct {
	cause string
	where string
	delta contribution // pos minus ccusage
}

type explanation struct {
	cc, pos map[rowKey]tokens // the transcripts counted by each tool's rules
	items   []item
	lines   int
	// longContext lists, per row, pos's messages whose prompt (input +
	// cache writes + cache reads) is above 200k tokens: Anthropic bills
	// such a request whole at its long-context rates, ccusage prices only
	// the tokens of each kind above 200k higher.
	longContext map[rowKey][]string
}

const (
	causeShrink    = "a later line of a message carries less usage than an earlier one: pos keeps the last line's usage, ccusage the largest"
	causeMidnight  = "the lines of a message straddle midnight (UTC, or --timezone): pos dates the message by its first line, ccusage by the line it keeps"
	causeSkipped   = "ccusage skips the line (non-semver version, or an empty sessionId, requestId, message.id or model)"
	causeNoReq     = "lines without requestId: ccusage counts each line (its key needs requestId), pos merges the lines of one message.id"
	causeTwice     = "one message.id+requestId counted twice by pos (its lines are not contiguous in one thread, or were copied into another session with new line uuids); ccusage counts it once"
	causeProgress  = "usage only in a progress (agent_progress) line whose message the subagent's transcript lacks: ccusage counts it, pos reads a progress copy only when the subagent has no transcript"
	causeSidechain = "a sidechain line replays a message with another requestId: ccusage keeps the main-thread copy, pos counts both"
	causeOther     = "counted differently (see the lines)"
)

// explain counts the transcripts under dir by both tools' rules, a line
// dated by its day in loc.
func explain(dir string, loc *time.Location) (*explanation, error) {
	if fi, err := os.Stat(filepath.Join(dir, "projects")); err == nil && fi.IsDir() {
		dir = filepath.Join(dir, "projects")
	}
	files, present, err := scan(dir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		for _, e := range f {
			e.day = e.ts.In(loc).Format(time.DateOnly)
		}
	}
	// hasTranscript mirrors the Claude Code adapter: a subagent's
	// transcript is <session>/subagents/agent-<id>.jsonl or
	// agent-<id>.jsonl beside the session file.
	hasTranscript := func(e *entry) bool {
		dir := filepath.ToSlash(filepath.Dir(e.file))
		name := "agent-" + e.copyOf + ".jsonl"
		return present[path.Join(dir, strings.TrimSuffix(path.Base(filepath.ToSlash(e.file)), ".jsonl"), "subagents", name)] ||
			present[path.Join(dir, name)]
	}
	x := &explanation{cc: map[rowKey]tokens{}, pos: map[rowKey]tokens{}, longContext: map[rowKey][]string{}}

	// ccusage: every line with usage; duplicates by message.id+requestId
	// (message.id+session+timestamp without a requestId) collapse to the
	// main-thread line with the most tokens; a line without message.id is
	// never a duplicate.
	type ccKey struct{ msg, req, sess, ts string }
	ccEntries := map[ccKey]*entry{}
	var ccOrder []ccKey
	nolink := 0
	for _, fe := range files {
		for _, e := range fe {
			x.lines++
			if e.skip != "" {
				continue
			}
			var k ccKey
			switch {
			case !e.hasMsgID:
				nolink++
				k = ccKey{msg: fmt.Sprintf("\x00%d", nolink)}
			case e.hasReqID:
				k = ccKey{msg: e.msgID, req: e.reqID}
			default:
				k = ccKey{msg: e.msgID, sess: e.session, ts: e.ts.Format(time.RFC3339Nano)}
			}
			old, ok := ccEntries[k]
			if !ok {
				ccEntries[k] = e
				ccOrder = append(ccOrder, k)
				continue
			}
			if old.sidechain != e.sidechain {
				if old.sidechain {
					ccEntries[k] = e
				}
				continue
			}
			if e.usage.total() > old.usage.total() {
				ccEntries[k] = e
			}
		}
	}

	// A sidechain line that replays a message of the same session with
	// another requestId (/btw) is a duplicate of it; the main-thread copy
	// wins.
	type route struct{ msg, sess string }
	routes := map[route][]ccKey{}
	for _, k := range ccOrder {
		e := ccEntries[k]
		if e.hasMsgID && e.msgID != "" {
			r := route{e.msgID, e.session}
			routes[r] = append(routes[r], k)
		}
	}
	for _, ks := range routes {
		if len(ks) < 2 {
			continue
		}
		anySide := false
		for _, k := range ks {
			anySide = anySide || ccEntries[k].sidechain
		}
		if !anySide {
			continue
		}
		keep := ks[0]
		for _, k := range ks[1:] {
			a, b := ccEntries[keep], ccEntries[k]
			if (a.sidechain && !b.sidechain) || (a.sidechain == b.sidechain && b.usage.total() > a.usage.total()) {
				keep = k
			}
		}
		for _, k := range ks {
			if k != keep {
				ccEntries[k].dropped = true
			}
		}
	}

	// pos: assistant lines only; a line whose uuid was seen is a replay;
	// the lines of one message (message.id+requestId, contiguous among the
	// assistant lines of a thread) merge: the first line's day and model,
	// the last line's usage.
	type posMsg struct {
		first, last *entry
		model       string
		advisor     []advisorCall // of the last line that has any
	}
	var posMsgs []*posMsg
	seenUUID := map[string]bool{}
	for _, fe := range files {
		open := map[string]*posMsg{} // thread -> open message
		for _, e := range fe {
			if !e.assistant && (e.copyOf == "" || hasTranscript(e)) {
				continue
			}
			if e.uuid != "" {
				if seenUUID[e.uuid] {
					continue
				}
				seenUUID[e.uuid] = true
			}
			thread := e.agent
			if o := open[thread]; o != nil && e.hasMsgID && e.msgID != "" && o.first.msgID == e.msgID && o.first.reqID == e.reqID {
				o.last = e
				if o.model == "" {
					o.model = e.model
				}
				if len(e.advisor) > 0 {
					o.advisor = e.advisor
				}
				continue
			}
			m := &posMsg{first: e, last: e, model: e.model, advisor: e.advisor}
			posMsgs = append(posMsgs, m)
			open[thread] = m
		}
	}

	// Each tool's contribution per API message, keyed alike.
	type msgKey struct{ msg, req string }
	keyOf := func(e *entry) msgKey {
		if !e.hasMsgID || e.msgID == "" {
			return msgKey{msg: "\x00" + e.where()}
		}
		return msgKey{e.msgID, e.reqID}
	}
	type side struct {
		c       contribution
		entries []*entry // ccusage: the kept lines; pos: first and last lines
		n       int
	}
	ccSide, posSide := map[msgKey]*side{}, map[msgKey]*side{}
	get := func(m map[msgKey]*side, k msgKey) *side {
		s := m[k]
		if s == nil {
			s = &side{c: contribution{}}
			m[k] = s
		}
		return s
	}
	var keys []msgKey
	seenKey := map[msgKey]bool{}
	addKey := func(k msgKey) {
		if !seenKey[k] {
			seenKey[k] = true
			keys = append(keys, k)
		}
	}
	for _, k := range ccOrder {
		e := ccEntries[k]
		if e.dropped {
			continue
		}
		mk := keyOf(e)
		if !e.hasMsgID {
			mk = msgKey{msg: "\x00" + e.where()}
		}
		s := get(ccSide, mk)
		s.n++
		s.entries = append(s.entries, e)
		if e.model != "<synthetic>" {
			s.c.add(rowKey{e.day, e.model}, e.usage)
			x.cc[rowKey{e.day, e.model}] = addT(x.cc[rowKey{e.day, e.model}], e.usage)
		}
		for _, a := range e.advisor {
			rk := rowKey{e.day, a.model}
			s.c.add(rk, a.usage)
			x.cc[rk] = addT(x.cc[rk], a.usage)
		}
		addKey(mk)
	}
	for _, m := range posMsgs {
		mk := keyOf(m.first)
		s := get(posSide, mk)
		s.n++
		s.entries = append(s.entries, m.first, m.last)
		if m.model != "<synthetic>" {
			rk := rowKey{m.first.day, m.model}
			s.c.add(rk, m.last.usage)
			x.pos[rk] = addT(x.pos[rk], m.last.usage)
			if u := m.last.usage; u.In+u.CW+u.CR > 200_000 {
				x.longContext[rk] = append(x.longContext[rk], m.last.where())
			}
		}
		for _, a := range m.advisor {
			rk := rowKey{m.first.day, a.model}
			s.c.add(rk, a.usage)
			x.pos[rk] = addT(x.pos[rk], a.usage)
			if u := a.usage; u.In+u.CW+u.CR > 200_000 {
				x.longContext[rk] = append(x.longContext[rk], m.last.where()+" (advisor)")
			}
		}
		addKey(mk)
	}

	for _, k := range keys {
		c, p := ccSide[k], posSide[k]
		var cc, pc contribution
		if c != nil {
			cc = c.c
		}
		if p != nil {
			pc = p.c
		}
		d := diff(pc, cc)
		if len(d) == 0 {
			continue
		}
		it := item{delta: d}
		var where []string
		switch {
		case p == nil && c != nil && c.entries[0].progress:
			it.cause = causeProgress
			where = append(where, c.entries[0].where())
		case p == nil && c != nil && c.entries[0].sidechain:
			it.cause = causeSidechain
			where = append(where, c.entries[0].where())
		case c == nil && p != nil && p.entries[0].sidechain && p.entries[0].skip == "":
			it.cause = causeSidechain
			where = append(where, p.entries[0].where())
		case c == nil && p != nil:
			it.cause = causeSkipped
			for _, e := range p.entries {
				if e.skip != "" {
					it.cause = causeSkipped + ": " + e.skip
					break
				}
			}
			where = append(where, p.entries[0].where())
		case p != nil && p.n > 1:
			it.cause = causeTwice
			for i := 0; i < len(p.entries); i += 2 {
				where = append(where, p.entries[i].where())
			}
		case c != nil && c.n > 1:
			it.cause = causeNoReq
			for _, e := range c.entries {
				where = append(where, e.where())
			}
		case p != nil && c != nil:
			pf, pl, ck := p.entries[0], p.entries[1], c.entries[0]
			switch {
			case pl.usage != ck.usage:
				it.cause = causeShrink
				where = append(where, "pos keeps "+pl.where(), "ccusage keeps "+ck.where())
			case pf.day != ck.day:
				it.cause = causeMidnight
				where = append(where, "pos dates by "+pf.where()+" ("+pf.ts.Format(time.RFC3339)+")", "ccusage by "+ck.where()+" ("+ck.ts.Format(time.RFC3339)+")")
			default:
				it.cause = causeOther
				where = append(where, pf.where(), ck.where())
			}
		default:
			it.cause = causeOther
		}
		it.where = strings.Join(where, "; ")
		x.items = append(x.items, it)
	}
	return x, nil
}

func addT(a, b tokens) tokens { a.add(b); return a }
