package claudecode

import (
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/jsontext/fastjson"
)

// Lines are decoded by hand, with jsontext.Reader: as fast as sonic's
// compiled decoder on these lines (sonic's skipper does the bulk of both),
// without the compile of that decoder on first use, a cost in CPU that an
// incremental sync's extract would pay on its critical path. What the
// walker refuses goes to sonic, so that the two take the same lines; where
// both take a line they decode it the same (TestWalkCorpus on every corpus
// line, FuzzWalk on what it makes up).

// walkFast gives the walker sonic's skipper and validator: the package
// links sonic anyway, for the lines the walker refuses. It is set once and
// only read (the walker does not use its count of decoded records).
var walkFast = fastjson.New()

// str, integer and boolean decode a member's value into *p; a null leaves
// *p as it was, as sonic does.
func str(w *jsontext.Reader, p *string) error {
	if w.Null() {
		return nil
	}
	s, err := w.Str()
	*p = s
	return err
}

func integer(w *jsontext.Reader, p *int64) error {
	if w.Null() {
		return nil
	}
	v, err := w.Int()
	*p = v
	return err
}

func boolean(w *jsontext.Reader, p *bool) error {
	if w.Null() {
		return nil
	}
	v, err := w.Bool()
	*p = v
	return err
}

// raw keeps a member's value undecoded ("null" for null, as sonic does).
func raw(w *jsontext.Reader, p *rawJSON) error {
	v, err := w.Raw()
	*p = v
	return err
}

// object decodes an object member into *p, reusing what an earlier member
// of the same key decoded (as sonic does); null sets *p to nil.
func object[T any](w *jsontext.Reader, p **T, fn func(v *T, w *jsontext.Reader, key string) error) error {
	if w.Null() {
		*p = nil
		return nil
	}
	if *p == nil {
		*p = new(T)
	}
	v := *p
	return w.Object(func(key string) error { return fn(v, w, key) })
}

// objects decodes an array of objects into *p as sonic does: reusing
// *p's storage, a null element as the zero value, an empty array as an
// empty slice; null sets *p to nil.
func objects[T any](w *jsontext.Reader, p *[]T, fn func(v *T, w *jsontext.Reader, key string) error) error {
	if w.Null() {
		*p = nil
		return nil
	}
	vs := (*p)[:0]
	err := w.Array(func() error {
		vs = append(vs, *new(T))
		v := &vs[len(vs)-1]
		if w.Null() {
			return nil
		}
		return w.Object(func(key string) error { return fn(v, w, key) })
	})
	if vs == nil {
		vs = []T{}
	}
	*p = vs
	return err
}

// walkLine decodes a line as parseLine's sonic decoder does.
func walkLine(b []byte, l *line) error { return members(b, l.member) }

func (l *line) member(w *jsontext.Reader, key string) error {
	switch key {
	case "type":
		return str(w, &l.Type)
	case "subtype":
		return str(w, &l.Subtype)
	case "uuid":
		return str(w, &l.UUID)
	case "parentUuid":
		return str(w, &l.ParentUUID)
	case "logicalParentUuid":
		return str(w, &l.LogicalParentUUID)
	case "sessionId":
		return str(w, &l.SessionID)
	case "timestamp":
		return str(w, &l.Timestamp)
	case "cwd":
		return str(w, &l.Cwd)
	case "gitBranch":
		return str(w, &l.GitBranch)
	case "version":
		return str(w, &l.Version)
	case "slug":
		return str(w, &l.Slug)
	case "agentId":
		return str(w, &l.AgentID)
	case "isSidechain":
		return boolean(w, &l.IsSidechain)
	case "isMeta":
		return boolean(w, &l.IsMeta)
	case "isCompactSummary":
		return boolean(w, &l.IsCompactSummary)
	case "isApiErrorMessage":
		return boolean(w, &l.IsAPIError)
	case "requestId":
		return str(w, &l.RequestID)
	case "message":
		return object(w, &l.Message, (*message).member)
	case "summary":
		return str(w, &l.Summary)
	case "leafUuid":
		return str(w, &l.LeafUUID)
	case "content":
		return raw(w, &l.Content)
	case "compactMetadata":
		return raw(w, &l.CompactMetadata)
	case "snapshot":
		return object(w, &l.Snapshot, func(s *snapshot, w *jsontext.Reader, key string) error {
			if key == "timestamp" {
				return str(w, &s.Timestamp)
			}
			return w.Skip()
		})
	case "data":
		return object(w, &l.Data, func(d *progressData, w *jsontext.Reader, key string) error {
			switch key {
			case "type":
				return str(w, &d.Type)
			case "agentId":
				return str(w, &d.AgentID)
			case "message":
				return raw(w, &d.Message)
			}
			return w.Skip()
		})
	case "parentToolUseID":
		return str(w, &l.ParentToolUseID)
	case "operation":
		return str(w, &l.Operation)
	case "reason":
		return str(w, &l.Reason)
	case "customTitle":
		return str(w, &l.CustomTitle)
	case "agentName":
		return str(w, &l.AgentName)
	case "aiTitle":
		return str(w, &l.AITitle)
	case "title":
		return str(w, &l.Title)
	case "prUrl":
		return str(w, &l.PRURL)
	case "prNumber":
		return integer(w, &l.PRNumber)
	case "prRepository":
		return str(w, &l.PRRepository)
	case "attachment":
		return object(w, &l.Attachment, (*attachment).member)
	}
	return w.Skip()
}

