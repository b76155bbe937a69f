package layout

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/lazyre"
	"github.com/pos-lake/pos/load/searchindex"
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

// Place is where a record was made: columns messages, exchanges,
// decisions and file refs share, in this order. parquet-go lays an
// embedded struct's columns out in its parent's, in place.
type Place struct {
	Cwd       string `parquet:"cwd,optional,dict"`
	GitBranch string `parquet:"git_branch,optional,dict"`
	Project   string `parquet:"project,optional,dict"`
	User      string `parquet:"user,optional,dict"`
	Machine   string `parquet:"machine,optional,dict"`
}

// Tokens are a message's or an exchange's token counts.
type Tokens struct {
	InputTokens     int64 `parquet:"input_tokens"`
	OutputTokens    int64 `parquet:"output_tokens"`
	CacheCreation   int64 `parquet:"cache_creation_tokens"`
	CacheCreation1h int64 `parquet:"cache_creation_1h_tokens"`
	CacheRead       int64 `parquet:"cache_read_tokens"`
}

// MessageRow is a row of indexed/messages.
type MessageRow struct {
	ID          string    `parquet:"id"`
	Platform    string    `parquet:"platform,dict"`
	SessionID   string    `parquet:"session_id,dict"`
	ParentID    string    `parquet:"parent_id,optional"`
	TS          time.Time `parquet:"ts,timestamp(millisecond)"`
	TSPrecision string    `parquet:"ts_precision,dict"`
	Role        string    `parquet:"role,dict"`
	ContentType string    `parquet:"content_type,dict"`
	NativeType  string    `parquet:"native_type,optional,dict"`
	NativeID    string    `parquet:"native_id,optional"`
	RequestID   string    `parquet:"request_id,optional"`
	Title       string    `parquet:"title,optional"`
	Text        string    `parquet:"text,optional"`
	Thinking    string    `parquet:"thinking,optional"`
	Tools       []ToolRow `parquet:"tools,list"`
	ToolCount   int64     `parquet:"tool_count"` // len(tools), so counting needs no tool bodies
	Model       string    `parquet:"model,optional,dict"`
	Tokens
	AgentID   string `parquet:"agent_id,optional,dict"`
	AgentType string `parquet:"agent_type,optional,dict"`
	Sidechain bool   `parquet:"sidechain"`
	Place
	Files        []string  `parquet:"files,list"`
	Completeness string    `parquet:"completeness,dict"`
	SourcePath   string    `parquet:"source_path,optional,dict"`
	SourceLine   int64     `parquet:"source_line,optional"`
	SourceKey    string    `parquet:"source_key,optional"`
	SourceOffset int64     `parquet:"source_offset"`
	Adapter      string    `parquet:"adapter,optional,dict"`
	AdapterVer   string    `parquet:"adapter_version,optional,dict"`
	IngestedAt   time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Meta         string    `parquet:"meta,optional"`  // JSON text
	Extra        string    `parquet:"extra,optional"` // JSON text
	ContentHash  string    `parquet:"content_hash"`
}

// ExchangeRow is a row of indexed/exchanges.
type ExchangeRow struct {
	ID           string    `parquet:"id"`
	Platform     string    `parquet:"platform,dict"`
	SessionID    string    `parquet:"session_id,dict"`
	PromptID     string    `parquet:"prompt_id,optional"`
	LastID       string    `parquet:"last_id,optional"`
	Number       int64     `parquet:"stream_number"`
	TS           time.Time `parquet:"ts,timestamp(millisecond)"`
	TSEnd        time.Time `parquet:"ts_end,optional,timestamp(millisecond)"`
	TSPrecision  string    `parquet:"ts_precision,dict"`
	Prompt       string    `parquet:"prompt,optional"`
	Response     string    `parquet:"response,optional"`
	Text         string    `parquet:"text,optional"`
	Model        string    `parquet:"model,optional,dict"`
	Models       []string  `parquet:"models,list"`
	Tools        []string  `parquet:"tools,list"`
	ToolCount    int64     `parquet:"tool_count"`
	MessageCount int64     `parquet:"message_count"`
	Tokens
	AgentID   string `parquet:"agent_id,optional,dict"`
	AgentType string `parquet:"agent_type,optional,dict"`
	Sidechain bool   `parquet:"sidechain"`
	Place
	Files        []string  `parquet:"files,list"`
	Tags         []string  `parquet:"tags,list"`
	Commits      []string  `parquet:"commits,list"`
	Completeness string    `parquet:"completeness,dict"`
	Adapter      string    `parquet:"adapter,optional,dict"`
	AdapterVer   string    `parquet:"adapter_version,optional,dict"`
	IngestedAt   time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Extra        string    `parquet:"extra,optional"` // JSON text
	ContentHash  string    `parquet:"content_hash"`
}

