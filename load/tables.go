package load

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/lazyre"
	"github.com/pos-lake/pos/schema"
)

// The lake's tables. Each is a directory of hive-partitioned Parquet files:
// <lake>/<layer>/<table>/platform=<p>/date=<YYYY-MM-DD>/part-*.parquet
// (the raw layer is <lake>/raw/platform=…, without a table level).
const (
	TableRaw       = "raw"
	TableMessages  = "messages"
	TableExchanges = "exchanges"
	TableSessions  = "sessions"
	TableDocuments = "documents"
	TableDecisions = "decisions"
	TableFileRefs  = "file_refs"
	TableOther     = "other" // records of kinds this build has no table for, kept whole
)

// Tables lists every table in catalog order.
var Tables = []string{TableRaw, TableMessages, TableExchanges, TableSessions, TableDocuments, TableDecisions, TableFileRefs, TableChunks, TablePostings, TableSummaries, TableOther}

// tableFor routes a record kind to its table.
func tableFor(k schema.Kind) string {
	switch k {
	case schema.KindRaw:
		return TableRaw
	case schema.KindMessage:
		return TableMessages
	case schema.KindExchange:
		return TableExchanges
	case schema.KindSession:
		return TableSessions
	case schema.KindDocument:
		return TableDocuments
	case schema.KindDecision:
		return TableDecisions
	case schema.KindFileRef:
		return TableFileRefs
	case schema.KindChunk:
		return TableChunks
	}
	return TableOther
}

// RawRow is a row of the raw layer: a native record, verbatim, with where
// it came from.
type RawRow struct {
	ID           string    `parquet:"id"`
	Platform     string    `parquet:"platform,dict"`
	SessionID    string    `parquet:"session_id,optional,dict"`
	TS           time.Time `parquet:"ts,timestamp(millisecond)"`
	TSPrecision  string    `parquet:"ts_precision,dict"`
	NativeType   string    `parquet:"native_type,optional,dict"`
	NativeID     string    `parquet:"native_id,optional"`
	Project      string    `parquet:"project,optional,dict"`
	User         string    `parquet:"user,optional,dict"`
	Machine      string    `parquet:"machine,optional,dict"`
	SourcePath   string    `parquet:"source_path,optional,dict"`
	SourceLine   int64     `parquet:"source_line,optional"`
	SourceKey    string    `parquet:"source_key,optional"`
	SourceOffset int64     `parquet:"source_offset"`
	SourceMtime  time.Time `parquet:"source_mtime,optional,timestamp(millisecond)"`
	Adapter      string    `parquet:"adapter,optional,dict"`
	AdapterVer   string    `parquet:"adapter_version,optional,dict"`
	IngestedAt   time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	ContentHash  string    `parquet:"content_hash"`
	Raw          string    `parquet:"raw,json"`

	// SourceAltered names what pos-extract changed in the native record to
	// keep it as strict JSON (schema.Source.Altered); NULL when it is kept
	// byte for byte.
	SourceAltered string `parquet:"source_altered,optional,dict"`
}

// ToolRow is one tool call or result inside a message. Its fields are
// required (empty, not NULL): parquet-go v0.32 mis-counts definition levels
// of optional fields inside list elements.
type ToolRow struct {
	Name    string `parquet:"name"`
	CallID  string `parquet:"call_id"`
	Input   string `parquet:"input"` // JSON text; empty for a result
	Output  string `parquet:"output"`
	IsError bool   `parquet:"is_error"`
}

