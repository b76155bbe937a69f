package schema

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/jsontext"
)

// AppendRecord appends the canonical JSON encoding of r to b, without a
// trailing newline. Known fields come first in a fixed order, then unknown
// fields sorted by key, so the same record always encodes to the same bytes.
// Strings are written as valid UTF-8 (invalid bytes become U+FFFD) and HTML
// characters are not escaped.
func AppendRecord(b []byte, r *Record) []byte {
	if r.Line != nil {
		return append(b, r.Line...)
	}
	w := newObj(b)
	schema := r.Schema
	if schema == "" {
		schema = Version
	}
	w.str("schema", schema)
	w.str("kind", string(r.Kind))
	w.str("id", r.ID)
	w.str("platform", r.Platform)
	w.str("session_id", r.SessionID)
	w.str("parent_id", r.ParentID)
	w.time("ts", r.TS)
	w.str("ts_precision", r.TSPrecision)
	w.str("role", r.Role)
	w.str("content_type", r.ContentType)
	w.str("native_type", r.NativeType)
	w.str("native_id", r.NativeID)
	w.str("request_id", r.RequestID)
	w.str("title", r.Title)
	w.str("text", r.Text)
	w.str("thinking", r.Thinking)
	if len(r.Tools) > 0 {
		w.key("tools")
		w.b = appendList(w.b, r.Tools, appendTool)
	}
	w.str("model", r.Model)
	if r.Usage != nil {
		w.key("usage")
		w.b = appendUsage(w.b, r.Usage)
	}
	if len(r.Advisor) > 0 {
		w.key("advisor")
		w.b = appendModelUsages(w.b, r.Advisor, false)
	}
	if a := r.Agent; a != nil && (a.ID != "" || a.Type != "" || a.Sidechain) {
		o := w.object("agent")
		o.str("id", a.ID)
		o.str("type", a.Type)
		o.boolean("sidechain", a.Sidechain)
		w.end(o)
	}
	w.str("cwd", r.Cwd)
	w.str("git_branch", r.GitBranch)
	w.str("project", r.Project)
	w.str("user", r.User)
	w.str("machine", r.Machine)
	w.strs("files", r.Files)
	w.strs("tags", r.Tags)
	w.str("completeness", r.Completeness)
	if s := r.Source; s != nil {
		o := w.object("source")
		o.strAlways("path", s.Path)
		o.int("line", s.Line)
		o.str("key", s.Key)
		o.intAlways("offset", s.Offset)
		o.time("mtime", s.Mtime)
		o.boolean("replay", s.Replay)
		o.str("altered", s.Altered)
		w.end(o)
	}
	if a := r.Adapter; a != nil {
		o := w.object("adapter")
		o.strAlways("name", a.Name)
		o.strAlways("version", a.Version)
		w.end(o)
	}
	w.time("ingested_at", r.IngestedAt)
	if e := r.Exchange; e != nil {
		o := w.object("exchange")
		o.intAlways("number", e.Number)
		o.time("ts_end", e.TSEnd)
		o.str("prompt", e.Prompt)
		o.str("response", e.Response)
		o.intAlways("message_count", e.MessageCount)
		o.intAlways("tool_count", e.ToolCount)
		o.strs("tools", e.Tools)
		o.strs("models", e.Models)
		o.str("prompt_id", e.PromptID)
		o.str("last_id", e.LastID)
		o.strs("commits", e.Commits)
		w.end(o)
	}
	if s := r.Session; s != nil {
		o := w.object("session")
		o.str("slug", s.Slug)
		o.str("title_source", s.TitleSource)
		o.time("first_ts", s.FirstTS)
		o.time("last_ts", s.LastTS)
		o.intAlways("message_count", s.MessageCount)
		o.intAlways("user_count", s.UserCount)
		o.intAlways("assistant_count", s.AssistantCnt)
		o.intAlways("tool_count", s.ToolCount)
		o.intAlways("exchange_count", s.ExchangeCount)
		if len(s.Models) > 0 {
			o.key("models")
			o.b = appendModelUsages(o.b, s.Models, true)
		}
		o.strs("labels", s.Labels)
		o.str("plan_id", s.PlanID)
		o.int("compactions", s.Compactions)
		o.int("subagents", s.Subagents)
		o.strs("pull_requests", s.PullRequests)
		w.end(o)
	}
	if c := r.Chunk; c != nil {
		o := w.object("chunk")
		o.intAlways("index", c.Index)
		o.str("model", c.Model)
		o.int("dim", c.Dim)
		if len(c.Embedding) > 0 {
			o.key("embedding")
			o.b = appendList(o.b, c.Embedding, appendFloat32)
		}
		o.str("provider", c.Provider)
		o.str("base_url", c.BaseURL)
		w.end(o)
	}
	if c := r.Checkpoint; c != nil {
		w.key("checkpoint")
		w.b = AppendCheckpoint(w.b, c)
	}
	if d := r.Decision; d != nil {
		o := w.object("decision")
		o.key("confidence")
		o.b = strconv.AppendFloat(o.b, d.Confidence, 'g', -1, 64)
		o.strAlways("status", d.Status)
		o.strs("patterns", d.Patterns)
		o.str("exchange_id", d.ExchangeID)
		o.str("message_id", d.MessageID)
		o.str("context", d.Context)
		w.end(o)
	}
	if f := r.FileRef; f != nil {
		o := w.object("file_ref")
		o.strAlways("path", f.Path)
		o.strAlways("action", f.Action)
		o.str("tool", f.Tool)
		o.str("exchange_id", f.ExchangeID)
		o.str("message_id", f.MessageID)
		w.end(o)
	}
	w.raw("meta", r.Meta)
	w.raw("raw", r.Raw)
	if len(r.Extra) > 0 {
		extra := r.Extra
		if !slices.IsSortedFunc(extra, cmpField) {
			extra = slices.Clone(extra)
			slices.SortStableFunc(extra, cmpField)
		}
		for _, f := range extra {
			if omitRaw(f.Value) {
				continue
			}
			w.anyKey(f.Key)
			w.b = append(w.b, f.Value...)
		}
	}
	return w.close()
}

