package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"
)

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

// unmarshalMembers decodes a record member by member, with f's skipper and
// validator when it has them.
func unmarshalMembers(f *Fast, data []byte, rec *Record) error {
	d := &mdec{scanner: scanner{b: data, fast: f}}
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

// objects decodes an array of objects, each by member; on an error, the
// list holds the elements read before it.
func objects[T any](d *mdec, member func(*T, *mdec, string) error) ([]T, error) {
	var list []T
	err := d.array(func(d *mdec) error {
		var v T
		if err := d.object(func(d *mdec, key string) error { return member(&v, d, key) }); err != nil {
			return err
		}
		list = append(list, v)
		return nil
	})
	return list, err
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
		r.Tools, err = objects(d, (*Tool).member)
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
			err = d.fast.unmarshalNested(val, r.Chunk)
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
		s.Models, err = objects(d, (*ModelUsage).member)
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
