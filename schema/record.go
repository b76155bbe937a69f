package schema

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/jsontext"
)

// Version is written in the "schema" field of every record this build
// produces. Readers accept any "pos/N" version and keep fields they do not
// know, so a newer producer never breaks an older filter.
const Version = "pos/1"

// Kind says what a record is. Filters pass kinds they do not know through
// untouched.
type Kind string

const (
	KindMessage  Kind = "message"  // one logical message of a conversation
	KindExchange Kind = "exchange" // a user prompt and everything until the next one (pos-normalize)
	KindSession  Kind = "session"  // per-session metadata and rollup, re-emitted when it changes
	KindDocument Kind = "document" // a file linked to a session: plans, subagent reports
	KindChunk    Kind = "chunk"    // an indexable span with its embedding (pos-embed)
	// KindRaw is a native record that is kept for the raw layer only
	// (progress lines, file-history snapshots, queue operations …), or the
	// native record of a message that pos-normalize split off.
	KindRaw Kind = "raw"
	// KindCheckpoint carries an extractor watermark through the pipeline so
	// that pos-load commits it only once the data before it is in the lake.
	KindCheckpoint Kind = "checkpoint"
	// KindDecision is a decision (or a candidate) found in a message
	// (pos-normalize's enrichment).
	KindDecision Kind = "decision"
	// KindFileRef is a file a message's tool call read, changed or searched.
	KindFileRef Kind = "file_ref"
)

// Platform names the tool that wrote the native history. The platforms pos
// reads, their aliases and what their data supports are registered in
// package extract/platforms, each declared by its adapter's folder
// (extract/<name>/about); the wire contract is only that it is a string.
type Platform = string

// Role of a message's author.
type Role = string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// ContentType classifies what a message (or chunk, or document) holds.
type ContentType = string

const (
	ContentText            ContentType = "text"             // prose: a prompt or an answer
	ContentToolUse         ContentType = "tool_use"         // an assistant message that only calls tools
	ContentToolResult      ContentType = "tool_result"      // tool output returned to the model
	ContentThinking        ContentType = "thinking"         // reasoning only
	ContentCommand         ContentType = "command"          // a slash command the user typed; of a chunk, a shell command an agent ran
	ContentCommandOutput   ContentType = "command_output"   // output of a local command, not a prompt
	ContentInterrupt       ContentType = "interrupt"        // "[Request interrupted by user]"
	ContentMeta            ContentType = "meta"             // tool-injected context (isMeta lines, caveats)
	ContentSummaryLabel    ContentType = "summary_label"    // Claude Code "summary" lines: chapter titles
	ContentCompactBoundary ContentType = "compact_boundary" // a compaction happened here
	ContentCompactSummary  ContentType = "compact_summary"  // the summary that replaced the compacted context
	ContentPlan            ContentType = "plan"             // a plan document
	ContentSubagentSummary ContentType = "subagent_summary" // a subagent's final report
	ContentExchange        ContentType = "exchange"         // chunk of an exchange
	ContentUserPrompt      ContentType = "user_prompt"      // chunk of a user prompt
	ContentError           ContentType = "error"            // API error placeholders
	ContentUsage           ContentType = "usage"            // tokens another model used within a message (its advisor's); no text
	ContentToolOutput      ContentType = "tool_output"      // chunk of what a tool call returned
	ContentToolError       ContentType = "tool_error"       // chunk of a tool result that failed: flagged, or reads as a failure
)

// AssistantContentType classifies an assistant message by what it holds:
// prose if any, else tool calls, else reasoning.
func AssistantContentType(text, thinking string, tools int) ContentType {
	switch {
	case strings.TrimSpace(text) != "":
		return ContentText
	case tools > 0:
		return ContentToolUse
	case thinking != "":
		return ContentThinking
	}
	return ContentText
}

// Precision says how far a record's ts can be trusted.
type Precision = string

const (
	PrecisionExact     Precision = "exact"      // written by the tool for this record
	PrecisionDerived   Precision = "derived"    // inferred from neighbours or a parent
	PrecisionFileMtime Precision = "file_mtime" // only the file's modification time was known
	PrecisionUnknown   Precision = "unknown"
)

// Completeness says whether the native storage held the whole record.
type Completeness = string

const (
	CompleteFull     Completeness = "full"
	CompletePartial  Completeness = "partial"
	CompleteMetadata Completeness = "metadata_only"
	CompleteUnknown  Completeness = "unknown"
)