// DecisionRow is a row of indexed/decisions: a sentence that states a
// decision (status "decision", confidence >= 0.8) or may ("candidate").
type DecisionRow struct {
	ID          string    `parquet:"id"`
	Platform    string    `parquet:"platform,dict"`
	SessionID   string    `parquet:"session_id,dict"`
	TS          time.Time `parquet:"ts,timestamp(millisecond)"`
	TSPrecision string    `parquet:"ts_precision,dict"`
	Role        string    `parquet:"role,dict"`
	Text        string    `parquet:"text"`
	Confidence  float64   `parquet:"confidence"`
	Status      string    `parquet:"status,dict"`
	Patterns    []string  `parquet:"patterns,list"`
	ExchangeID  string    `parquet:"exchange_id,optional"`
	MessageID   string    `parquet:"message_id,optional"`
	Context     string    `parquet:"context,optional"`
	AgentID     string    `parquet:"agent_id,optional,dict"`
	Place
	Completeness string    `parquet:"completeness,dict"`
	IngestedAt   time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Extra        string    `parquet:"extra,optional"` // JSON text
	ContentHash  string    `parquet:"content_hash"`
}

// FileRefRow is a row of indexed/file_refs: a file a tool call read,
// wrote, edited, deleted or searched.
type FileRefRow struct {
	ID         string    `parquet:"id"`
	Platform   string    `parquet:"platform,dict"`
	SessionID  string    `parquet:"session_id,dict"`
	TS         time.Time `parquet:"ts,timestamp(millisecond)"`
	Path       string    `parquet:"path,dict"`
	Action     string    `parquet:"action,dict"`
	Tool       string    `parquet:"tool,optional,dict"`
	ExchangeID string    `parquet:"exchange_id,optional"`
	MessageID  string    `parquet:"message_id,optional"`
	AgentID    string    `parquet:"agent_id,optional,dict"`
	Place
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

var partRE = lazyre.New(`[^A-Za-z0-9_.-]`)

// PartValue makes a value safe as a hive partition directory name.
func PartValue(s string) string {
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

func DateOf(t time.Time) string {
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

// PartKey names one partition of a table.
type PartKey struct{ Table, Platform, Date string }

// TablePartitions lists a table's partitions, the platform=P/date=D
// directories under its root, in name order; none when the table has no
// directory yet.
func TablePartitions(lake, table string) ([]PartKey, error) {
	return (*Listing)(nil).TablePartitions(lake, table)
}

// TablePartitions is TablePartitions, from what l keeps of the
// directories that have not changed.
func (l *Listing) TablePartitions(lake, table string) ([]PartKey, error) {
	root := TableDir(lake, table)
	plats, err := l.readDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []PartKey
	for _, p := range plats {
		platform, ok := strings.CutPrefix(p.Name(), "platform=")
		if !ok || !p.IsDir() {
			continue
		}
		dates, err := l.readDir(filepath.Join(root, p.Name()))
		if err != nil {
			return nil, err
		}
		for _, d := range dates {
			if date, ok := strings.CutPrefix(d.Name(), "date="); ok && d.IsDir() {
				out = append(out, PartKey{Table: table, Platform: platform, Date: date})
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

// The chunks table holds pos-embed's chunks with their vectors; the
// postings table is the lexical index over them, written beside each chunks
// file: one row per distinct term of a chunk, with its frequency and the
// chunk's length in terms, sorted by term so that a query reads only the
// row groups holding its terms. Postings point at a chunk version by
// chunk_key, a hash of the chunk's id and content, so the postings of a
// superseded version never match the chunk the chunks view shows.
const (
	TableChunks   = "chunks"
	TablePostings = "postings"
)

// ChunkRow is a row of indexed/chunks.
type ChunkRow struct {
	ID          string    `parquet:"id"`
	ChunkKey    int64     `parquet:"chunk_key"`
	Platform    string    `parquet:"platform,dict"`
	SessionID   string    `parquet:"session_id,optional,dict"`
	ParentID    string    `parquet:"parent_id,optional"`
	TS          time.Time `parquet:"ts,timestamp(millisecond)"`
	TSPrecision string    `parquet:"ts_precision,dict"`
	Role        string    `parquet:"role,optional,dict"`
	ContentType string    `parquet:"content_type,dict"`
	ChunkIndex  int64     `parquet:"chunk_index"`
	Title       string    `parquet:"title,optional"`
	Text        string    `parquet:"text"`
	TokenCount  int32     `parquet:"token_count"` // index terms: the BM25 length
	Model       string    `parquet:"model,optional,dict"`
	Dim         int32     `parquet:"dim"`
	// Embedding is a plain, uncompressed list: random-looking floats do
	// not compress, and DuckDB scans it twice as fast as zstd pages.
	Embedding    []float32 `parquet:"embedding,list,plain,uncompressed"`
	AgentID      string    `parquet:"agent_id,optional,dict"`
	AgentType    string    `parquet:"agent_type,optional,dict"`
	Sidechain    bool      `parquet:"sidechain"`
	Cwd          string    `parquet:"cwd,optional,dict"`
	GitBranch    string    `parquet:"git_branch,optional,dict"`
	Project      string    `parquet:"project,optional,dict"`
	User         string    `parquet:"user,optional,dict"`
	Machine      string    `parquet:"machine,optional,dict"`
	Completeness string    `parquet:"completeness,dict"`
	IngestedAt   time.Time `parquet:"ingested_at,timestamp(millisecond)"`
	Extra        string    `parquet:"extra,optional"` // JSON text
	ContentHash  string    `parquet:"content_hash"`
	// Tool names the tool of a chunk of a tool call or result (content
	// types command, tool_output, tool_error). Last, and optional: files
	// written before it was added read it as null.
	Tool string `parquet:"tool,optional,dict"`
}

// ChunkKey identifies one version of a chunk: its id and content hash.
func ChunkKey(id, contentHash string) int64 {
	d := xxhash.New()
	d.WriteString(id)
	d.Write([]byte{0})
	d.WriteString(contentHash)
	return int64(d.Sum64())
}

// The summaries table holds the session summaries pos-query summarize and
// pos-mcp made: one row per summary of one state of a session, keyed by
// platform, session, the session's last message id, strategy, model and
// the parameters that shape the text. A reader reuses a row while the
// session's last message is the same; once the session grows, its last
// message changes and a new summary is made and added beside the old one.
//
// Rows are written by WriteSummaries, not by pos-load: they are derived
// from the lake, not read from an agent's history.
const TableSummaries = "summaries"

// SummaryRow is a row of indexed/summaries.
type SummaryRow struct {
	ID            string    `parquet:"id"` // SummaryID of the key
	Platform      string    `parquet:"platform,dict"`
	SessionID     string    `parquet:"session_id,dict"`
	LastMessageID string    `parquet:"last_message_id"`
	LastTS        time.Time `parquet:"last_ts,optional,timestamp(millisecond)"`
	MessageCount  int64     `parquet:"message_count"`
	ExchangeCount int64     `parquet:"exchange_count"`
	Strategy      string    `parquet:"strategy,dict"`
	Model         string    `parquet:"model,optional,dict"` // the LLM's; empty for extractive
	Params        string    `parquet:"params,optional"`     // e.g. "v1 chunk=6000 words=300"
	Text          string    `parquet:"text"`
	Levels        string    `parquet:"levels,optional"` // JSON text: every level of a hierarchical summary
	Notes         []string  `parquet:"notes,list"`
	LLMCalls      int64     `parquet:"llm_calls"`
	InputTokens   int64     `parquet:"input_tokens"` // the LLM's, for this summary
	OutputTokens  int64     `parquet:"output_tokens"`
	DurationMS    int64     `parquet:"duration_ms"`
	IngestedAt    time.Time `parquet:"ingested_at,timestamp(millisecond)"` // when it was made
	ContentHash   string    `parquet:"content_hash"`
	// Date names the row's date partition: the session's first day.
	Date time.Time `parquet:"-"`
}

// RowType is a zero row of a table's type.
func RowType(table string) any {
	switch table {
	case TableRaw:
		return RawRow{}
	case TableMessages:
		return MessageRow{}
	case TableExchanges:
		return ExchangeRow{}
	case TableSessions:
		return SessionRow{}
	case TableDocuments:
		return DocumentRow{}
	case TableDecisions:
		return DecisionRow{}
	case TableFileRefs:
		return FileRefRow{}
	case TableChunks:
		return ChunkRow{}
	case TablePostings:
		return searchindex.PostingRow{}
	case TableSummaries:
		return SummaryRow{}
	default:
		return OtherRow{}
	}
}
