package embed

// Tool calls and their results as units of the index: what an agent did
// (the shell commands it ran) and what came back (a tool's output, or its
// failure: a compiler error, a failing test, a stack trace, a refusal).
// "Have I seen this error before, and what fixed it?" is answered from
// these units; the exchange they belong to holds the fix.
//
// The units are bounded whatever the output: a long output keeps its head,
// its tail and, when it failed, the lines that say so with the lines around
// them (selectOutput), so a 2 MB log is a few chunks, not the index's
// bulk. An output or a command repeated verbatim within a session (the
// same ls, the same failing build) is indexed once.
//
// The chunks of a tool unit belong to the exchange the tool ran in, like
// the exchange's own chunks: their parent is the exchange. pos-normalize
// writes an exchange's record after its messages, and Claude Code a tool's
// result before the assistant message that called it (the call names the
// tool), so the reader holds a thread's tool units until its exchange comes
// (see toolTracker) and they are embedded and written after it; a tool run
// outside any exchange keeps its message as parent.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/enrich"
)

// ToolTypes are the content types of the chunks made of tool calls and
// results.
var ToolTypes = []string{schema.ContentCommand, schema.ContentToolOutput, schema.ContentToolError}

// IsToolType reports whether a chunk's content type is one of ToolTypes.
func IsToolType(ctype string) bool {
	return ctype == schema.ContentCommand || ctype == schema.ContentToolOutput || ctype == schema.ContentToolError
}

// toolUnit is a tool call's command or a tool's result, to be indexed.
type toolUnit struct {
	msg      *schema.Record // the message's fields a chunk copies (its texts and tools left out)
	exchange string         // the exchange it belongs to ("": none)
	index    int            // the tool's place among its message's tools
	command  bool           // a command; else a result
	name     string         // the tool's name (a result's from its call when it has none)
	callID   string
	cmd      string // the command (of a result: its call's)
	text     string // the command, or the output (a long output reduced, see holdBytes)
	isError  bool   // the result was flagged as an error
}

// head is what a unit's chunks are embedded under: "Bash: go test ./...".
func (u *toolUnit) head() string {
	if u.cmd != "" && !u.command {
		return orStr(u.name, "shell") + ": " + excerpt.Line(u.cmd, 160)
	}
	return u.name
}

// Bounds of what the reader holds: an output longer than holdBytes is
// reduced to its head, tail and error lines (selectOutput) before it is
// held; past maxHeldBytes the thread holding the most is let go unlinked.
// Its memory of calls and of texts seen starts afresh past maxCalls and
// maxSeen (a later result may go unnamed, a later repeat be indexed again).
const (
	holdBytes    = 64 << 10
	maxHeldBytes = 64 << 20
	maxCalls     = 1 << 17
	maxSeen      = 1 << 20
)

// toolTracker reads the stream in order and hands each job the tool units
// to embed with it: a thread's units (platform, session, agent) are held
// until the thread's exchange record comes, and go with it, linked to it;
// a prompt of the thread (pos-normalize has written the exchange before
// it), a checkpoint (it has closed every exchange before one) or the end
// of the stream let the units still held go unlinked. Results are named
// after their calls, whichever comes first, and texts a session already
// had are dropped.
type toolTracker struct {
	fast    *jsontext.Fast // reads the tools' inputs
	threads map[string]*heldUnits
	order   []string               // threads in the order they began holding
	calls   map[string]callInfo    // a call seen, by platform, session and call id
	waiting map[string][]*toolUnit // results held whose call has not come yet
	seen    map[uint64]struct{}
	bytes   int
}

type heldUnits struct {
	units []*toolUnit
	bytes int
}

// callInfo is what a result needs of its call.
type callInfo struct{ name, command string }

func newToolTracker(fast *jsontext.Fast) *toolTracker {
	return &toolTracker{fast: fast, threads: map[string]*heldUnits{}, calls: map[string]callInfo{},
		waiting: map[string][]*toolUnit{}, seen: map[uint64]struct{}{}}
}