// Record is the one type that travels between the pos filters. Which fields
// are set depends on Kind; the JSON names are the wire contract.
//
// Fields a filter does not know are kept in Extra and written back
// verbatim, so an older filter in the middle of a pipeline never loses data
// a newer producer added.
type Record struct {
	Schema       string       `json:"schema"`
	Kind         Kind         `json:"kind"`
	ID           string       `json:"id,omitempty"`
	Platform     Platform     `json:"platform,omitempty"`
	SessionID    string       `json:"session_id,omitempty"`
	ParentID     string       `json:"parent_id,omitempty"`
	TS           time.Time    `json:"ts,omitzero"`
	TSPrecision  Precision    `json:"ts_precision,omitempty"`
	Role         Role         `json:"role,omitempty"`
	ContentType  ContentType  `json:"content_type,omitempty"`
	NativeType   string       `json:"native_type,omitempty"` // the native line/record type ("assistant", "progress" …)
	NativeID     string       `json:"native_id,omitempty"`   // the native id (uuid, message id, bubble id …)
	RequestID    string       `json:"request_id,omitempty"`
	Title        string       `json:"title,omitempty"`
	Text         string       `json:"text,omitempty"`
	Thinking     string       `json:"thinking,omitempty"`
	Tools        []Tool       `json:"tools,omitempty"`
	Model        string       `json:"model,omitempty"`
	Usage        *Usage       `json:"usage,omitempty"`
	Advisor      []ModelUsage `json:"advisor,omitempty"` // calls to an advisor model within the request; see ModelUsage
	Agent        *Agent       `json:"agent,omitempty"`
	Cwd          string       `json:"cwd,omitempty"`
	GitBranch    string       `json:"git_branch,omitempty"`
	Project      string       `json:"project,omitempty"`
	User         string       `json:"user,omitempty"`
	Machine      string       `json:"machine,omitempty"`
	Files        []string     `json:"files,omitempty"`
	Tags         []string     `json:"tags,omitempty"`
	Completeness Completeness `json:"completeness,omitempty"`
	Source       *Source      `json:"source,omitempty"`
	Adapter      *Adapter     `json:"adapter,omitempty"`
	IngestedAt   time.Time    `json:"ingested_at,omitzero"`
	Exchange     *Exchange    `json:"exchange,omitempty"`
	Session      *Session     `json:"session,omitempty"`
	Chunk        *Chunk       `json:"chunk,omitempty"`
	Checkpoint   *Checkpoint  `json:"checkpoint,omitempty"`
	Decision     *Decision    `json:"decision,omitempty"`
	FileRef      *FileRef     `json:"file_ref,omitempty"`
	// Meta holds platform metadata that has no column of its own (Cursor
	// mode, lines added/removed, compaction trigger …), as a JSON object.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Raw is the native record, verbatim (compacted to one line).
	Raw json.RawMessage `json:"raw,omitempty"`

	// Extra holds top-level fields this build does not know, verbatim.
	Extra []Field `json:"-"`

	// Line, when set, is the record's encoded line, and encoding the record
	// writes Line as it is. A Decoder sets it on records of its Lazy kinds
	// (read but not decoded: only Schema and Kind are set; a stage passes
	// them on unchanged) and, with KeepLines, on every record: a stage that
	// changes such a record must clear Line.
	Line []byte `json:"-"`
}

