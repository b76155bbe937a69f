package claudecode

import (
	"bytes"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// An incremental read starts at the open exchange's prompt (the watermark's
// resume point) and reads its lines again, marked as replayed, so that
// pos-normalize can rebuild the exchange with the lines that follow. When
// the first line after the watermark is itself a new prompt, the open
// exchange ended as the last run wrote it: reading it again would only
// write the same records again. skipReplay then starts the read at the
// watermark.
//
// One thing the skipped lines taught: pos-normalize merges the lines of an
// assistant message into the first one's record and points the children of
// the others at it; the new prompt's parent is usually such a line. The
// last run saved the merges still open at its end (the watermark context's
// "tail"), and the adapter points those parents itself; it saved the
// number of lines it read too ("lines"), the new lines' first number.

// group is the assistant message pos-normalize is merging in a thread:
// lines with the same API message id and request id, tool results between
// them; a prompt or another assistant message ends it.
type group struct {
	native, request, first string
	absorbed               []string
}

// follow tracks pos-normalize's merges over the messages emitted, in order.
func (fs *fileState) follow(rec *schema.Record) {
	key := rec.SessionID
	if rec.Agent != nil && rec.Agent.ID != "" {
		key += "\x00" + rec.Agent.ID
	}
	switch {
	case rec.Role == schema.RoleAssistant && rec.NativeID != "":
		if g := fs.groups[key]; g != nil && g.native == rec.NativeID && g.request == rec.RequestID {
			g.absorbed = append(g.absorbed, rec.ID)
			return
		}
		if fs.groups == nil {
			fs.groups = map[string]*group{}
		}
		fs.groups[key] = &group{native: rec.NativeID, request: rec.RequestID, first: rec.ID}
	case rec.Role == schema.RoleUser && (rec.ContentType == schema.ContentText || rec.ContentType == schema.ContentCommand):
		delete(fs.groups, key)
	}
}

// tail encodes the open merges for the watermark: "first:absorbed,absorbed"
// per thread, space-separated (ids are hex). Empty when there are none.
func (fs *fileState) tail() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(fs.groups)) {
		g := fs.groups[k]
		if len(g.absorbed) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.first)
		b.WriteByte(':')
		b.WriteString(strings.Join(g.absorbed, ","))
	}
	return b.String()
}

// parseTail decodes tail's encoding into absorbed id -> merged id.
func parseTail(s string) map[string]string {
	m := map[string]string{}
	for _, g := range strings.Fields(s) {
		first, absorbed, ok := strings.Cut(g, ":")
		if !ok {
			continue
		}
		for _, a := range strings.Split(absorbed, ",") {
			if a != "" {
				m[a] = first
			}
		}
	}
	return m
}

// skipReplay reports where a read can start instead of plan.Start: at the
// watermark (plan.Replay), with the number of lines before it, when the
// first line there is a prompt of the main thread and the last run saved
// its merges and its line count.
func skipReplay(f io.ReaderAt, fs *fileState, plan watermark.Plan) (start, lines int64, merged map[string]string, ok bool) {
	tail, saved := plan.Context["tail"]
	lines, err := strconv.ParseInt(plan.Context["lines"], 10, 64)
	if !saved || err != nil || fs.agentID != "" || plan.Replay <= plan.Start {
		return 0, 0, nil, false
	}
	next, ok := lineAt(f, plan.Replay)
	if !ok {
		return 0, 0, nil, false
	}
	var l line
	if parseLine(next, &l) != nil || !promptLine(&l) {
		return 0, 0, nil, false
	}
	return plan.Replay, lines, parseTail(tail), true
}

// lineAt reads the complete line at off, of at most 1 MB (a longer prompt,
// or an unfinished line, is read again with its exchange as before).
func lineAt(f io.ReaderAt, off int64) ([]byte, bool) {
	for _, size := range []int{64 << 10, 1 << 20} {
		buf := make([]byte, size)
		n, err := f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return nil, false
		}
		if end := bytes.IndexByte(buf[:n], '\n'); end >= 0 {
			return buf[:end], true
		}
		if n < size {
			return nil, false
		}
	}
	return nil, false
}

// IsPrompt reports whether a native Claude Code line is a prompt of a
// session's main thread, one that opens an exchange: a sync whose new
// lines start with one reads from its watermark, and any other start makes
// it read the open exchange again. For tools that write such lines (the
// bench's generator).
func IsPrompt(b []byte) bool {
	var l line
	return parseLine(bytes.TrimRight(b, "\r\n"), &l) == nil && promptLine(&l)
}

// promptLine reports whether a line is one userLine makes a prompt of the
// main thread: the user's text or command, not a tool result, not text
// Claude Code wrote itself.
func promptLine(l *line) bool {
	if text, human, ok := queuedPrompt(l); ok {
		role, ct, _ := classifyUserText(text)
		return human && !l.IsSidechain && l.AgentID == "" && role == schema.RoleUser && (ct == schema.ContentText || ct == schema.ContentCommand)
	}
	if l.Type != "user" || l.Message == nil || l.IsSidechain || l.AgentID != "" || l.IsMeta || l.IsCompactSummary {
		return false
	}
	c, err := parseContent(l.Message.Content)
	if err != nil {
		return false
	}
	text, results := userParts(c)
	if len(results) > 0 {
		return false
	}
	role, ct, _ := classifyUserText(text)
	return role == schema.RoleUser && (ct == schema.ContentText || ct == schema.ContentCommand)
}
