package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A process decodes its first records member by member, in Go: sonic's
// decoder for Record is compiled on first use, ~40 ms of CPU that a stage
// of a small incremental sync (a few hundred KB) spends in every process.
// Past memberBudget bytes, Unmarshal uses sonic, which is faster in bulk
// and falls back to this decoder for what it declines.
const memberBudgetBytes = 16 << 20

var memberBudget atomic.Int64

func init() { memberBudget.Store(memberBudgetBytes) }

// mdec walks one JSON value. s is b as a string: strings without escapes
// are substrings of it, so a record's strings share one copy of its line,
// as sonic's do; with clone, s is b itself, and they are copied.
type mdec struct {
	scanner
	s     string
	clone bool
	// rawFixed is what making the record's raw value strict changed.
	rawFixed Repairs
}

// bigLine is the size of a line above which its strings are copied one by
// one: sliced from one copy of the line, the small ones (ids, names) would
// keep a copy of all of a huge record's line alive with its texts.
const bigLine = 1 << 20

func unmarshalMembers(data []byte, rec *Record) error {
	d := &mdec{scanner: scanner{b: data}}
	if len(data) > bigLine {
		d.s, d.clone = unsafe.String(unsafe.SliceData(data), len(data)), true
	} else {
		d.s = string(data)
	}
	if err := d.object(rec.member); err != nil {
		return err
	}
	markRaw(rec, d.rawFixed)
	d.ws()
	if d.i != len(d.b) {
		return d.errf("trailing data after the record")
	}
	if rec.Kind == "" {
		return errors.New(`record has no "kind"`)
	}
	if rec.Schema == "" {
		rec.Schema = Version
	} else if len(rec.Schema) < 4 || rec.Schema[:4] != "pos/" {
		return fmt.Errorf("unknown schema %q", rec.Schema)
	}
	return nil
}