// MessageRow is a row of indexed/messages.
type MessageRow struct {
	ID              string    `parquet:"id"`
	Platform        string    `parquet:"platform,dict"`
	SessionID       string    `parquet:"session_id,dict"`
	ParentID        string    `parquet:"parent_id,optional"`
	TS              time.Time `parquet:"ts,timestamp(millisecond)"`
	TSPrecision     string    `parquet:"ts_precision,dict"`
	Role            string    `parquet:"role,dict"`
	ContentType     string    `parquet:"content_type,dict"`
	NativeType      string    `parquet:"native_type,optional,dict"`
	NativeID        string    `parquet:"native_id,optional"`
	RequestID       string    `parquet:"request_id,optional"`
	Title           string    `parquet:"title,optional"`
	Text            string    `parquet:"text,optional"`
	Thinking        string    `parquet:"thinking,optional"`
	Tools           []ToolRow `parquet:"tools,list"`
	ToolCount       int64     `parquet:"tool_count"` // len(tools), so counting needs no tool bodies
	Model           string    `parquet:"model,optional,dict"`
	InputTokens     int64     `parquet:"input_tokens"`
	OutputTokens    int64     `parquet:"output_tokens"`
	CacheCreation   int64     `parquet:"cache_creation_tokens"`
	CacheCreation1h int64     `parquet:"cache_creation_1h_tokens"`
	CacheRead       int64     `parquet:"cache_read_tokens"`
	AgentID         string    `parquet:"agent_id,optional,dict"`
	AgentType       string    `parquet:"agent_type,optional,dict"`
	Sidechain       bool      `parquet:"sidechain"`
	Cwd             string    `parquet:"cwd,optional,dict"`
	GitBranch       string    `parquet:"git_branch,optional,dict"`
	Project         string    `parquet:"project,optional,dict"`
	User            string    `parquet:"user,optional,dict"`
	Machine         string    `parquet:"machine,optional,dict"`
	Files           []string  `parquet:"files,list"`
	Completeness    string    `parquet:"completeness,dict"`
	SourcePath      string    `parquet:"source_path,optional,dict"`
	SourceLine      int64     `parquet:"source_line,optional"`
	SourceKey       string    `parquet:"source_key,optional"`
	SourceOffset    int64     `parquet:"source_offset"`
	Adapter         string    `parquet:"adapter,optional,dict"`
	AdapterVer      string    `parquet:"adapter_version,optional,dict"`
	IngestedAt      time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Meta            string    `parquet:"meta,optional"`  // JSON text
	Extra           string    `parquet:"extra,optional"` // JSON text
	ContentHash     string    `parquet:"content_hash"`
}

// ExchangeRow is a row of indexed/exchanges.
type ExchangeRow struct {
	ID              string    `parquet:"id"`
	Platform        string    `parquet:"platform,dict"`
	SessionID       string    `parquet:"session_id,dict"`
	PromptID        string    `parquet:"prompt_id,optional"`
	LastID          string    `parquet:"last_id,optional"`
	Number          int64     `parquet:"stream_number"`
	TS              time.Time `parquet:"ts,timestamp(millisecond)"`
	TSEnd           time.Time `parquet:"ts_end,optional,timestamp(millisecond)"`
	TSPrecision     string    `parquet:"ts_precision,dict"`
	Prompt          string    `parquet:"prompt,optional"`
	Response        string    `parquet:"response,optional"`
	Text            string    `parquet:"text,optional"`
	Model           string    `parquet:"model,optional,dict"`
	Models          []string  `parquet:"models,list"`
	Tools           []string  `parquet:"tools,list"`
	ToolCount       int64     `parquet:"tool_count"`
	MessageCount    int64     `parquet:"message_count"`
	InputTokens     int64     `parquet:"input_tokens"`
	OutputTokens    int64     `parquet:"output_tokens"`
	CacheCreation   int64     `parquet:"cache_creation_tokens"`
	CacheCreation1h int64     `parquet:"cache_creation_1h_tokens"`
	CacheRead       int64     `parquet:"cache_read_tokens"`
	AgentID         string    `parquet:"agent_id,optional,dict"`
	AgentType       string    `parquet:"agent_type,optional,dict"`
	Sidechain       bool      `parquet:"sidechain"`
	Cwd             string    `parquet:"cwd,optional,dict"`
	GitBranch       string    `parquet:"git_branch,optional,dict"`
	Project         string    `parquet:"project,optional,dict"`
	User            string    `parquet:"user,optional,dict"`
	Machine         string    `parquet:"machine,optional,dict"`
	Files           []string  `parquet:"files,list"`
	Tags            []string  `parquet:"tags,list"`
	Commits         []string  `parquet:"commits,list"`
	Completeness    string    `parquet:"completeness,dict"`
	Adapter         string    `parquet:"adapter,optional,dict"`
	AdapterVer      string    `parquet:"adapter_version,optional,dict"`
	IngestedAt      time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Extra           string    `parquet:"extra,optional"` // JSON text
	ContentHash     string    `parquet:"content_hash"`
}

