package mcpserver

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/query"
)

// SearchArgs are search's arguments.
type SearchArgs struct {
	Query          string   `json:"query" jsonschema:"what to look for: words, a question or a description of what was discussed"`
	Mode           string   `json:"mode,omitempty" jsonschema:"hybrid (vector and BM25 fused), vector or lexical (BM25); default: hybrid when the lake has vectors, else lexical"`
	K              int      `json:"k,omitempty" jsonschema:"how many results"`
	Platform       string   `json:"platform,omitempty" jsonschema:"only this platform"`
	Project        string   `json:"project,omitempty" jsonschema:"only projects whose path contains this"`
	Session        string   `json:"session,omitempty" jsonschema:"only this session: an id or a unique prefix of one"`
	Types          []string `json:"types,omitempty" jsonschema:"only these content types"`
	Since          string   `json:"since,omitempty" jsonschema:"from this time: a duration back from now (90m, 36h, 7d, 2w), a date (2026-01-31) or RFC 3339"`
	Until          string   `json:"until,omitempty" jsonschema:"before this time (same forms as since)"`
	GroupBySession bool     `json:"group_by_session,omitempty" jsonschema:"rank sessions by how much of them matches (topic search across sessions) instead of listing single results"`
	PerSession     int      `json:"per_session,omitempty" jsonschema:"with group_by_session: how many of its best hits each session lists"`
	NoExpand       bool     `json:"no_expand,omitempty" jsonschema:"search the query's own words only: no expansion by the best results' words and WordNet synonyms"`
}

// SearchResult is search's result: hits, or sessions when grouped.
type SearchResult struct {
	Mode     string             `json:"mode"`
	Model    string             `json:"embedding_model"`
	Terms    []string           `json:"terms"`
	Hits     []query.SearchHit  `json:"hits"`
	Sessions []query.SessionHit `json:"sessions"`
	// Warning says why the results are lexical only: the query could not
	// be embedded (the embedding endpoint failed).
	Warning string `json:"warning,omitempty" jsonschema:"set when the results are lexical only because the query could not be embedded (the embedding endpoint failed): why"`
}

func (s *Server) addSearch() {
	tool := &mcp.Tool{
		Name: ToolSearch,
		Description: "Find the exchanges, subagent reports, compaction summaries, labels and plans that match a query, " +
			"and what agents did: the shell commands they ran (type command) and tools' results (tool_output, tool_error: " +
			"a failed call, a compiler error, a failing test), across every session in the lake (hybrid: vector similarity " +
			"and BM25 fused by rank). Each hit has its session, exchange, time, score and a snippet with the query's words " +
			"in **bold**; a tool's hit also names the tool and gives its lines that hold the query's words. " +
			"A hit gives its exchange's prompt and, when a tool of the exchange failed, the error and what fixed it (the edits, " +
			"the command that then passed); near-identical hits are one, with how many others it stands for (duplicates, similar). " +
			"group_by_session ranks whole sessions instead, each with its best hits.",
		Annotations: readOnly("Search past agent sessions"),
		InputSchema: inputSchema[SearchArgs](func(p map[string]*jsonschema.Schema) {
			p["query"].MinLength = new(int)
			*p["query"].MinLength = 1
			p["mode"].Enum = enum(query.SearchModes...)
			p["k"].Minimum, p["k"].Maximum, p["k"].Default = num(1), num(100), jsonDefault("10")
			p["per_session"].Minimum, p["per_session"].Maximum, p["per_session"].Default = num(1), num(20), jsonDefault("3")
			p["types"].Items.Enum = enum(query.SearchTypes...)
		}),
	}
	add(s, tool, handler(s, func(ctx context.Context, db *query.DB, a SearchArgs) (*mcp.CallToolResult, SearchResult, error) {
		var out SearchResult
		if strings.TrimSpace(a.Query) == "" {
			return nil, out, argError("query", "is empty: say what to look for")
		}
		p, since, until, err := s.window(a.Platform, a.Since, a.Until)
		if err != nil {
			return nil, out, err
		}
		session := ""
		if a.Session != "" {
			ref, err := db.ResolveSession(ctx, a.Session, p, "")
			if err != nil {
				return nil, out, err
			}
			session = ref.SessionID
		}
		var types []string
		if len(a.Types) > 0 {
			if types, err = query.ParseSearchTypes(strings.Join(a.Types, ",")); err != nil {
				return nil, out, argError("types", "%v", err)
			}
		}
		opt := query.SearchOptions{Query: a.Query, Mode: a.Mode, K: a.K, Platform: p, Project: a.Project, Session: session,
			Types: types, Since: since, Until: until, PerSession: a.PerSession,
			NoExpand: a.NoExpand}
		if a.GroupBySession {
			opt.GroupBy = "session"
		}
		if err := s.embedder(ctx, db, &opt); err != nil {
			return nil, out, err
		}
		res, err := db.Search(ctx, opt)
		if err != nil {
			return nil, out, err
		}
		return nil, SearchResult{Mode: res.Mode, Model: res.Model, Terms: orEmpty(res.Terms), Hits: orEmpty(res.Hits),
			Sessions: orEmpty(res.Sessions), Warning: res.Warning}, nil
	}))
}

// embedder gives opt the lake's query embedder unless the search is
// lexical, and picks hybrid, or lexical when the lake has no vectors, when
// no mode was asked for.
func (s *Server) embedder(ctx context.Context, db *query.DB, opt *query.SearchOptions) error {
	_, hasVectors, err := layout.LakeEmbedding(ctx, db.Lake())
	if err != nil {
		return err
	}
	if opt.Mode != query.SearchLexical && hasVectors && s.opt.Embedder != nil {
		if opt.Embed, err = s.opt.Embedder(ctx, db.Lake()); err != nil {
			return err
		}
	}
	if opt.Mode == "" {
		opt.Mode = query.SearchHybrid
		if opt.Embed == nil {
			opt.Mode = query.SearchLexical
		}
	}
	return nil
}
