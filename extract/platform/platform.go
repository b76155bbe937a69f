// Package platform describes a platform pos reads, without reading it: its
// name, the other names people type for it and what its native data
// supports (its declared capabilities). It is data only, with no parser and
// no I/O, so that programs that only list platforms or check a name
// (pos-query, pos-mcp) depend on it and not on the adapters.
//
// Each adapter folder declares its platform in a package of its own
// (extract/<name>/about) and package platforms lists them.
package platform

import (
	"fmt"
	"strings"
)

// Platform is what pos knows of a platform before reading any of it.
type Platform struct {
	// Name is the platform's name in records (schema.Record.Platform),
	// flags and tool arguments: lowercase, words joined by "_".
	Name string
	// Title is how prose names it ("Claude Code", "Codex CLI").
	Title string
	// Aliases are other names people type for it (lowercase).
	Aliases []string
	// Capabilities are what its data supports; Capabilities.Platform is
	// Name (the registry sets it).
	Capabilities Capabilities
}

// Support says how far a platform's native storage supports a capability.
type Support string

const (
	Yes     Support = "yes"
	Partial Support = "partial"
	No      Support = "no"
)

// Capabilities is what an adapter declares its platform's data can and
// cannot support. pos-extract --capabilities prints the matrix of every
// adapter; pos-query capabilities sets it beside what the lake holds.
type Capabilities struct {
	Platform string `json:"platform"`
	// Exchanges: prompts and the agent's answers can be retrieved.
	Exchanges Support `json:"exchanges"`
	// Timestamps: every message has its own exact time (temporal queries).
	Timestamps Support `json:"timestamps"`
	// Tokens: token counts per message or request (token metrics).
	Tokens Support `json:"tokens"`
	// Cost: the tool records a cost (otherwise it is priced from tokens).
	Cost Support `json:"cost"`
	// Models: the model of each answer is known.
	Models Support `json:"models"`
	// ToolCalls: tool calls and their results are recorded.
	ToolCalls Support `json:"tool_calls"`
	// FileContext: the files the agent read or changed can be named.
	FileContext Support `json:"file_context"`
	// Subagents: subagent transcripts are kept and linked.
	Subagents Support `json:"subagents"`
	// Incremental: files only grow, so a re-run reads only what was added.
	Incremental Support `json:"incremental"`
	// Completeness is what the records usually are: full, partial or
	// metadata_only.
	Completeness string `json:"completeness"`
	// Limitations, in a sentence each.
	Limitations []string `json:"limitations,omitempty"`
}

// SemanticSearch is derived: search needs the words of the exchanges.
func (c Capabilities) SemanticSearch() Support {
	return c.Exchanges
}

// Matrix renders capabilities as a markdown table (platforms as rows) with
// each platform's limitations listed under it.
func Matrix(caps []Capabilities) string {
	var b strings.Builder
	b.WriteString("| platform | exchanges | timestamps | tokens | cost | models | tool calls | file context | subagents | incremental | semantic search | completeness |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range caps {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			c.Platform, c.Exchanges, c.Timestamps, c.Tokens, c.Cost, c.Models, c.ToolCalls,
			c.FileContext, c.Subagents, c.Incremental, c.SemanticSearch(), c.Completeness)
	}
	for _, c := range caps {
		if len(c.Limitations) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", c.Platform)
		for _, l := range c.Limitations {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}