func cmpField(a, b Field) int { return strings.Compare(a.Key, b.Key) }

func appendTool(b []byte, t Tool) []byte {
	o := newObj(b)
	o.str("name", t.Name)
	o.str("call_id", t.CallID)
	o.raw("input", t.Input)
	o.str("output", t.Output)
	o.boolean("is_error", t.IsError)
	return o.close()
}

// appendModelUsages writes a list of models' usage: a session's models
// (messages always, no 1-hour share) or a record's advisor calls (each
// field only when set but the four counts).
func appendModelUsages(b []byte, list []ModelUsage, session bool) []byte {
	return appendList(b, list, func(b []byte, m ModelUsage) []byte {
		o := newObj(b)
		o.strAlways("model", m.Model)
		if session {
			o.intAlways("messages", m.Messages)
		} else {
			o.int("messages", m.Messages)
		}
		o.intAlways("input", m.Input)
		o.intAlways("output", m.Output)
		o.intAlways("cache_creation", m.CacheCreation)
		o.intAlways("cache_read", m.CacheRead)
		if !session {
			o.int("cache_creation_1h", m.CacheCreation1h)
		}
		return o.close()
	})
}

func appendUsage(b []byte, u *Usage) []byte {
	o := newObj(b)
	o.intAlways("input", u.Input)
	o.intAlways("output", u.Output)
	o.intAlways("cache_creation", u.CacheCreation)
	o.intAlways("cache_read", u.CacheRead)
	o.int("cache_creation_1h", u.CacheCreation1h)
	return o.close()
}

// obj appends the members of one JSON object, managing the commas.
type obj struct {
	b []byte
	n int
}

// newObj starts an object after b.
func newObj(b []byte) obj { return obj{b: append(b, '{')} }