// Field is one unknown top-level member, kept as raw JSON.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Tool is one tool call, or one tool result, inside a message.
type Tool struct {
	Name    string          `json:"name,omitempty"`
	CallID  string          `json:"call_id,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Output  string          `json:"output,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// Usage counts tokens the way the provider billed them.
type Usage struct {
	Input         int64 `json:"input"`
	Output        int64 `json:"output"`
	CacheCreation int64 `json:"cache_creation"`
	CacheRead     int64 `json:"cache_read"`
	// CacheCreation1h is the part of CacheCreation written to the 1-hour
	// cache (Anthropic bills it at 2x input, the 5-minute rest at 1.25x).
	CacheCreation1h int64 `json:"cache_creation_1h,omitempty"`
}

// Add accumulates o into u.
func (u *Usage) Add(o *Usage) {
	if o == nil {
		return
	}
	u.Input += o.Input
	u.Output += o.Output
	u.CacheCreation += o.CacheCreation
	u.CacheRead += o.CacheRead
	u.CacheCreation1h += o.CacheCreation1h
}

// IsZero reports whether no token was counted.
func (u *Usage) IsZero() bool {
	return u == nil || (u.Input|u.Output|u.CacheCreation|u.CacheRead) == 0
}

// Agent identifies the (sub)agent thread a record belongs to.
type Agent struct {
	ID        string `json:"id,omitempty"`
	Type      string `json:"type,omitempty"`
	Sidechain bool   `json:"sidechain,omitempty"`
}

// Source is the provenance of a record: where its native bytes are.
type Source struct {
	Path   string    `json:"path"`
	Line   int64     `json:"line,omitempty"` // 1-based line number (line-oriented formats)
	Key    string    `json:"key,omitempty"`  // row key or JSON path (databases, JSON documents)
	Offset int64     `json:"offset"`         // byte offset of the record's first byte
	Mtime  time.Time `json:"mtime,omitzero"` // the file's modification time when read
	// Replay marks a record read again from before an earlier run's
	// watermark: the run resumed at the start of an exchange that was
	// still open, and the record is here as that exchange's context.
	// Earlier runs already delivered it, so stages that store records
	// need not pass it on (pos-normalize drops it once it has used it).
	Replay bool `json:"replay,omitempty"`
	// Altered names what was changed in the native record to keep it as
	// strict JSON that DuckDB and jq read (see Repairs): "utf8",
	// "control", "escape", "surrogate", "text", comma-separated; "" when
	// the record is kept byte for byte.
	Altered string `json:"altered,omitempty"`
}

// Adapter names the code that produced a record.
type Adapter struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Exchange holds the fields of a KindExchange record. Its Text is the
// prompt followed by the assistant's prose; Usage sums the exchange.
type Exchange struct {
	Number       int64     `json:"number"`
	TSEnd        time.Time `json:"ts_end,omitzero"`
	Prompt       string    `json:"prompt,omitempty"`
	Response     string    `json:"response,omitempty"`
	MessageCount int64     `json:"message_count"`
	ToolCount    int64     `json:"tool_count"`
	Tools        []string  `json:"tools,omitempty"` // distinct tool names, in first-use order
	Models       []string  `json:"models,omitempty"`
	PromptID     string    `json:"prompt_id,omitempty"`
	LastID       string    `json:"last_id,omitempty"`
	Commits      []string  `json:"commits,omitempty"` // git commit SHAs the exchange's tools reported
}

// Decision holds the fields of a KindDecision record; its Text is the
// sentence or paragraph that states the decision.
type Decision struct {
	Confidence float64  `json:"confidence"`
	Status     string   `json:"status"`             // "decision" (>= 0.8) or "candidate" (0.5 to 0.8)
	Patterns   []string `json:"patterns,omitempty"` // the patterns that matched
	ExchangeID string   `json:"exchange_id,omitempty"`
	MessageID  string   `json:"message_id,omitempty"`
	Context    string   `json:"context,omitempty"` // the prompt the decision answered, first line
}

// FileRef holds the fields of a KindFileRef record.
type FileRef struct {
	Path       string `json:"path"`
	Action     string `json:"action"` // read | write | edit | delete | search | reference
	Tool       string `json:"tool,omitempty"`
	ExchangeID string `json:"exchange_id,omitempty"`
	MessageID  string `json:"message_id,omitempty"`
}

// Where a session's title comes from (Session.TitleSource), from the
// strongest: the name the user gave it on the platform (Claude Code's
// /rename), the platform's own title or label for it, the latest summary
// label, the first prompt.
const (
	TitleUser     = "user"
	TitlePlatform = "platform"
	TitleLabel    = "label"
	TitlePrompt   = "prompt"
)

// TitleRank orders title sources: a title from a higher rank wins over
// one from a lower, whichever is newer.
func TitleRank(source string) int {
	switch source {
	case TitleUser:
		return 3
	case TitlePlatform:
		return 2
	case TitleLabel:
		return 1
	}
	return 0
}

// Session holds the fields of a KindSession record.
type Session struct {
	Slug          string       `json:"slug,omitempty"`
	TitleSource   string       `json:"title_source,omitempty"` // user | platform | label | prompt
	FirstTS       time.Time    `json:"first_ts,omitzero"`
	LastTS        time.Time    `json:"last_ts,omitzero"`
	MessageCount  int64        `json:"message_count"`
	UserCount     int64        `json:"user_count"`
	AssistantCnt  int64        `json:"assistant_count"`
	ToolCount     int64        `json:"tool_count"`
	ExchangeCount int64        `json:"exchange_count"`
	Models        []ModelUsage `json:"models,omitempty"`
	Labels        []string     `json:"labels,omitempty"`
	PlanID        string       `json:"plan_id,omitempty"`
	Compactions   int64        `json:"compactions,omitempty"`
	Subagents     int64        `json:"subagents,omitempty"`
	// PullRequests are the pull requests the session linked (Claude Code
	// writes a pr-link line when one shows up), by URL, first seen first.
	PullRequests []string `json:"pull_requests,omitempty"`
}

// ModelUsage is one model's token usage within a session, or one call of
// an advisor model within a request (Record.Advisor): Anthropic's advisor
// tool bills each call at the advisor's rates, outside the request's Usage.
// Extractors fill Record.Advisor; pos-normalize makes each entry a message
// of its own (content type "usage", no text) and clears it, so a
// normalized stream never counts those tokens twice.
type ModelUsage struct {
	Model    string `json:"model"`
	Messages int64  `json:"messages"`
	Usage
}

// Chunk holds the fields of a KindChunk record.
type Chunk struct {
	Index     int64     `json:"index"`
	Model     string    `json:"model,omitempty"`
	Dim       int64     `json:"dim,omitempty"`
	Embedding []float32 `json:"embedding,omitempty"`
	// Provider and BaseURL say how the vector was made (hash, or openai
	// and its endpoint, without credentials), so that queries are
	// embedded through the same.
	Provider string `json:"provider,omitempty"`
	BaseURL  string `json:"base_url,omitempty"`
}

// Checkpoint is an extractor's watermark for one source file.
type Checkpoint struct {
	Platform string    `json:"platform"`
	Path     string    `json:"path"`
	Size     int64     `json:"size"`   // bytes consumed: everything before this offset is in the stream
	Resume   int64     `json:"resume"` // where the next run starts reading (≤ Size: re-reads an open exchange)
	Seen     int64     `json:"seen"`   // the file's size when read (> Size when a last line was unfinished)
	Mtime    time.Time `json:"mtime,omitzero"`
	Inode    uint64    `json:"inode,omitempty"`
	Head     string    `json:"head,omitempty"` // hash of the file's first bytes: detects a replaced file
	Lines    int64     `json:"lines"`          // complete lines before Resume
	// Context is what the adapter needs to carry across the resume point
	// (the session a file belongs to, its project …).
	Context map[string]string `json:"context,omitempty"`
	// State and Lake say where the run that read the file keeps its
	// watermarks, so that whoever commits them (pos-load) commits them
	// there: State is a directory named with pos-extract --state, Lake the
	// lake whose _state the watermarks were read from (absolute paths).
	// Neither is kept in a state file.
	State string `json:"state,omitempty"`
	Lake  string `json:"lake,omitempty"`
}

// New returns a record of the given kind stamped with the schema version.
func New(kind Kind) *Record { return &Record{Schema: Version, Kind: kind} }

// ScrubField is the member pos-scrub adds to every record it writes, so
// that later stages, and the lake, know a record was scrubbed and how: one
// of the Scrub* values. A record without it never passed pos-scrub. It is
// kept among the record's unknown fields (Extra), which every stage passes
// on as they are.
const ScrubField = "scrub"

// What pos-scrub did to a record (the ScrubField's value).
const (
	ScrubSecrets = "secrets" // secrets redacted
	ScrubPII     = "pii"     // secrets and personal data redacted (pos-scrub --pii)
	ScrubOff     = "off"     // passed through pos-scrub with scrubbing turned off (pos-scrub --off)
)

// Scrubbed reports whether a ScrubField value says the record's secrets
// were redacted.
func Scrubbed(mark string) bool { return mark == ScrubSecrets || mark == ScrubPII }

// ScrubRank orders ScrubField values from the least redacted: a record
// scrubbed twice keeps the stronger mark.
func ScrubRank(mark string) int {
	switch mark {
	case ScrubOff:
		return 1
	case ScrubSecrets:
		return 2
	case ScrubPII:
		return 3
	}
	return 0
}

// ScrubMark returns the record's ScrubField value, "" when it has none.
func (r *Record) ScrubMark() string {
	for _, f := range r.Extra {
		if f.Key == ScrubField {
			var s string
			if json.Unmarshal(f.Value, &s) != nil {
				return ""
			}
			return s
		}
	}
	return ""
}

// SetScrubMark sets the record's ScrubField to mark, or removes it when
// mark is "". The record's Line, if any, no longer matches it: the caller
// clears it.
func (r *Record) SetScrubMark(mark string) {
	for i, f := range r.Extra {
		if f.Key == ScrubField {
			if mark == "" {
				r.Extra = slices.Delete(r.Extra, i, i+1)
			} else {
				r.Extra[i].Value = jsontext.AppendString(nil, mark)
			}
			return
		}
	}
	if mark != "" {
		r.Extra = append(r.Extra, Field{Key: ScrubField, Value: jsontext.AppendString(nil, mark)})
	}
}