// DecisionRow is a row of indexed/decisions: a sentence that states a
// decision (status "decision", confidence >= 0.8) or may ("candidate").
type DecisionRow struct {
	ID           string    `parquet:"id"`
	Platform     string    `parquet:"platform,dict"`
	SessionID    string    `parquet:"session_id,dict"`
	TS           time.Time `parquet:"ts,timestamp(millisecond)"`
	TSPrecision  string    `parquet:"ts_precision,dict"`
	Role         string    `parquet:"role,dict"`
	Text         string    `parquet:"text"`
	Confidence   float64   `parquet:"confidence"`
	Status       string    `parquet:"status,dict"`
	Patterns     []string  `parquet:"patterns,list"`
	ExchangeID   string    `parquet:"exchange_id,optional"`
	MessageID    string    `parquet:"message_id,optional"`
	Context      string    `parquet:"context,optional"`
	AgentID      string    `parquet:"agent_id,optional,dict"`
	Cwd          string    `parquet:"cwd,optional,dict"`
	GitBranch    string    `parquet:"git_branch,optional,dict"`
	Project      string    `parquet:"project,optional,dict"`
	User         string    `parquet:"user,optional,dict"`
	Machine      string    `parquet:"machine,optional,dict"`
	Completeness string    `parquet:"completeness,dict"`
	IngestedAt   time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Extra        string    `parquet:"extra,optional"` // JSON text
	ContentHash  string    `parquet:"content_hash"`
}

// FileRefRow is a row of indexed/file_refs: a file a tool call read,
// wrote, edited, deleted or searched.
type FileRefRow struct {
	ID          string    `parquet:"id"`
	Platform    string    `parquet:"platform,dict"`
	SessionID   string    `parquet:"session_id,dict"`
	TS          time.Time `parquet:"ts,timestamp(millisecond)"`
	Path        string    `parquet:"path,dict"`
	Action      string    `parquet:"action,dict"`
	Tool        string    `parquet:"tool,optional,dict"`
	ExchangeID  string    `parquet:"exchange_id,optional"`
	MessageID   string    `parquet:"message_id,optional"`
	AgentID     string    `parquet:"agent_id,optional,dict"`
	Cwd         string    `parquet:"cwd,optional,dict"`
	GitBranch   string    `parquet:"git_branch,optional,dict"`
	Project     string    `parquet:"project,optional,dict"`
	User        string    `parquet:"user,optional,dict"`
	Machine     string    `parquet:"machine,optional,dict"`
	IngestedAt  time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Extra       string    `parquet:"extra,optional"` // JSON text
	ContentHash string    `parquet:"content_hash"`
}

// ModelUsageRow is one model's tokens within a session.
type ModelUsageRow struct {
	Model         string `parquet:"model"`
	Messages      int64  `parquet:"messages"`
	InputTokens   int64  `parquet:"input_tokens"`
	OutputTokens  int64  `parquet:"output_tokens"`
	CacheCreation int64  `parquet:"cache_creation_tokens"`
	CacheRead     int64  `parquet:"cache_read_tokens"`
}