func (m *message) member(w *jsontext.Reader, key string) error {
	switch key {
	case "role":
		return str(w, &m.Role)
	case "model":
		return str(w, &m.Model)
	case "id":
		return str(w, &m.ID)
	case "content":
		return raw(w, &m.Content)
	case "stop_reason":
		return str(w, &m.StopReason)
	case "usage":
		return object(w, &m.Usage, (*usage).member)
	}
	return w.Skip()
}

func (u *usage) member(w *jsontext.Reader, key string) error {
	switch key {
	case "speed":
		return str(w, &u.Speed)
	case "iterations":
		return objects(w, &u.Iterations, (*iteration).member)
	}
	return u.tokens.member(w, key)
}

func (t *tokens) member(w *jsontext.Reader, key string) error {
	switch key {
	case "input_tokens":
		return integer(w, &t.Input)
	case "output_tokens":
		return integer(w, &t.Output)
	case "cache_creation_input_tokens":
		return integer(w, &t.CacheCreation)
	case "cache_read_input_tokens":
		return integer(w, &t.CacheRead)
	case "cache_creation":
		return object(w, &t.Detail, (*cacheDetail).member)
	}
	return w.Skip()
}

func (d *cacheDetail) member(w *jsontext.Reader, key string) error {
	if key == "ephemeral_1h_input_tokens" {
		return integer(w, &d.Ephemeral1h)
	}
	return w.Skip()
}

func (it *iteration) member(w *jsontext.Reader, key string) error {
	switch key {
	case "type":
		return str(w, &it.Type)
	case "model":
		return str(w, &it.Model)
	}
	return it.tokens.member(w, key)
}

func (a *attachment) member(w *jsontext.Reader, key string) error {
	switch key {
	case "type":
		return str(w, &a.Type)
	case "prompt":
		return raw(w, &a.Prompt)
	case "commandMode":
		return str(w, &a.CommandMode)
	case "origin":
		return object(w, &a.Origin, func(o *origin, w *jsontext.Reader, key string) error {
			if key == "kind" {
				return str(w, &o.Kind)
			}
			return w.Skip()
		})
	}
	return w.Skip()
}

// walkBlocks decodes message.content's blocks as sonic does into []block.
func walkBlocks(b []byte, out *[]block) error {
	return walkFast.Walk(b, func(w *jsontext.Reader) error { return objects(w, out, (*block).member) })
}

func (b *block) member(w *jsontext.Reader, key string) error {
	switch key {
	case "type":
		return str(w, &b.Type)
	case "text":
		return str(w, &b.Text)
	case "thinking":
		return str(w, &b.Thinking)
	case "id":
		return str(w, &b.ID)
	case "name":
		return str(w, &b.Name)
	case "input":
		return raw(w, &b.Input)
	case "tool_use_id":
		return str(w, &b.ToolUseID)
	case "content":
		return raw(w, &b.Content)
	case "is_error":
		return boolean(w, &b.IsError)
	}
	return w.Skip()
}

// walkString decodes a JSON string as sonic does into a string.
func walkString(b []byte, s *string) error {
	return walkFast.Walk(b, func(w *jsontext.Reader) error { return str(w, s) })
}

// members calls fn with each member of a JSON object: a line, and the
// small decodes (a tool's input, a subagent's meta file).
func members(b []byte, fn func(w *jsontext.Reader, key string) error) error {
	return walkFast.Walk(b, func(w *jsontext.Reader) error {
		return w.Object(func(key string) error { return fn(w, key) })
	})
}

// stringMember returns the string value of an object's member (the last
// one of that key), or "" when b is not an object or the value is not a
// string.
func stringMember(b []byte, name string) string {
	var v string
	err := members(b, func(w *jsontext.Reader, key string) error {
		if key == name {
			return str(w, &v)
		}
		return w.Skip()
	})
	if err != nil {
		return ""
	}
	return v
}
