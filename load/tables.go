package load

import (
	"encoding/json"
	"os"
	"unsafe"

	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
)

// tableFor routes a record kind to its table.
func tableFor(k schema.Kind) string {
	switch k {
	case schema.KindRaw:
		return layout.TableRaw
	case schema.KindMessage:
		return layout.TableMessages
	case schema.KindExchange:
		return layout.TableExchanges
	case schema.KindSession:
		return layout.TableSessions
	case schema.KindDocument:
		return layout.TableDocuments
	case schema.KindDecision:
		return layout.TableDecisions
	case schema.KindFileRef:
		return layout.TableFileRefs
	case schema.KindChunk:
		return layout.TableChunks
	}
	return layout.TableOther
}

// value is *p, or T's zero value when p is nil: a record's optional parts
// read as empty.
func value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// tableRows is how a table's records become rows and its part files are
// written: one row type for both. Postings and summaries files have
// writers of their own (postingsFile, writeSummaryFile).
type tableRows struct {
	row       func(r *schema.Record, hash string) any // nil where rows are made apart
	newWriter func(f *os.File) rowWriter
}

// rowsOf ties a table's row builder to a writer of the same row type.
func rowsOf[R any](row func(*schema.Record, string) R) tableRows {
	t := tableRows{newWriter: func(f *os.File) rowWriter { return newTypedWriter[R](f) }}
	if row != nil {
		t.row = func(r *schema.Record, hash string) any { return row(r, hash) }
	}
	return t
}

var tablesRows = map[string]tableRows{
	layout.TableRaw:       rowsOf(rawRow),
	layout.TableMessages:  rowsOf(messageRow),
	layout.TableExchanges: rowsOf(exchangeRow),
	layout.TableSessions:  rowsOf(sessionRow),
	layout.TableDocuments: rowsOf(documentRow),
	layout.TableDecisions: rowsOf(decisionRow),
	layout.TableFileRefs:  rowsOf(fileRefRow),
	layout.TableChunks:    rowsOf[layout.ChunkRow](nil), // chunkRow needs its part file's index
	layout.TableOther:     rowsOf(otherRow),
}

// rowsFor is a table's tableRows; a table this build does not know keeps
// its records whole, as other's rows.
func rowsFor(table string) tableRows {
	if t, ok := tablesRows[table]; ok {
		return t
	}
	return tablesRows[layout.TableOther]
}

// extraJSON renders a record's unknown fields as one JSON object.
func extraJSON(r *schema.Record) string {
	if len(r.Extra) == 0 {
		return ""
	}
	b := []byte{'{'}
	for i, f := range r.Extra {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(b, f.Key)
		b = append(b, ':')
		b = append(b, f.Value...)
	}
	return string(append(b, '}'))
}

// rawString views JSON bytes as a string without copying: the record they
// belong to is not changed after it is turned into a row.
func rawString(m json.RawMessage) string { return unsafe.String(unsafe.SliceData(m), len(m)) }

// place is a record's columns of where it was made.
func place(r *schema.Record) layout.Place {
	return layout.Place{Cwd: r.Cwd, GitBranch: r.GitBranch, Project: r.Project, User: r.User, Machine: r.Machine}
}

// tokens is a message's or an exchange's token counts.
func tokens(u schema.Usage) layout.Tokens {
	return layout.Tokens{InputTokens: u.Input, OutputTokens: u.Output, CacheCreation: u.CacheCreation,
		CacheCreation1h: u.CacheCreation1h, CacheRead: u.CacheRead}
}

func rawRow(r *schema.Record, hash string) layout.RawRow {
	s, a := value(r.Source), value(r.Adapter)
	raw := rawString(r.Raw)
	if raw == "" {
		// A record without a raw value (a native line that is JSON null
		// travels so): the column holds JSON, and "" is not JSON.
		raw = "null"
	}
	return layout.RawRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, TSPrecision: r.TSPrecision,
		NativeType: r.NativeType, NativeID: r.NativeID, Project: r.Project, User: r.User, Machine: r.Machine,
		SourcePath: s.Path, SourceLine: s.Line, SourceKey: s.Key, SourceOffset: s.Offset, SourceMtime: s.Mtime,
		Adapter: a.Name, AdapterVer: a.Version, IngestedAt: r.IngestedAt, ContentHash: hash, Raw: raw,
		SourceAltered: s.Altered,
	}
}