// SessionRow is a row of indexed/sessions: one version of a session's
// rollup. The sessions view keeps the latest metadata and recounts from the
// messages, so a rollup of an incremental run's part of a session is fine.
type SessionRow struct {
	ID            string          `parquet:"id"`
	Platform      string          `parquet:"platform,dict"`
	SessionID     string          `parquet:"session_id"`
	TS            time.Time       `parquet:"ts,timestamp(millisecond)"`
	Title         string          `parquet:"title,optional"`
	TitleSource   string          `parquet:"title_source,optional,dict"` // user | platform | label | prompt
	Slug          string          `parquet:"slug,optional"`
	FirstTS       time.Time       `parquet:"first_ts,optional,timestamp(millisecond)"`
	LastTS        time.Time       `parquet:"last_ts,optional,timestamp(millisecond)"`
	MessageCount  int64           `parquet:"message_count"`
	UserCount     int64           `parquet:"user_count"`
	AssistantCnt  int64           `parquet:"assistant_count"`
	ToolCount     int64           `parquet:"tool_count"`
	ExchangeCount int64           `parquet:"exchange_count"`
	Compactions   int64           `parquet:"compactions"`
	Subagents     int64           `parquet:"subagents"`
	InputTokens   int64           `parquet:"input_tokens"`
	OutputTokens  int64           `parquet:"output_tokens"`
	CacheCreation int64           `parquet:"cache_creation_tokens"`
	CacheRead     int64           `parquet:"cache_read_tokens"`
	Models        []ModelUsageRow `parquet:"models,list"`
	Labels        []string        `parquet:"labels,list"`
	PullRequests  []string        `parquet:"pull_requests,list"`
	PlanID        string          `parquet:"plan_id,optional"`
	Cwd           string          `parquet:"cwd,optional"`
	GitBranch     string          `parquet:"git_branch,optional"`
	Project       string          `parquet:"project,optional,dict"`
	User          string          `parquet:"user,optional,dict"`
	Machine       string          `parquet:"machine,optional,dict"`
	Completeness  string          `parquet:"completeness,dict"`
	Meta          string          `parquet:"meta,optional"` // JSON text
	Adapter       string          `parquet:"adapter,optional,dict"`
	AdapterVer    string          `parquet:"adapter_version,optional,dict"`
	IngestedAt    time.Time       `parquet:"ingested_at,timestamp(millisecond)"`
	Extra         string          `parquet:"extra,optional"` // JSON text
	ContentHash   string          `parquet:"content_hash"`
}

// DocumentRow is a row of indexed/documents: plans, subagent reports.
type DocumentRow struct {
	ID           string    `parquet:"id"`
	Platform     string    `parquet:"platform,dict"`
	SessionID    string    `parquet:"session_id,optional"`
	TS           time.Time `parquet:"ts,timestamp(millisecond)"`
	TSPrecision  string    `parquet:"ts_precision,dict"`
	ContentType  string    `parquet:"content_type,dict"`
	NativeID     string    `parquet:"native_id,optional"`
	Title        string    `parquet:"title,optional"`
	Text         string    `parquet:"text,optional"`
	AgentID      string    `parquet:"agent_id,optional"`
	AgentType    string    `parquet:"agent_type,optional,dict"`
	Cwd          string    `parquet:"cwd,optional"`
	Project      string    `parquet:"project,optional,dict"`
	User         string    `parquet:"user,optional,dict"`
	Machine      string    `parquet:"machine,optional,dict"`
	Completeness string    `parquet:"completeness,dict"`
	SourcePath   string    `parquet:"source_path,optional"`
	Adapter      string    `parquet:"adapter,optional,dict"`
	AdapterVer   string    `parquet:"adapter_version,optional,dict"`
	IngestedAt   time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Extra        string    `parquet:"extra,optional"` // JSON text
	ContentHash  string    `parquet:"content_hash"`
}

// OtherRow keeps a record of a kind without a table of its own, whole.
type OtherRow struct {
	ID          string    `parquet:"id"`
	Kind        string    `parquet:"kind,dict"`
	Platform    string    `parquet:"platform,dict"`
	SessionID   string    `parquet:"session_id,optional"`
	TS          time.Time `parquet:"ts,timestamp(millisecond)"`
	IngestedAt  time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Record      string    `parquet:"record,json"`
	ContentHash string    `parquet:"content_hash"`
}

func src(r *schema.Record) schema.Source {
	if r.Source == nil {
		return schema.Source{}
	}
	return *r.Source
}

func adapter(r *schema.Record) schema.Adapter {
	if r.Adapter == nil {
		return schema.Adapter{}
	}
	return *r.Adapter
}

func agent(r *schema.Record) schema.Agent {
	if r.Agent == nil {
		return schema.Agent{}
	}
	return *r.Agent
}