// close ends the object and returns the bytes with it.
func (o *obj) close() []byte { return append(o.b, '}') }

// object starts the member k, an object, whose members are then appended
// to the obj returned and which end closes.
func (o *obj) object(k string) obj {
	o.key(k)
	return newObj(o.b)
}

// end closes in, a member object started by object.
func (o *obj) end(in obj) { o.b = in.close() }

// appendList appends list as a JSON array, each element by elem.
func appendList[T any](b []byte, list []T, elem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, v)
	}
	return append(b, ']')
}

// next starts a member: a comma after the first.
func (o *obj) next() {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
}

// key appends a member's key that needs no escaping: the names this file
// writes. A key read from input goes through anyKey.
func (o *obj) key(k string) {
	o.next()
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

// anyKey appends a key of any content, escaped.
func (o *obj) anyKey(k string) {
	o.next()
	o.b = jsontext.AppendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *obj) str(k, v string) {
	if v != "" {
		o.strAlways(k, v)
	}
}

func (o *obj) strAlways(k, v string) {
	o.key(k)
	o.b = jsontext.AppendString(o.b, v)
}

func (o *obj) strs(k string, v []string) {
	if len(v) == 0 {
		return
	}
	o.key(k)
	o.b = appendList(o.b, v, jsontext.AppendString)
}

func (o *obj) int(k string, v int64) {
	if v != 0 {
		o.intAlways(k, v)
	}
}

func (o *obj) intAlways(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *obj) boolean(k string, v bool) {
	if v {
		o.key(k)
		o.b = append(o.b, "true"...)
	}
}

func (o *obj) time(k string, t time.Time) {
	if t.IsZero() {
		return
	}
	o.key(k)
	o.b = append(o.b, '"')
	o.b = AppendTime(o.b, t)
	o.b = append(o.b, '"')
}

// raw appends v verbatim; an empty value or JSON null is omitted.
func (o *obj) raw(k string, v json.RawMessage) {
	if omitRaw(v) {
		return
	}
	o.key(k)
	o.b = append(o.b, v...)
}

// omitRaw reports whether a raw value is left out: empty, or JSON null.
func omitRaw(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }

// AppendTime appends t in UTC as RFC 3339 with millisecond precision, the
// precision every platform writes and the lake stores.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	}
	ms := t.Nanosecond() / 1e6
	return append(b,
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

func appendFloat32(b []byte, f float32) []byte {
	// Zero is written "0" whatever its sign: sonic reads "-0" as 0 and
	// Go's parser as -0, and a record must read the same with either.
	if f == 0 || math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, float64(f), 'g', -1, 32)
}

// AppendCheckpoint appends a watermark's JSON object to b, as a checkpoint
// record carries it and the state file holds it.
func AppendCheckpoint(b []byte, c *Checkpoint) []byte {
	o := newObj(b)
	o.strAlways("platform", c.Platform)
	o.strAlways("path", c.Path)
	o.intAlways("size", c.Size)
	o.intAlways("resume", c.Resume)
	o.intAlways("seen", c.Seen)
	if !c.Mtime.IsZero() {
		// Full precision: the next run compares it with the file's mtime.
		o.key("mtime")
		o.b = append(o.b, '"')
		o.b = c.Mtime.UTC().AppendFormat(o.b, time.RFC3339Nano)
		o.b = append(o.b, '"')
	}
	if c.Inode != 0 {
		o.key("inode")
		o.b = strconv.AppendUint(o.b, c.Inode, 10)
	}
	o.str("head", c.Head)
	o.intAlways("lines", c.Lines)
	if len(c.Context) > 0 {
		co := o.object("context")
		for _, k := range slices.Sorted(maps.Keys(c.Context)) {
			co.anyKey(k)
			co.b = jsontext.AppendString(co.b, c.Context[k])
		}
		o.end(co)
	}
	o.str("state", c.State)
	o.str("lake", c.Lake)
	return o.close()
}
