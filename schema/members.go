package schema

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pos-lake/pos/internal/jsontext"
)

// bigLine is the size of a line above which its strings are copied one by
// one: sliced from one copy of the line, the small ones (ids, names) would
// keep a copy of all of a huge record's line alive with its texts.
const bigLine = 1 << 20

// unmarshalMembers decodes a record member by member, with f's skipper and
// validator when it has them.
func unmarshalMembers(f *jsontext.Fast, data []byte, rec *Record) error {
	strs := jsontext.CopyText
	if len(data) > bigLine {
		strs = jsontext.CopyEach
	}
	d := jsontext.NewReader(data, f, strs)
	var fixed Repairs // what making the record's raw value strict changed
	if err := object(&d, func(d *jsontext.Reader, key string) error { return rec.member(d, key, &fixed) }); err != nil {
		return err
	}
	markRaw(rec, fixed)
	if err := d.End("the record"); err != nil {
		return err
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

// object decodes an object, calling fn for each member with a non-null
// value; fn consumes the value. Members whose value is null are skipped,
// as sonic leaves their fields unset.
func object(d *jsontext.Reader, fn func(d *jsontext.Reader, key string) error) error {
	return d.Object(func(key string) error {
		if d.Null() {
			return nil
		}
		return fn(d, key)
	})
}

// objects decodes an array of objects, each by member; on an error, the
// list holds the elements read before it.
func objects[T any](d *jsontext.Reader, member func(*T, *jsontext.Reader, string) error) ([]T, error) {
	var list []T
	err := d.Array(func() error {
		var v T
		if err := object(d, func(d *jsontext.Reader, key string) error { return member(&v, d, key) }); err != nil {
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

// member decodes the value of one top-level member, adding to fixed what
// making a raw value strict changed.
func (r *Record) member(d *jsontext.Reader, key string, fixed *Repairs) (err error) {
	switch key {
	case "schema":
		r.Schema, err = d.Str()
	case "kind":
		var k string
		k, err = d.Str()
		r.Kind = Kind(k)
	case "id":
		r.ID, err = d.Str()
	case "platform":
		r.Platform, err = d.Str()
	case "session_id":
		r.SessionID, err = d.Str()
	case "parent_id":
		r.ParentID, err = d.Str()
	case "ts":
		r.TS, err = d.Time()
		r.TS = r.TS.UTC()
	case "ts_precision":
		r.TSPrecision, err = d.Str()
	case "role":
		r.Role, err = d.Str()
	case "content_type":
		r.ContentType, err = d.Str()
	case "native_type":
		r.NativeType, err = d.Str()
	case "native_id":
		r.NativeID, err = d.Str()
	case "request_id":
		r.RequestID, err = d.Str()
	case "title":
		r.Title, err = d.Str()
	case "text":
		r.Text, err = d.Str()
	case "thinking":
		r.Thinking, err = d.Str()
	case "tools":
		r.Tools, err = objects(d, (*Tool).member)
	case "model":
		r.Model, err = d.Str()
	case "usage":
		r.Usage = reuse(r.Usage)
		err = object(d, r.Usage.member)
	case "advisor":
		r.Advisor = nil
		err = d.Array(func() error {
			var m ModelUsage
			if !d.Null() {
				if err := object(d, m.member); err != nil {
					return err
				}
			}
			r.Advisor = append(r.Advisor, m)
			return nil
		})
	case "agent":
		r.Agent = reuse(r.Agent)
		err = object(d, r.Agent.member)
	case "cwd":
		r.Cwd, err = d.Str()
	case "git_branch":
		r.GitBranch, err = d.Str()
	case "project":
		r.Project, err = d.Str()
	case "user":
		r.User, err = d.Str()
	case "machine":
		r.Machine, err = d.Str()
	case "files":
		r.Files, err = d.Strings()
	case "tags":
		r.Tags, err = d.Strings()
	case "decision":
		r.Decision = reuse(r.Decision)
		err = object(d, r.Decision.member)
	case "file_ref":
		r.FileRef = reuse(r.FileRef)
		err = object(d, r.FileRef.member)
	case "completeness":
		r.Completeness, err = d.Str()
	case "source":
		r.Source = reuse(r.Source)
		err = object(d, r.Source.member)
	case "adapter":
		r.Adapter = reuse(r.Adapter)
		err = object(d, r.Adapter.member)
	case "ingested_at":
		r.IngestedAt, err = d.Time()
		r.IngestedAt = r.IngestedAt.UTC()
	case "exchange":
		r.Exchange = reuse(r.Exchange)
		err = object(d, r.Exchange.member)
	case "session":
		r.Session = reuse(r.Session)
		err = object(d, r.Session.member)
	case "chunk":
		// Embeddings are arrays of floats: Fast's job when there is one.
		var val []byte
		if val, err = d.Raw(); err == nil {
			r.Chunk = reuse(r.Chunk)
			err = d.Fast().UnmarshalCopy(val, r.Chunk)
		}
	case "checkpoint":
		r.Checkpoint = reuse(r.Checkpoint)
		err = object(d, r.Checkpoint.member)
	case "meta":
		r.Meta, err = raw(d)
	case "raw":
		var f Repairs
		r.Raw, f, err = rawStrict(d)
		*fixed |= f
	default:
		var v json.RawMessage
		if v, err = raw(d); err == nil {
			r.Extra = append(r.Extra, Field{Key: validKey(key), Value: v})
		}
	}
	if err != nil {
		return fmt.Errorf("field %q: %w", key, err)
	}
	return nil
}

func (t *Tool) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "name":
		t.Name, err = d.Str()
	case "call_id":
		t.CallID, err = d.Str()
	case "input":
		t.Input, err = raw(d)
	case "output":
		t.Output, err = d.Str()
	case "is_error":
		t.IsError, err = d.Bool()
	default:
		err = d.SkipValid()
	}
	return err
}

func (u *Usage) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "input":
		u.Input, err = d.Int()
	case "output":
		u.Output, err = d.Int()
	case "cache_creation":
		u.CacheCreation, err = d.Int()
	case "cache_read":
		u.CacheRead, err = d.Int()
	case "cache_creation_1h":
		u.CacheCreation1h, err = d.Int()
	default:
		err = d.SkipValid()
	}
	return err
}

func (a *Agent) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "id":
		a.ID, err = d.Str()
	case "type":
		a.Type, err = d.Str()
	case "sidechain":
		a.Sidechain, err = d.Bool()
	default:
		err = d.SkipValid()
	}
	return err
}