func usage(r *schema.Record) schema.Usage {
	if r.Usage == nil {
		return schema.Usage{}
	}
	return *r.Usage
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

func rawRow(r *schema.Record, hash string) RawRow {
	s, a := src(r), adapter(r)
	raw := rawString(r.Raw)
	if raw == "" {
		// A record without a raw value (a native line that is JSON null
		// travels so): the column holds JSON, and "" is not JSON.
		raw = "null"
	}
	return RawRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, TSPrecision: r.TSPrecision,
		NativeType: r.NativeType, NativeID: r.NativeID, Project: r.Project, User: r.User, Machine: r.Machine,
		SourcePath: s.Path, SourceLine: s.Line, SourceKey: s.Key, SourceOffset: s.Offset, SourceMtime: s.Mtime,
		Adapter: a.Name, AdapterVer: a.Version, IngestedAt: r.IngestedAt, ContentHash: hash, Raw: raw,
		SourceAltered: s.Altered,
	}
}

func messageRow(r *schema.Record, hash string) MessageRow {
	s, a, ag, u := src(r), adapter(r), agent(r), usage(r)
	tools := make([]ToolRow, len(r.Tools))
	for i, t := range r.Tools {
		tools[i] = ToolRow{Name: t.Name, CallID: t.CallID, Input: rawString(t.Input), Output: t.Output, IsError: t.IsError}
	}
	return MessageRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, ParentID: r.ParentID, TS: r.TS, TSPrecision: r.TSPrecision,
		Role: r.Role, ContentType: r.ContentType, NativeType: r.NativeType, NativeID: r.NativeID, RequestID: r.RequestID,
		Title: r.Title, Text: r.Text, Thinking: r.Thinking, Tools: tools, ToolCount: int64(len(tools)), Model: r.Model,
		InputTokens: u.Input, OutputTokens: u.Output, CacheCreation: u.CacheCreation, CacheCreation1h: u.CacheCreation1h, CacheRead: u.CacheRead,
		AgentID: ag.ID, AgentType: ag.Type, Sidechain: ag.Sidechain,
		Cwd: r.Cwd, GitBranch: r.GitBranch, Project: r.Project, User: r.User, Machine: r.Machine,
		Files: r.Files, Completeness: r.Completeness,
		SourcePath: s.Path, SourceLine: s.Line, SourceKey: s.Key, SourceOffset: s.Offset,
		Adapter: a.Name, AdapterVer: a.Version, IngestedAt: r.IngestedAt,
		Meta: rawString(r.Meta), Extra: extraJSON(r), ContentHash: hash,
	}
}

func exchangeRow(r *schema.Record, hash string) ExchangeRow {
	a, ag, u := adapter(r), agent(r), usage(r)
	e := schema.Exchange{}
	if r.Exchange != nil {
		e = *r.Exchange
	}
	return ExchangeRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, PromptID: e.PromptID, LastID: e.LastID, Number: e.Number,
		TS: r.TS, TSEnd: e.TSEnd, TSPrecision: r.TSPrecision, Prompt: e.Prompt, Response: e.Response, Text: r.Text,
		Model: r.Model, Models: e.Models, Tools: e.Tools, ToolCount: e.ToolCount, MessageCount: e.MessageCount,
		InputTokens: u.Input, OutputTokens: u.Output, CacheCreation: u.CacheCreation, CacheCreation1h: u.CacheCreation1h, CacheRead: u.CacheRead,
		AgentID: ag.ID, AgentType: ag.Type, Sidechain: ag.Sidechain,
		Cwd: r.Cwd, GitBranch: r.GitBranch, Project: r.Project, User: r.User, Machine: r.Machine,
		Files: r.Files, Tags: r.Tags, Commits: e.Commits, Completeness: r.Completeness, Adapter: a.Name, AdapterVer: a.Version,
		IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
}

func decisionRow(r *schema.Record, hash string) DecisionRow {
	d := schema.Decision{}
	if r.Decision != nil {
		d = *r.Decision
	}
	return DecisionRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, TSPrecision: r.TSPrecision, Role: r.Role,
		Text: r.Text, Confidence: d.Confidence, Status: d.Status, Patterns: d.Patterns, ExchangeID: d.ExchangeID,
		MessageID: d.MessageID, Context: d.Context, AgentID: agent(r).ID, Cwd: r.Cwd, GitBranch: r.GitBranch,
		Project: r.Project, User: r.User, Machine: r.Machine, Completeness: r.Completeness,
		IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
}