// reuse returns p, or a new T when p is nil. A member given twice decodes
// into what the first gave, as sonic and encoding/json do (an object
// without the first's fields keeps them).
func reuse[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

// member decodes the value of one top-level member.
func (r *Record) member(d *mdec, key string) (err error) {
	switch key {
	case "schema":
		r.Schema, err = d.str()
	case "kind":
		var k string
		k, err = d.str()
		r.Kind = Kind(k)
	case "id":
		r.ID, err = d.str()
	case "platform":
		r.Platform, err = d.str()
	case "session_id":
		r.SessionID, err = d.str()
	case "parent_id":
		r.ParentID, err = d.str()
	case "ts":
		r.TS, err = d.time()
		r.TS = r.TS.UTC()
	case "ts_precision":
		r.TSPrecision, err = d.str()
	case "role":
		r.Role, err = d.str()
	case "content_type":
		r.ContentType, err = d.str()
	case "native_type":
		r.NativeType, err = d.str()
	case "native_id":
		r.NativeID, err = d.str()
	case "request_id":
		r.RequestID, err = d.str()
	case "title":
		r.Title, err = d.str()
	case "text":
		r.Text, err = d.str()
	case "thinking":
		r.Thinking, err = d.str()
	case "tools":
		r.Tools = nil
		err = d.array(func(d *mdec) error {
			var t Tool
			if err := d.object(t.member); err != nil {
				return err
			}
			r.Tools = append(r.Tools, t)
			return nil
		})
	case "model":
		r.Model, err = d.str()
	case "usage":
		r.Usage = reuse(r.Usage)
		err = d.object(r.Usage.member)
	case "advisor":
		r.Advisor = nil
		err = d.array(func(d *mdec) error {
			var m ModelUsage
			if !d.null() {
				if err := d.object(m.member); err != nil {
					return err
				}
			}
			r.Advisor = append(r.Advisor, m)
			return nil
		})
	case "agent":
		r.Agent = reuse(r.Agent)
		err = d.object(r.Agent.member)
	case "cwd":
		r.Cwd, err = d.str()
	case "git_branch":
		r.GitBranch, err = d.str()
	case "project":
		r.Project, err = d.str()
	case "user":
		r.User, err = d.str()
	case "machine":
		r.Machine, err = d.str()
	case "files":
		r.Files, err = d.strings()
	case "tags":
		r.Tags, err = d.strings()
	case "decision":
		r.Decision = reuse(r.Decision)
		err = d.object(r.Decision.member)
	case "file_ref":
		r.FileRef = reuse(r.FileRef)
		err = d.object(r.FileRef.member)
	case "completeness":
		r.Completeness, err = d.str()
	case "source":
		r.Source = reuse(r.Source)
		err = d.object(r.Source.member)
	case "adapter":
		r.Adapter = reuse(r.Adapter)
		err = d.object(r.Adapter.member)
	case "ingested_at":
		r.IngestedAt, err = d.time()
		r.IngestedAt = r.IngestedAt.UTC()
	case "exchange":
		r.Exchange = reuse(r.Exchange)
		err = d.object(r.Exchange.member)
	case "session":
		r.Session = reuse(r.Session)
		err = d.object(r.Session.member)
	case "chunk":
		// Embeddings are arrays of floats: Fast's job when there is one.
		var val []byte
		if val, err = d.value(); err == nil {
			r.Chunk = reuse(r.Chunk)
			err = unmarshalNested(val, r.Chunk)
		}
	case "checkpoint":
		r.Checkpoint = reuse(r.Checkpoint)
		err = d.object(r.Checkpoint.member)
	case "meta":
		r.Meta, err = d.raw()
	case "raw":
		var fixed Repairs
		r.Raw, fixed, err = d.rawStrict()
		d.rawFixed |= fixed
	default:
		var v json.RawMessage
		if v, err = d.raw(); err == nil {
			r.Extra = append(r.Extra, Field{Key: validKey(key), Value: v})
		}
	}
	if err != nil {
		return fmt.Errorf("field %q: %w", key, err)
	}
	return nil
}

func (t *Tool) member(d *mdec, key string) (err error) {
	switch key {
	case "name":
		t.Name, err = d.str()
	case "call_id":
		t.CallID, err = d.str()
	case "input":
		t.Input, err = d.raw()
	case "output":
		t.Output, err = d.str()
	case "is_error":
		t.IsError, err = d.bool()
	default:
		err = d.skipValue()
	}
	return err
}

func (u *Usage) member(d *mdec, key string) (err error) {
	switch key {
	case "input":
		u.Input, err = d.int()
	case "output":
		u.Output, err = d.int()
	case "cache_creation":
		u.CacheCreation, err = d.int()
	case "cache_read":
		u.CacheRead, err = d.int()
	case "cache_creation_1h":
		u.CacheCreation1h, err = d.int()
	default:
		err = d.skipValue()
	}
	return err
}

func (a *Agent) member(d *mdec, key string) (err error) {
	switch key {
	case "id":
		a.ID, err = d.str()
	case "type":
		a.Type, err = d.str()
	case "sidechain":
		a.Sidechain, err = d.bool()
	default:
		err = d.skipValue()
	}
	return err
}

func (s *Source) member(d *mdec, key string) (err error) {
	switch key {
	case "path":
		s.Path, err = d.str()
	case "line":
		s.Line, err = d.int()
	case "key":
		s.Key, err = d.str()
	case "offset":
		s.Offset, err = d.int()
	case "mtime":
		s.Mtime, err = d.time()
	case "replay":
		s.Replay, err = d.bool()
	case "altered":
		s.Altered, err = d.str()
	default:
		err = d.skipValue()
	}
	return err
}

func (a *Adapter) member(d *mdec, key string) (err error) {
	switch key {
	case "name":
		a.Name, err = d.str()
	case "version":
		a.Version, err = d.str()
	default:
		err = d.skipValue()
	}
	return err
}

func (e *Exchange) member(d *mdec, key string) (err error) {
	switch key {
	case "number":
		e.Number, err = d.int()
	case "ts_end":
		e.TSEnd, err = d.time()
	case "prompt":
		e.Prompt, err = d.str()
	case "response":
		e.Response, err = d.str()
	case "message_count":
		e.MessageCount, err = d.int()
	case "tool_count":
		e.ToolCount, err = d.int()
	case "tools":
		e.Tools, err = d.strings()
	case "models":
		e.Models, err = d.strings()
	case "prompt_id":
		e.PromptID, err = d.str()
	case "last_id":
		e.LastID, err = d.str()
	case "commits":
		e.Commits, err = d.strings()
	default:
		err = d.skipValue()
	}
	return err
}

func (x *Decision) member(d *mdec, key string) (err error) {
	switch key {
	case "confidence":
		x.Confidence, err = d.float()
	case "status":
		x.Status, err = d.str()
	case "patterns":
		x.Patterns, err = d.strings()
	case "exchange_id":
		x.ExchangeID, err = d.str()
	case "message_id":
		x.MessageID, err = d.str()
	case "context":
		x.Context, err = d.str()
	default:
		err = d.skipValue()
	}
	return err
}

func (f *FileRef) member(d *mdec, key string) (err error) {
	switch key {
	case "path":
		f.Path, err = d.str()
	case "action":
		f.Action, err = d.str()
	case "tool":
		f.Tool, err = d.str()
	case "exchange_id":
		f.ExchangeID, err = d.str()
	case "message_id":
		f.MessageID, err = d.str()
	default:
		err = d.skipValue()
	}
	return err
}

func (s *Session) member(d *mdec, key string) (err error) {
	switch key {
	case "slug":
		s.Slug, err = d.str()
	case "title_source":
		s.TitleSource, err = d.str()
	case "first_ts":
		s.FirstTS, err = d.time()
	case "last_ts":
		s.LastTS, err = d.time()
	case "message_count":
		s.MessageCount, err = d.int()
	case "user_count":
		s.UserCount, err = d.int()
	case "assistant_count":
		s.AssistantCnt, err = d.int()
	case "tool_count":
		s.ToolCount, err = d.int()
	case "exchange_count":
		s.ExchangeCount, err = d.int()
	case "models":
		s.Models = nil
		err = d.array(func(d *mdec) error {
			var m ModelUsage
			if err := d.object(m.member); err != nil {
				return err
			}
			s.Models = append(s.Models, m)
			return nil
		})
	case "labels":
		s.Labels, err = d.strings()
	case "plan_id":
		s.PlanID, err = d.str()
	case "compactions":
		s.Compactions, err = d.int()
	case "subagents":
		s.Subagents, err = d.int()
	case "pull_requests":
		s.PullRequests, err = d.strings()
	default:
		err = d.skipValue()
	}
	return err
}

func (m *ModelUsage) member(d *mdec, key string) (err error) {
	switch key {
	case "model":
		m.Model, err = d.str()
	case "messages":
		m.Messages, err = d.int()
	default:
		return m.Usage.member(d, key)
	}
	return err
}

func (c *Checkpoint) member(d *mdec, key string) (err error) {
	switch key {
	case "platform":
		c.Platform, err = d.str()
	case "path":
		c.Path, err = d.str()
	case "size":
		c.Size, err = d.int()
	case "resume":
		c.Resume, err = d.int()
	case "seen":
		c.Seen, err = d.int()
	case "mtime":
		c.Mtime, err = d.time()
	case "inode":
		c.Inode, err = d.uint()
	case "head":
		c.Head, err = d.str()
	case "lines":
		c.Lines, err = d.int()
	case "state":
		c.State, err = d.str()
	case "lake":
		c.Lake, err = d.str()
	case "context":
		c.Context = nil // {} is no context, as an empty one is not written
		err = d.object(func(d *mdec, k string) error {
			v, err := d.str()
			if c.Context == nil {
				c.Context = map[string]string{}
			}
			c.Context[k] = v
			return err
		})
	default:
		err = d.skipValue()
	}
	return err
}

// object decodes an object, calling fn for each member with a non-null
// value; fn consumes the value. Members whose value is null are skipped,
// as sonic leaves their fields unset.
func (d *mdec) object(fn func(d *mdec, key string) error) error {
	return d.members(func(key string) error {
		if d.null() {
			return nil
		}
		return fn(d, key)
	})
}

// members decodes an object, calling fn with each member's key; fn
// consumes the value, null included.
func (d *mdec) members(fn func(key string) error) error {
	d.ws()
	if !d.eat('{') {
		return d.errf("expected a JSON object")
	}
	d.ws()
	if d.eat('}') {
		return nil
	}
	for {
		d.ws()
		key, err := d.str()
		if err != nil {
			return err
		}
		d.ws()
		if !d.eat(':') {
			return d.errf("expected ':' after object key")
		}
		d.ws()
		if err := fn(key); err != nil {
			return err
		}
		d.ws()
		if d.eat(',') {
			continue
		}
		if d.eat('}') {
			return nil
		}
		return d.errf("expected ',' or '}' after object member")
	}
}

// array decodes an array, calling fn for each element; fn consumes it.
func (d *mdec) array(fn func(d *mdec) error) error {
	d.ws()
	if !d.eat('[') {
		return d.errf("expected a JSON array")
	}
	d.ws()
	if d.eat(']') {
		return nil
	}
	for {
		d.ws()
		if err := fn(d); err != nil {
			return err
		}
		d.ws()
		if d.eat(',') {
			continue
		}
		if d.eat(']') {
			return nil
		}
		return d.errf("expected ',' or ']' after array element")
	}
}

// null consumes a null literal if one is next.
func (d *mdec) null() bool {
	if len(d.b)-d.i >= 4 && d.s[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// str decodes a string (null: ""). Invalid UTF-8 is kept, as sonic keeps
// it: the encoder writes each invalid byte as U+FFFD.
func (d *mdec) str() (string, error) {
	if d.null() {
		return "", nil
	}
	start, end, esc, err := d.scanner.str()
	if err != nil {
		return "", err
	}
	if !esc {
		if d.clone {
			return strings.Clone(d.s[start:end]), nil
		}
		return d.s[start:end], nil
	}
	return unescape(d.b[start:end])
}

func (d *mdec) strings() ([]string, error) {
	var out []string
	err := d.array(func(d *mdec) error {
		s, err := d.str()
		out = append(out, s)
		return err
	})
	return out, err
}

// number returns the next token if it is a JSON number.
func (d *mdec) number() (string, error) {
	j := d.literalEnd()
	if !ValidNumber(d.b[d.i:j]) {
		return "", d.errf("expected a number")
	}
	tok := d.s[d.i:j]
	d.i = j
	return tok, nil
}

func (d *mdec) int() (int64, error) {
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(tok, 10, 64)
}

func (d *mdec) uint() (uint64, error) {
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(tok, 10, 64)
}

func (d *mdec) float() (float64, error) {
	tok, err := d.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(tok, 64)
}

func (d *mdec) bool() (bool, error) {
	switch {
	case len(d.b)-d.i >= 4 && d.s[d.i:d.i+4] == "true":
		d.i += 4
		return true, nil
	case len(d.b)-d.i >= 5 && d.s[d.i:d.i+5] == "false":
		d.i += 5
		return false, nil
	}
	return false, d.errf("expected true or false")
}

// time decodes an RFC 3339 time string as time.Time's UnmarshalJSON
// (sonic's) does, strictly; "" is the zero time.
func (d *mdec) time() (t time.Time, err error) {
	s, err := d.str()
	if err != nil || s == "" {
		return time.Time{}, err
	}
	if err = t.UnmarshalText([]byte(s)); err == nil && !TimeInRange(t) {
		err = fmt.Errorf("time %q is out of range (years 0 to 9999 in UTC)", s)
	}
	return t, err
}

// TimeInRange reports whether a time's UTC year is 0 to 9999, the times a
// record can hold: RFC 3339 writes no other.
func TimeInRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// timesInRange reports whether every time of a record is in range.
func timesInRange(r *Record) bool {
	ok := TimeInRange(r.TS) && TimeInRange(r.IngestedAt)
	if r.Source != nil {
		ok = ok && TimeInRange(r.Source.Mtime)
	}
	if r.Exchange != nil {
		ok = ok && TimeInRange(r.Exchange.TSEnd)
	}
	if r.Session != nil {
		ok = ok && TimeInRange(r.Session.FirstTS) && TimeInRange(r.Session.LastTS)
	}
	if r.Checkpoint != nil {
		ok = ok && TimeInRange(r.Checkpoint.Mtime)
	}
	return ok
}

// value moves past one JSON value and returns it.
func (d *mdec) value() ([]byte, error) {
	start := d.i
	if err := d.skip(); err != nil {
		return nil, err
	}
	return d.b[start:d.i], nil
}

// raw returns a validated, strict copy of the next value (see
// strictValue).
func (d *mdec) raw() (json.RawMessage, error) {
	v, _, err := d.rawStrict()
	return v, err
}

// rawStrict is raw, also saying what making the value strict changed.
func (d *mdec) rawStrict() (json.RawMessage, Repairs, error) {
	val, err := d.value()
	if err != nil {
		return nil, 0, err
	}
	return rawValue(val)
}

// skipValue moves past a value this build does not decode; it must still
// be valid JSON.
func (d *mdec) skipValue() error {
	val, err := d.value()
	if err == nil && !validJSON(val) {
		err = invalidValue(val)
	}
	return err
}

// ValidNumber reports whether b is a JSON number.
func ValidNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

// unescape decodes the body of a JSON string that holds escapes, as
// encoding/json does: a lone surrogate becomes U+FFFD.
func unescape(b []byte) (string, error) {
	out := make([]byte, 0, len(b))
	for {
		k := bytes.IndexByte(b, '\\')
		if k < 0 {
			out = append(out, b...)
			break
		}
		out = append(out, b[:k]...)
		if k+1 >= len(b) {
			return "", errors.New("invalid escape at the end of a string")
		}
		c := b[k+1]
		b = b[k+2:]
		switch c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := Hex4(b)
			if !ok {
				return "", errors.New(`invalid \u escape in a string`)
			}
			b = b[4:]
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if len(b) >= 6 && b[0] == '\\' && b[1] == 'u' {
					if lo, ok := Hex4(b[2:]); ok {
						if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
							r2 = dec
							b = b[6:]
						}
					}
				}
				r = r2
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", fmt.Errorf("invalid escape %q in a string", "\\"+string(c))
		}
	}
	return string(out), nil
}

// Hex4 decodes the four hex digits of a \u escape at the start of b.
func Hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// validKey is key as AppendString writes it: each invalid UTF-8 byte made
// U+FFFD. Unknown members are written sorted by key, so a record keeps
// their order only if it sorts them by the keys it writes.
func validKey(key string) string {
	if utf8.ValidString(key) {
		return key
	}
	var b strings.Builder
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(key[i : i+size])
		}
		i += size
	}
	return b.String()
}