func (s *Source) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "path":
		s.Path, err = d.Str()
	case "line":
		s.Line, err = d.Int()
	case "key":
		s.Key, err = d.Str()
	case "offset":
		s.Offset, err = d.Int()
	case "mtime":
		s.Mtime, err = d.Time()
	case "replay":
		s.Replay, err = d.Bool()
	case "altered":
		s.Altered, err = d.Str()
	default:
		err = d.SkipValid()
	}
	return err
}

func (a *Adapter) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "name":
		a.Name, err = d.Str()
	case "version":
		a.Version, err = d.Str()
	default:
		err = d.SkipValid()
	}
	return err
}

func (e *Exchange) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "number":
		e.Number, err = d.Int()
	case "ts_end":
		e.TSEnd, err = d.Time()
	case "prompt":
		e.Prompt, err = d.Str()
	case "response":
		e.Response, err = d.Str()
	case "message_count":
		e.MessageCount, err = d.Int()
	case "tool_count":
		e.ToolCount, err = d.Int()
	case "tools":
		e.Tools, err = d.Strings()
	case "models":
		e.Models, err = d.Strings()
	case "prompt_id":
		e.PromptID, err = d.Str()
	case "last_id":
		e.LastID, err = d.Str()
	case "commits":
		e.Commits, err = d.Strings()
	default:
		err = d.SkipValid()
	}
	return err
}

func (x *Decision) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "confidence":
		x.Confidence, err = d.Float()
	case "status":
		x.Status, err = d.Str()
	case "patterns":
		x.Patterns, err = d.Strings()
	case "exchange_id":
		x.ExchangeID, err = d.Str()
	case "message_id":
		x.MessageID, err = d.Str()
	case "context":
		x.Context, err = d.Str()
	default:
		err = d.SkipValid()
	}
	return err
}

func (f *FileRef) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "path":
		f.Path, err = d.Str()
	case "action":
		f.Action, err = d.Str()
	case "tool":
		f.Tool, err = d.Str()
	case "exchange_id":
		f.ExchangeID, err = d.Str()
	case "message_id":
		f.MessageID, err = d.Str()
	default:
		err = d.SkipValid()
	}
	return err
}

func (s *Session) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "slug":
		s.Slug, err = d.Str()
	case "title_source":
		s.TitleSource, err = d.Str()
	case "first_ts":
		s.FirstTS, err = d.Time()
	case "last_ts":
		s.LastTS, err = d.Time()
	case "message_count":
		s.MessageCount, err = d.Int()
	case "user_count":
		s.UserCount, err = d.Int()
	case "assistant_count":
		s.AssistantCnt, err = d.Int()
	case "tool_count":
		s.ToolCount, err = d.Int()
	case "exchange_count":
		s.ExchangeCount, err = d.Int()
	case "models":
		s.Models, err = objects(d, (*ModelUsage).member)
	case "labels":
		s.Labels, err = d.Strings()
	case "plan_id":
		s.PlanID, err = d.Str()
	case "compactions":
		s.Compactions, err = d.Int()
	case "subagents":
		s.Subagents, err = d.Int()
	case "pull_requests":
		s.PullRequests, err = d.Strings()
	default:
		err = d.SkipValid()
	}
	return err
}

func (m *ModelUsage) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "model":
		m.Model, err = d.Str()
	case "messages":
		m.Messages, err = d.Int()
	default:
		return m.Usage.member(d, key)
	}
	return err
}

func (c *Checkpoint) member(d *jsontext.Reader, key string) (err error) {
	switch key {
	case "platform":
		c.Platform, err = d.Str()
	case "path":
		c.Path, err = d.Str()
	case "size":
		c.Size, err = d.Int()
	case "resume":
		c.Resume, err = d.Int()
	case "seen":
		c.Seen, err = d.Int()
	case "mtime":
		c.Mtime, err = d.Time()
	case "inode":
		c.Inode, err = d.Uint()
	case "head":
		c.Head, err = d.Str()
	case "lines":
		c.Lines, err = d.Int()
	case "state":
		c.State, err = d.Str()
	case "lake":
		c.Lake, err = d.Str()
	case "context":
		c.Context = nil // {} is no context, as an empty one is not written
		err = object(d, func(d *jsontext.Reader, k string) error {
			v, err := d.Str()
			if c.Context == nil {
				c.Context = map[string]string{}
			}
			c.Context[k] = v
			return err
		})
	default:
		err = d.SkipValid()
	}
	return err
}