func fileRefRow(r *schema.Record, hash string) FileRefRow {
	f := schema.FileRef{}
	if r.FileRef != nil {
		f = *r.FileRef
	}
	return FileRefRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, Path: f.Path, Action: f.Action, Tool: f.Tool,
		ExchangeID: f.ExchangeID, MessageID: f.MessageID, AgentID: agent(r).ID, Cwd: r.Cwd, GitBranch: r.GitBranch,
		Project: r.Project, User: r.User, Machine: r.Machine, IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
}

func sessionRow(r *schema.Record, hash string) SessionRow {
	a, u := adapter(r), usage(r)
	s := schema.Session{}
	if r.Session != nil {
		s = *r.Session
	}
	models := make([]ModelUsageRow, len(s.Models))
	for i, m := range s.Models {
		models[i] = ModelUsageRow{Model: m.Model, Messages: m.Messages, InputTokens: m.Input, OutputTokens: m.Output,
			CacheCreation: m.CacheCreation, CacheRead: m.CacheRead}
	}
	row := SessionRow{
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

func documentRow(r *schema.Record, hash string) DocumentRow {
	s, a, ag := src(r), adapter(r), agent(r)
	return DocumentRow{
		ID: r.ID, Platform: r.Platform, SessionID: r.SessionID, TS: r.TS, TSPrecision: r.TSPrecision,
		ContentType: r.ContentType, NativeID: r.NativeID, Title: r.Title, Text: r.Text,
		AgentID: ag.ID, AgentType: ag.Type, Cwd: r.Cwd, Project: r.Project, User: r.User, Machine: r.Machine,
		Completeness: r.Completeness, SourcePath: s.Path, Adapter: a.Name, AdapterVer: a.Version,
		IngestedAt: r.IngestedAt, Extra: extraJSON(r), ContentHash: hash,
	}
}

func otherRow(r *schema.Record, hash string) OtherRow {
	return OtherRow{
		ID: r.ID, Kind: string(r.Kind), Platform: r.Platform, SessionID: r.SessionID, TS: r.TS,
		IngestedAt: r.IngestedAt, Record: string(schema.AppendRecord(nil, r)), ContentHash: hash,
	}
}

var partRE = lazyre.New(`[^A-Za-z0-9_.-]`)

// partValue makes a value safe as a hive partition directory name.
func partValue(s string) string {
	if s == "" {
		return "unknown"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return partRE().ReplaceAllString(s, "_")
		}
	}
	return s // the usual case: once per record, without the regexp
}

func dateOf(t time.Time) string {
	if t.IsZero() {
		return "1970-01-01"
	}
	return t.UTC().Format("2006-01-02")
}

// Dir is the directory of a table's partition.
func Dir(lake, table, platform, date string) string {
	if table == TableRaw {
		return filepath.Join(lake, "raw", "platform="+platform, "date="+date)
	}
	return filepath.Join(lake, "indexed", table, "platform="+platform, "date="+date)
}

// tablePartitions lists a table's partitions, the platform=P/date=D
// directories under its root, in name order; none when the table has no
// directory yet.
func tablePartitions(lake, table string) ([]partKey, error) {
	root := TableDir(lake, table)
	plats, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []partKey
	for _, p := range plats {
		platform, ok := strings.CutPrefix(p.Name(), "platform=")
		if !ok || !p.IsDir() {
			continue
		}
		dates, err := os.ReadDir(filepath.Join(root, p.Name()))
		if err != nil {
			return nil, err
		}
		for _, d := range dates {
			if date, ok := strings.CutPrefix(d.Name(), "date="); ok && d.IsDir() {
				out = append(out, partKey{table: table, platform: platform, date: date})
			}
		}
	}
	return out, nil
}

// TableDir is the root directory of a table.
func TableDir(lake, table string) string {
	if table == TableRaw {
		return filepath.Join(lake, "raw")
	}
	return filepath.Join(lake, "indexed", table)
}