func messageRow(r *schema.Record, hash string) layout.MessageRow {
	s, a, ag, u := value(r.Source), value(r.Adapter), value(r.Agent), value(r.Usage)
	tools := make([]layout.ToolRow, len(r.Tools))
	for i, t := range r.Tools {
		tools[i] = layout.ToolRow{Name: t.Name, CallID: t.CallID, Input: rawString(t.Input), Output: t.Output, IsError: t.IsError}
	}
	return layout.MessageRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, ParentID: r.ParentID, TS: r.TS, TSPrecision: r.TSPrecision,
		Role: r.Role, ContentType: r.ContentType, NativeType: r.NativeType, NativeID: r.NativeID, RequestID: r.RequestID,
		Title: r.Title, Text: r.Text, Thinking: r.Thinking, Tools: tools, ToolCount: int64(len(tools)), Model: r.Model,
		Tokens: tokens(u), AgentID: ag.ID, AgentType: ag.Type, Sidechain: ag.Sidechain, Place: place(r),
		Files: r.Files, Completeness: r.Completeness,
		SourcePath: s.Path, SourceLine: s.Line, SourceKey: s.Key, SourceOffset: s.Offset,
		Adapter: a.Name, AdapterVer: a.Version, IngestedAt: r.IngestedAt,
		Meta: rawString(r.Meta), Extra: extraJSON(r), ContentHash: hash,
	}
}

func exchangeRow(r *schema.Record, hash string) layout.ExchangeRow {
	a, ag, u := value(r.Adapter), value(r.Agent), value(r.Usage)
	e := value(r.Exchange)
	return layout.ExchangeRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, PromptID: e.PromptID, LastID: e.LastID, Number: e.Number,
		TS: r.TS, TSEnd: e.TSEnd, TSPrecision: r.TSPrecision, Prompt: e.Prompt, Response: e.Response, Text: r.Text,
		Model: r.Model, Models: e.Models, Tools: e.Tools, ToolCount: e.ToolCount, MessageCount: e.MessageCount,
		Tokens: tokens(u), AgentID: ag.ID, AgentType: ag.Type, Sidechain: ag.Sidechain, Place: place(r),
		Files: r.Files, Tags: r.Tags, Commits: e.Commits, Completeness: r.Completeness, Adapter: a.Name, AdapterVer: a.Version,
		IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
}

func decisionRow(r *schema.Record, hash string) layout.DecisionRow {
	d := value(r.Decision)
	return layout.DecisionRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, TSPrecision: r.TSPrecision, Role: r.Role,
		Text: r.Text, Confidence: d.Confidence, Status: d.Status, Patterns: d.Patterns, ExchangeID: d.ExchangeID,
		MessageID: d.MessageID, Context: d.Context, AgentID: value(r.Agent).ID,
		Place: place(r), Completeness: r.Completeness,
		IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
}

func fileRefRow(r *schema.Record, hash string) layout.FileRefRow {
	f := value(r.FileRef)
	return layout.FileRefRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, Path: f.Path, Action: f.Action, Tool: f.Tool,
		ExchangeID: f.ExchangeID, MessageID: f.MessageID, AgentID: value(r.Agent).ID,
		Place: place(r), IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
}

func sessionRow(r *schema.Record, hash string) layout.SessionRow {
	a, u := value(r.Adapter), value(r.Usage)
	s := value(r.Session)
	models := make([]layout.ModelUsageRow, len(s.Models))
	for i, m := range s.Models {
		models[i] = layout.ModelUsageRow{Model: m.Model, Messages: m.Messages, InputTokens: m.Input, OutputTokens: m.Output,
			CacheCreation: m.CacheCreation, CacheRead: m.CacheRead}
	}
	row := layout.SessionRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, Title: r.Title, Slug: s.Slug,
		FirstTS: s.FirstTS, LastTS: s.LastTS, MessageCount: s.MessageCount, UserCount: s.UserCount,
		AssistantCnt: s.AssistantCnt, ToolCount: s.ToolCount, ExchangeCount: s.ExchangeCount,
		Compactions: s.Compactions, Subagents: s.Subagents,
		InputTokens: u.Input, OutputTokens: u.Output, CacheCreation: u.CacheCreation, CacheRead: u.CacheRead,
		Models: models, Labels: s.Labels, PullRequests: s.PullRequests, PlanID: s.PlanID,
		Cwd: r.Cwd, GitBranch: r.GitBranch, Project: r.Project, User: r.User, Machine: r.Machine,
		Completeness: r.Completeness, Meta: rawString(r.Meta), Adapter: a.Name, AdapterVer: a.Version,
		IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
	row.TitleSource = s.TitleSource
	return row
}

func documentRow(r *schema.Record, hash string) layout.DocumentRow {
	s, a, ag := value(r.Source), value(r.Adapter), value(r.Agent)
	return layout.DocumentRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, TSPrecision: r.TSPrecision,
		ContentType: r.ContentType, NativeID: r.NativeID, Title: r.Title, Text: r.Text,
		AgentID: ag.ID, AgentType: ag.Type, Cwd: r.Cwd, Project: r.Project, User: r.User, Machine: r.Machine,
		Completeness: r.Completeness, SourcePath: s.Path, Adapter: a.Name, AdapterVer: a.Version,
		IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
}

func otherRow(r *schema.Record, hash string) layout.OtherRow {
	return layout.OtherRow{
		ID: r.ID, Kind: string(r.Kind), Platform: r.Platform, SessionID: r.SessionID, TS: r.TS,
		IngestedAt: r.IngestedAt, Record: string(schema.AppendRecord(nil, r)), ContentHash: hash,
	}
}
