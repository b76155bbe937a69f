package gemini

import (
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// loc is where the surviving copy of a message is: a line, and the element
// of a $set's messages (-1 for a message line).
type loc struct {
	line int64
	elem int
}

// conv is the conversation as the lines read so far leave it: the
// surviving message ids in order, where each one's last copy is, and
// where each first appeared. Memory is a few words per message, never
// their contents.
type conv struct {
	order []string
	final map[string]loc
	first map[string]schema.Line // Bytes unset
	user  map[string]bool
}

func newConv() *conv {
	return &conv{final: map[string]loc{}, first: map[string]schema.Line{}, user: map[string]bool{}}
}

// put records a copy of message id at l; a new id goes last, a known one
// keeps its place (a JavaScript Map's set, as Gemini CLI's loader does).
func (c *conv) put(id string, isUser bool, at loc, ln schema.Line) {
	if _, ok := c.final[id]; !ok {
		c.order = append(c.order, id)
	}
	c.final[id] = at
	if _, ok := c.first[id]; !ok {
		c.first[id] = schema.Line{Num: ln.Num, Offset: ln.Offset}
	}
	c.user[id] = isUser
}

// rewind removes id and everything after it; an unknown id removes all.
func (c *conv) rewind(id string) {
	i := 0
	for i = range c.order {
		if c.order[i] == id {
			break
		}
	}
	if len(c.order) == 0 || c.order[i] != id {
		i = 0
	}
	for _, gone := range c.order[i:] {
		delete(c.final, gone)
		delete(c.first, gone)
		delete(c.user, gone)
	}
	c.order = c.order[:i]
}

// reset makes the conversation exactly the messages of a $set.
func (c *conv) reset(ids []string, isUser []bool, line schema.Line) {
	keep := map[string]bool{}
	for _, id := range ids {
		keep[id] = true
	}
	for _, id := range c.order {
		if !keep[id] {
			delete(c.final, id)
			delete(c.first, id)
			delete(c.user, id)
		}
	}
	c.order = c.order[:0]
	placed := map[string]bool{}
	for i, id := range ids {
		if id == "" {
			continue
		}
		c.final[id] = loc{line.Num, i}
		c.user[id] = isUser[i]
		if placed[id] {
			continue
		}
		placed[id] = true
		c.order = append(c.order, id)
		if _, ok := c.first[id]; !ok {
			c.first[id] = schema.Line{Num: line.Num, Offset: line.Offset}
		}
	}
}

// lineKind classifies a record the way Gemini CLI's loader does.
func lineKind(rc *record) string {
	switch {
	case rc.RewindTo != nil:
		return "$rewindTo"
	case rc.ID != "":
		return "message"
	case rc.Set != nil:
		return "$set"
	case rc.SessionID != "" && rc.ProjectHash != "":
		return "metadata"
	}
	return "unknown"
}

// setIDs returns the id and kind of each message of a $set.
func setIDs(s *setRecord) ([]string, []bool) {
	ids, users := make([]string, len(s.Messages)), make([]bool, len(s.Messages))
	for i, m := range s.Messages {
		var h struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		if decode(m, &h) == nil {
			ids[i], users[i] = h.ID, h.Type == "user"
		}
	}
	return ids, users
}

// scan is where a pass over the file ended.
type scan struct {
	end                    int64 // past the last line read (parsed)
	consumed, consumedLine int64 // past the last complete line
}

// eachLine calls fn for every line of rd that parses, from byte start and
// line num (extract's ReadLines rules). Bad lines are reported, and lines
// counted, when report is set; a half-written last line ends the pass.
func (r *run) eachLine(ctx context.Context, path string, rd io.Reader, start, num int64, report bool, fn func(ln extract.Line, raw []byte, rc *record) error) (scan, error) {
	if r.lr == nil {
		r.lr = schema.NewLineReaderAt(rd, start, num)
	} else {
		r.lr.Reset(rd, start, num)
	}
	var (
		rc  record
		odd error // a member the line was read without
	)
	read, err := r.opt.ReadLines(ctx, r.lr, path, !report, extract.LineFuncs{
		Parse: func(raw []byte) (err error) {
			odd, err = parseRecordOdd(raw, &rc)
			return err
		},
		Line: func(raw []byte, ln extract.Line) error {
			warn := rc.check(odd)
			if err := fn(ln, extract.OneLine(raw), &rc); err != nil || warn == nil || !report {
				return err
			}
			return r.opt.Warn(&schema.BadInput{Path: path, Line: ln.Num, Err: warn})
		},
		// A line kept in the raw layer only is a record of no kind.
		RawOnly: func(raw []byte, ln extract.Line) error {
			rc = record{}
			return fn(ln, raw, &rc)
		},
	})
	return scan{end: read.End, consumed: read.Consumed, consumedLine: read.Lines}, err
}

// jsonl reads a JSONL chat file in two passes over the same lines: the
// first works out which copy of each message survives (updates, $set,
// $rewindTo) and where the open exchange starts; the second emits every
// line as a raw record and each surviving copy as a message after it.
func (r *run) jsonl(ctx context.Context, sf extract.SourceFile, src *extract.Source) error {
	f, fp, plan := src.File, src.FP, src.Plan
	fs := newFileState(sf.Path, fp.Mtime)
	fs.restore(plan.Context)
	c := newConv()
	size := fp.Size - plan.Start
	pass1, err := r.eachLine(ctx, sf.Path, io.NewSectionReader(f, plan.Start, size), plan.Start, plan.Lines, true,
		func(eln extract.Line, raw []byte, rc *record) error {
			ln := eln.Line
			switch lineKind(rc) {
			case "$rewindTo":
				c.rewind(*rc.RewindTo)
			case "message":
				c.put(rc.ID, rc.Type == "user", loc{ln.Num, -1}, ln)
			case "$set":
				fs.learn(&rc.Set.metadata)
				if rc.Set.Messages != nil {
					ids, users := setIDs(rc.Set)
					c.reset(ids, users, ln)
				}
			case "metadata":
				fs.learn(&rc.metadata)
			}
			return nil
		})
	if err != nil {
		return err
	}
	if err := r.settle(fs); err != nil {
		return err
	}

	// The open exchange starts at the last surviving prompt.
	resume, resumeLines := plan.Start, plan.Lines
	for i := len(c.order) - 1; i >= 0; i-- {
		if id := c.order[i]; c.user[id] {
			resume, resumeLines = c.first[id].Offset, c.first[id].Num-1
			break
		}
	}

	var m record
	_, err = r.eachLine(ctx, sf.Path, io.NewSectionReader(f, plan.Start, pass1.end-plan.Start), plan.Start, plan.Lines, false,
		func(eln extract.Line, raw []byte, rc *record) error {
			ln := eln.Line
			if r.opt.Stats != nil {
				r.opt.Stats.Lines.Add(1)
				r.opt.Stats.Bytes.Add(ln.End() - ln.Offset)
			}
			srcAt := &schema.Source{Path: sf.Path, Line: ln.Num, Offset: ln.Offset, Mtime: fp.Mtime, Altered: eln.Altered()}
			switch kind := lineKind(rc); kind {
			case "message":
				at, alive := c.final[rc.ID]
				if alive && at == (loc{ln.Num, -1}) {
					return r.message(fs, rc, raw, srcAt)
				}
				rec := r.newRec(fs, raw, srcAt, rc.Timestamp)
				rec.NativeType, rec.NativeID = "message/"+rc.Type, rc.ID
				if alive {
					rec.Meta = json.RawMessage(`{"superseded":true}`)
				} else {
					rec.Meta = json.RawMessage(`{"rewound":true}`)
				}
				return r.out(fs, rec)
			case "$set":
				rec := r.newRec(fs, raw, srcAt, rc.Set.LastUpdated)
				rec.NativeType = kind
				if err := r.out(fs, rec); err != nil {
					return err
				}
				for i, e := range rc.Set.Messages {
					if err := parseRecord(e, &m); err != nil || m.ID == "" || c.final[m.ID] != (loc{ln.Num, i}) {
						continue
					}
					key := "$set.messages[" + strconv.Itoa(i) + "]"
					if err := r.message(fs, &m, nil, &schema.Source{Path: sf.Path, Line: ln.Num, Offset: ln.Offset, Key: key, Mtime: fp.Mtime}); err != nil {
						return err
					}
				}
				return nil
			case "metadata":
				rec := r.newRec(fs, raw, srcAt, rc.StartTime)
				rec.NativeType, rec.NativeID = kind, rc.SessionID
				return r.out(fs, rec)
			default:
				rec := r.newRec(fs, raw, srcAt, "")
				rec.NativeType = kind
				if rc.RewindTo != nil {
					rec.NativeID = *rc.RewindTo
				}
				return r.out(fs, rec)
			}
		})
	if err != nil {
		return err
	}
	if err := r.sessionRecord(fs); err != nil {
		return err
	}
	if r.opt.State == nil {
		return nil
	}
	if resume > pass1.consumed {
		resume, resumeLines = pass1.consumed, pass1.consumedLine
	}
	return src.EmitCheckpoint(r.emit, platform, pass1.consumed, resume, resumeLines, fs.context())
}