func threadOf(r *schema.Record) string {
	k := r.Platform + "\x00" + r.SessionID
	if r.Agent != nil && r.Agent.ID != "" {
		k += "\x00" + r.Agent.ID
	}
	return k
}

// add reads one record of the stream and returns the units to embed with
// it, written after it.
func (tt *toolTracker) add(rec *schema.Record) []*toolUnit {
	switch rec.Kind {
	case schema.KindExchange:
		return tt.release(threadOf(rec), rec.ID)
	case schema.KindCheckpoint:
		return tt.releaseAll()
	case schema.KindMessage:
	default:
		return nil
	}
	var out []*toolUnit
	if rec.Role == schema.RoleUser && (rec.ContentType == schema.ContentText || rec.ContentType == schema.ContentCommand) {
		out = tt.release(threadOf(rec), "")
	}
	if len(rec.Tools) == 0 {
		return out
	}
	var msg *schema.Record
	stub := func() *schema.Record {
		if msg == nil {
			msg = toolMessage(rec)
		}
		return msg
	}
	for k, t := range rec.Tools {
		key := ""
		if t.CallID != "" {
			key = rec.Platform + "\x00" + rec.SessionID + "\x00" + t.CallID
		}
		cmd := ""
		if len(t.Input) > 0 {
			cmd, _ = enrich.ShellCommand(tt.fast, t)
		}
		if key != "" && t.Name != "" && len(t.Input) > 0 {
			// A call: it names its results, held or to come.
			for _, u := range tt.waiting[key] {
				u.name, u.cmd = orStr(u.name, t.Name), cmd
			}
			delete(tt.waiting, key)
			if t.Output == "" {
				if len(tt.calls) >= maxCalls {
					clear(tt.calls)
				}
				tt.calls[key] = callInfo{name: t.Name, command: cmd}
			}
		}
		if cmd != "" && tt.first(rec, "command", cmd) {
			tt.hold(rec, &toolUnit{msg: stub(), index: k, command: true, name: orStr(t.Name, "shell"), callID: t.CallID, cmd: cmd, text: cmd})
		}
		if t.Output == "" || !tt.first(rec, "output", t.Output) {
			continue
		}
		u := &toolUnit{msg: stub(), index: k, name: t.Name, callID: t.CallID, cmd: cmd, isError: t.IsError}
		if len(t.Output) > holdBytes {
			// Held reduced: what selectOutput keeps of it later is
			// within what it keeps now.
			out := outputText(t.Output)
			u.text = strings.Clone(selectOutput(out, true, holdBytes))
			if out != t.Output && exitCode(strings.TrimSpace(t.Output)) {
				u.isError = true
			}
		} else {
			u.text = strings.Clone(t.Output)
		}
		if key != "" && len(t.Input) == 0 {
			if c, ok := tt.calls[key]; ok {
				u.name, u.cmd = orStr(u.name, c.name), c.command
				delete(tt.calls, key)
			} else if u.name == "" {
				tt.waiting[key] = append(tt.waiting[key], u)
			}
		}
		tt.hold(rec, u)
	}
	if tt.bytes > maxHeldBytes {
		out = append(out, tt.release(tt.largest(), "")...)
	}
	return out
}

// toolMessage is what a tool unit keeps of its message: the fields its
// chunks copy, without the texts and tools that may be large.
func toolMessage(rec *schema.Record) *schema.Record {
	m := *rec
	m.Line, m.Text, m.Thinking, m.Tools, m.Raw, m.Meta, m.Files, m.Tags = nil, "", "", nil, nil, nil, nil, nil
	m.Usage, m.Advisor, m.Source, m.Exchange, m.Session, m.Chunk = nil, nil, nil, nil, nil, nil
	m.Extra = slices.Clone(m.Extra)
	return &m
}

func (tt *toolTracker) hold(rec *schema.Record, u *toolUnit) {
	k := threadOf(rec)
	h := tt.threads[k]
	if h == nil {
		h = &heldUnits{}
		tt.threads[k] = h
		tt.order = append(tt.order, k)
	}
	n := len(u.text) + 256
	h.units = append(h.units, u)
	h.bytes += n
	tt.bytes += n
}

// release lets a thread's held units go, linked to exchange ("": none).
func (tt *toolTracker) release(thread, exchange string) []*toolUnit {
	h := tt.threads[thread]
	if h == nil {
		return nil
	}
	delete(tt.threads, thread)
	tt.bytes -= h.bytes
	if len(tt.order) > 2*len(tt.threads)+64 {
		tt.order = slices.DeleteFunc(tt.order, func(k string) bool { return tt.threads[k] == nil })
	}
	// The commands a tool ran in the exchange are one unit, a line or
	// more each, in order: a command is short, and a chunk of its own
	// each cost the index more than it told.
	byTool := map[string]*toolUnit{}
	out := h.units[:0]
	for _, u := range h.units {
		u.exchange = exchange
		if u.command {
			if first := byTool[u.name]; first != nil {
				first.text += "\n" + u.text
				continue
			}
			byTool[u.name] = u
		}
		out = append(out, u)
	}
	return out
}

// releaseAll lets every held unit go unlinked, oldest thread first.
func (tt *toolTracker) releaseAll() []*toolUnit {
	var out []*toolUnit
	for _, k := range tt.order {
		out = append(out, tt.release(k, "")...)
	}
	tt.order = tt.order[:0]
	clear(tt.waiting)
	return out
}

func (tt *toolTracker) largest() string {
	best := ""
	for _, k := range tt.order {
		if h := tt.threads[k]; h != nil && (best == "" || h.bytes > tt.threads[best].bytes) {
			best = k
		}
	}
	return best
}

// first reports whether the session had no such text before.
func (tt *toolTracker) first(rec *schema.Record, what, text string) bool {
	d := xxhash.New()
	for _, s := range []string{rec.Platform, rec.SessionID, what, text} {
		d.WriteString(s)
		d.Write([]byte{0})
	}
	h := d.Sum64()
	if _, ok := tt.seen[h]; ok {
		return false
	}
	if len(tt.seen) >= maxSeen {
		clear(tt.seen)
	}
	tt.seen[h] = struct{}{}
	return true
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// toolChunks makes the chunk records of tool units whose content types
// are wanted: their parent is their exchange, else their message.
func (e *embedder) toolChunks(units []*toolUnit, emit func(c *schema.Record, head string)) (indexed, skipped int64) {
	for _, u := range units {
		var ctype, text string
		if u.command {
			ctype, text = schema.ContentCommand, selectOutput(u.text, false, commandBudget)
		} else {
			out := outputText(u.text)
			ctype = schema.ContentToolOutput
			// A JSON output's exit code may be in a member left out of
			// its text (Codex's metadata.exit_code).
			failed := u.isError || Failed(u.name, out) || out != u.text && exitCode(strings.TrimSpace(u.text))
			budget := outputBudget
			if failed {
				ctype, budget = schema.ContentToolError, errorBudget
			} else if fileTool(u.name) {
				continue
			}
			if !wants(e.types, ctype) {
				continue
			}
			text = selectOutput(out, failed, budget)
		}
		if !wants(e.types, ctype) {
			continue
		}
		indexed++
		if !hasWord(text) {
			skipped++
			continue
		}
		m := u.msg
		for i, sp := range e.chunker.Split(text) {
			c := chunkRecord(m, ctype, i, strings.TrimSpace(text[sp.Start:sp.End]))
			c.ID = schema.ID(m.Platform, "chunk", m.ID, ctype, strconv.Itoa(u.index), strconv.Itoa(i))
			if u.exchange != "" {
				c.ParentID = u.exchange
			}
			c.Tools = []schema.Tool{{Name: u.name, CallID: u.callID}}
			emit(c, u.head())
		}
	}
	return indexed, skipped
}

func wants(types []string, ctype string) bool {
	for _, t := range types {
		if t == ctype {
			return true
		}
	}
	return false
}
