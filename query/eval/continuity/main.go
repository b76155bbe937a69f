// Command continuity measures how much of what a compaction summary
// carries over a smart context pack would have carried instead (issue 6).
//
// For every Claude Code session in the corpus with a compaction (a
// system/compact_boundary line followed by a user line with
// isCompactSummary: true) it copies the session's lines from before the
// boundary (and the lines of its subagent transcripts written before it,
// leaving out the compaction agent agent-acompact-*, which holds the
// summary itself) into a temporary directory, builds a lake from them with
// the real pipeline (the Claude Code extractor, normalize with every
// enrichment, load), builds the smart pack with a 15,000-token budget
// exactly as `pos-query context SESSION --mode smart --max-tokens 15000`
// does, and counts how many of the files, decisions, pending tasks and
// errors fixed the compaction summary mentions the pack contains (see
// Parse, FindFiles and FindUnits for the rules).
//
//	go run ./query/eval/continuity [-corpus DIR] [-max-tokens N] [-v]
//
// It exits non-zero on errors only, never on low figures.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/claudecode"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
	"github.com/pos-lake/pos/transform/scrub"
)

func main() {
	corpus := flag.String("corpus", defaultCorpus(), "the corpus directory ($POS_CORPUS); its claude/ folder is searched")
	budget := flag.Int("max-tokens", query.DefaultContextTokens, "the pack's token budget")
	verbose := flag.Bool("v", false, "list every item of each summary and whether the pack has it")
	flag.StringVar(&KeepDir, "keep", "", "keep each session's lake and pack under this `DIR` (DIR/SESSION/lake, DIR/SESSION/pack.md)")
	flag.Float64Var(&DecisionThreshold, "threshold", DecisionThreshold, "the share of a decision's content words one pack item must hold")
	flag.Parse()
	if DecisionThreshold <= 0 || DecisionThreshold > 1 {
		fmt.Fprintf(os.Stderr, "continuity: -threshold %v: give a share above 0 and at most 1\n", DecisionThreshold)
		os.Exit(2)
	}
	root := filepath.Join(*corpus, "claude")
	if _, err := os.Stat(root); err != nil {
		fmt.Fprintf(os.Stderr, "continuity: %v (set -corpus or POS_CORPUS)\n", err)
		os.Exit(1)
	}
	rep, err := Run(context.Background(), root, *budget)
	if err != nil {
		fmt.Fprintln(os.Stderr, "continuity:", err)
		os.Exit(1)
	}
	rep.Print(os.Stdout, *verbose)
}

// defaultCorpus is $POS_CORPUS, or shared/corpus beside the repository
// (as for go run ./query/eval).
func defaultCorpus() string {
	if d := os.Getenv("POS_CORPUS"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "corpus")
}

// Compaction is one compaction found in a session file.
type Compaction struct {
	File      string    // the session's transcript
	SessionID string    // from the boundary line
	Line      int       // the boundary's line number (1-based)
	TS        time.Time // the boundary's time
	Summary   string    // the text of the isCompactSummary line
}

// Item is a file, decision, pending task or error a summary mentions, and
// whether the pack has it.
type Item struct {
	Text  string
	Found bool
	Score float64 // all but files: the best share of content words in one pack item
	// Reachable: the transcript before the boundary holds the item (a
	// file's name, DecisionThreshold of a unit's content words), so that a
	// pack can carry it. A summary also names what it learnt elsewhere
	// (an earlier transcript the session resumed, the compaction agent's
	// own reading); no pack of the transcript can carry that.
	Reachable bool
}

// SessionResult is the check of one compaction.
type SessionResult struct {
	Compaction
	Platform   string
	PackTokens int
	Budget     int
	PackItems  int
	// packTexts are the pack's included items, as the units are matched
	// against them.
	packTexts []string
	Files     []Item
	Decisions []Item
	Pending   []Item
	Errors    []Item
}

// Report is the check of every compaction.
type Report struct {
	Budget   int
	Sessions []SessionResult
	// Control is how many of each summary's units the packs of the other
	// sessions would be credited with: what the matching credits a pack
	// that does not carry a unit, from the words a project's sessions
	// share (its names, its commands). A pack's own figure means as much
	// as it stands above this one.
	Control Tallies
}

// control counts each session's units against the other sessions' packs
// (see Report.Control).
func control(sessions []SessionResult) Tallies {
	var t Tallies
	for i, s := range sessions {
		for j, o := range sessions {
			if i == j {
				continue
			}
			for _, p := range []struct {
				tally *Tally
				items []Item
			}{{&t.Decisions, s.Decisions}, {&t.Pending, s.Pending}, {&t.Errors, s.Errors}} {
				units := make([]string, len(p.items))
				for k, it := range p.items {
					units[k] = it.Text
				}
				p.tally.add(FindUnits(units, o.packTexts))
			}
		}
	}
	return t
}

// Run checks every compaction under root (a directory of Claude Code
// transcripts) with packs of the given budget.
func Run(ctx context.Context, root string, budget int) (*Report, error) {
	comps, err := FindCompactions(root)
	if err != nil {
		return nil, err
	}
	rep := &Report{Budget: budget}
	for _, c := range comps {
		r, err := Check(ctx, root, c, budget)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", c.SessionID, err)
		}
		rep.Sessions = append(rep.Sessions, *r)
	}
	rep.Control = control(rep.Sessions)
	return rep, nil
}

// FindCompactions returns the compactions of the main session files under
// root (subagent transcripts are not sessions of their own), in path order.
func FindCompactions(root string) ([]Compaction, error) {
	var out []Compaction
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".jsonl") || isSubagent(path) {
			return nil
		}
		cs, err := scanFile(path)
		out = append(out, cs...)
		return err
	})
	return out, err
}

func isSubagent(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "agent-") || filepath.Base(filepath.Dir(path)) == "subagents"
}

type line struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	SessionID        string          `json:"sessionId"`
	Timestamp        string          `json:"timestamp"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Message          json.RawMessage `json:"message"`
}

// scanFile finds the compactions of one transcript. Only lines that can
// be a boundary or a summary are decoded; a bad one is an error naming the
// file and line.
func scanFile(path string) ([]Compaction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Compaction
	var open *Compaction
	err = eachLine(f, func(n int, b []byte) error {
		boundary := bytes.Contains(b, []byte(`"compact_boundary"`))
		summary := bytes.Contains(b, []byte(`"isCompactSummary"`))
		if !boundary && !summary {
			return nil
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
		switch {
		case l.Type == "system" && l.Subtype == "compact_boundary":
			ts, err := time.Parse(time.RFC3339Nano, l.Timestamp)
			if err != nil {
				return fmt.Errorf("%s:%d: compact_boundary without a valid timestamp: %v", path, n, err)
			}
			open = &Compaction{File: path, SessionID: l.SessionID, Line: n, TS: ts}
		case l.Type == "user" && l.IsCompactSummary && open != nil:
			text, err := messageText(l.Message)
			if err != nil {
				return fmt.Errorf("%s:%d: compact summary: %v", path, n, err)
			}
			open.Summary = text
			out = append(out, *open)
			open = nil
		}
		return nil
	})
	return out, err
}

// eachLine calls fn with every line of r (without its newline), numbered
// from 1; lines may be of any length.
func eachLine(r io.Reader, fn func(n int, b []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			if err := fn(n, bytes.TrimRight(b, "\r\n")); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// messageText is the text of a message whose content is a string or an
// array of blocks.
func messageText(raw json.RawMessage) (string, error) {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return "", fmt.Errorf("content is neither a string nor blocks: %v", err)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// KeepDir, when set, is where Check keeps each session's lake and pack
// for a look with pos-query (-keep).
var KeepDir string

// Check builds the lake of the session before the compaction, its smart
// pack, and compares the pack with the summary.
func Check(ctx context.Context, root string, c Compaction, budget int) (*SessionResult, error) {
	dir, err := os.MkdirTemp("", "pos-continuity-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if KeepDir != "" {
		dir = filepath.Join(KeepDir, c.SessionID)
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	src := filepath.Join(dir, "claude")
	if err := truncateSession(c, src); err != nil {
		return nil, err
	}
	lake := filepath.Join(dir, "lake")
	if err := buildLake(ctx, src, lake); err != nil {
		return nil, err
	}
	db, err := query.Open(ctx, lake)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ref, err := db.ResolveSession(ctx, c.SessionID, "", "")
	if err != nil {
		return nil, err
	}
	pack, err := db.Context(ctx, query.ContextOptions{Sessions: []query.SessionRef{ref}, Mode: query.ModeSmart, MaxTokens: budget, Now: c.TS})
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, s := range pack.Sessions {
		for _, it := range s.Items {
			if it.Included {
				texts = append(texts, it.Title+"\n"+it.Text)
			}
		}
	}
	if KeepDir != "" {
		if err := os.WriteFile(filepath.Join(dir, "pack.md"), []byte(pack.Markdown()), 0o600); err != nil {
			return nil, err
		}
	}
	res := &SessionResult{Compaction: c, Platform: ref.Platform, PackTokens: pack.Used, Budget: budget, PackItems: len(texts), packTexts: texts}
	sum := Parse(c.Summary)
	res.Files = FindFiles(sum.Files, pack.Markdown())
	res.Decisions = FindUnits(sum.Decisions, texts)
	res.Pending = FindUnits(sum.Pending, texts)
	res.Errors = FindUnits(sum.Errors, texts)
	whole, windows, err := sourceText(src)
	if err != nil {
		return nil, err
	}
	markReachable(res.Files, res.Decisions, res.Pending, res.Errors, whole, windows)
	return res, nil
}

// sourceText is what the transcripts under dir (the session before the
// boundary and its subagents) hold, as any pack of them could: the whole
// text, every string of every line decoded, for files; and stretches of
// reachWindow consecutive messages of one transcript for units, since a
// pack item states a decision, a pending task or an error from one place
// of the session, not from words scattered over all of it.
func sourceText(dir string) (whole string, windows []string, err error) {
	var b strings.Builder
	var walk func(w *strings.Builder, v any)
	walk = func(w *strings.Builder, v any) {
		switch x := v.(type) {
		case string:
			w.WriteString(x)
			w.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(w, e)
			}
		case map[string]any:
			for _, e := range x {
				walk(w, e)
			}
		}
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var messages []string
		err = eachLine(f, func(n int, line []byte) error {
			var v any
			if err := json.Unmarshal(line, &v); err != nil {
				return fmt.Errorf("%s:%d: %v", path, n, err)
			}
			walk(&b, v)
			if m, ok := v.(map[string]any); ok && (m["type"] == "user" || m["type"] == "assistant") {
				var w strings.Builder
				walk(&w, m["message"])
				messages = append(messages, w.String())
			}
			return nil
		})
		for i := range messages {
			windows = append(windows, strings.Join(messages[i:min(i+reachWindow, len(messages))], "\n"))
			if i+reachWindow >= len(messages) {
				break
			}
		}
		return err
	})
	return b.String(), windows, err
}

// reachWindow is how many consecutive messages of a transcript (a line
// each: an assistant's text or tool call, a tool's result, a prompt) a
// unit's words must stand within to count as reachable: a few tool calls
// with their results and what was said around them, about what one pack
// item (an error with what followed it, a part of a reply) draws on.
const reachWindow = 12

// markReachable marks the items the source holds: a file by its path or
// base name anywhere, a unit by DecisionThreshold of its content words
// within one window of the transcript, as a pack item would have to hold
// them.
func markReachable(files, decisions, pending, errs []Item, whole string, windows []string) {
	for i := range files {
		f := files[i].Text
		files[i].Reachable = strings.Contains(whole, f) || strings.Contains(whole, filepath.Base(f))
	}
	for _, list := range [][]Item{decisions, pending, errs} {
		texts := make([]string, len(list))
		for i, it := range list {
			texts[i] = it.Text
		}
		// What the pack carries the transcript holds, wherever the
		// pack's item drew it from.
		for i, r := range FindUnits(texts, windows) {
			list[i].Reachable = r.Found || list[i].Found
		}
	}
}

// truncateSession writes into dst the session's lines before the boundary
// and, from its subagent transcripts (<session>/subagents/ and legacy
// agent-*.jsonl beside it with the same sessionId), the lines written
// before the boundary's time. The compaction agent (agent-acompact-*) is
// left out: it is the summary being measured.
func truncateSession(c Compaction, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	if err := copyLines(c.File, filepath.Join(dst, filepath.Base(c.File)), func(n int, _ []byte) (bool, error) {
		return n < c.Line, nil
	}); err != nil {
		return err
	}
	subdir := filepath.Join(strings.TrimSuffix(c.File, ".jsonl"), "subagents")
	subs, _ := filepath.Glob(filepath.Join(subdir, "agent-*.jsonl"))
	for _, sub := range subs {
		if strings.HasPrefix(filepath.Base(sub), "agent-acompact") {
			continue
		}
		out := filepath.Join(dst, c.SessionID, "subagents", filepath.Base(sub))
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return err
		}
		if err := copyLines(sub, out, func(n int, b []byte) (bool, error) {
			var l line
			if err := json.Unmarshal(b, &l); err != nil {
				return false, fmt.Errorf("%s:%d: %v", sub, n, err)
			}
			ts, err := time.Parse(time.RFC3339Nano, l.Timestamp)
			return err == nil && ts.Before(c.TS), nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func copyLines(from, to string, keep func(n int, b []byte) (bool, error)) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	var out bytes.Buffer
	if err := eachLine(in, func(n int, b []byte) error {
		ok, err := keep(n, b)
		if ok {
			out.Write(b)
			out.WriteByte('\n')
		}
		return err
	}); err != nil {
		return err
	}
	return os.WriteFile(to, out.Bytes(), 0o600)
}

// scrubKey keys the markers of the check's throwaway lakes.
var scrubKey = []byte("continuity check: a key for lakes that are deleted after the check")

// buildLake runs the pipeline pos-extract --platform claude_code |
// pos-normalize | pos-scrub | pos-load runs, in process: extract,
// normalize with every enrichment, scrub, load (which requires scrubbed
// records), so that the pack is made of scrubbed text as a user's is.
func buildLake(ctx context.Context, root, lake string) error {
	var extracted, normalized bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	var skipped []string
	opt := extract.Options{Roots: []string{root}, User: "eval", Machine: "eval",
		OnSkip: func(b *schema.BadInput) error { skipped = append(skipped, b.Error()); return nil }}
	if err := (claudecode.Adapter{}).Extract(ctx, opt, enc.Encode); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	if len(skipped) > 0 {
		return errors.New("bad input: " + strings.Join(skipped, "; "))
	}
	if _, err := normalize.Normalize(ctx, &extracted, &normalized, normalize.Options{Name: root, Enrich: enrich.All}); err != nil {
		return err
	}
	var scrubbed bytes.Buffer
	if _, err := scrub.Scrub(ctx, &normalized, &scrubbed, scrub.Options{Key: scrubKey}); err != nil {
		return err
	}
	_, err := load.Load(ctx, &scrubbed, load.Options{Lake: lake, RequireScrubbed: true})
	return err
}

// Summary is what a compaction summary carries, as the check counts it.
type Summary struct {
	Files     []string
	Decisions []string
	Pending   []string // the tasks it names as still to do
	Errors    []string // the errors it names, with their fixes
}

// Items returns the files and decisions of a summary (see Parse).
func Items(summary string) (files, decisions []string) {
	s := Parse(summary)
	return s.Files, s.Decisions
}

// Parse reads what a compaction summary carries: the files it names, the
// decisions it states, the tasks it names as pending and the errors it
// names with their fixes.
//
// Claude Code's summaries open with a fixed preamble and close with a
// pointer to the full transcript; both are left out. Code blocks are left
// out (they quote code, not decisions; the files they name are named in
// the prose too).
//
// Files: every match of pathRE (a run of path characters with a slash,
// or a name with a dotted extension), trailing punctuation trimmed, that
// ends in a known file extension (fileExts: so versions like 2.1.39, module
// names like Ash.Resource and arities like load/1 do not count) or is an
// absolute or ~/ path with at least two slashes; each once, and a bare name
// whose longer path is also named counts once, as the path.
//
// The other three are units: each bullet or numbered line, and each
// sentence of other prose lines, with at least minWords content words
// (shorter units are labels). A unit is
//   - a decision when it stands under a heading (a markdown heading, a
//     "N. Title:" line or a short line ending in a colon) that names
//     decisions or their kin (decision, problem solving, errors and fixes,
//     fix, approach, design, solution, chose), or when it states one: it
//     matches one of summaryPatterns or of decisionRE's verbs (decided,
//     chose, opted for, switched to, instead of, rather than, prefer, fixed
//     by, resolved by, replaced, rewrote, settled on, went with, should
//     always/never);
//   - a pending task when it stands under a heading that names what is
//     left to do (pending, remaining, next step, still need, to do, open
//     tasks, not yet);
//   - an error fixed when it stands under a heading that names errors
//     (Claude Code's "Errors and fixes").
//
// A unit can be of more than one kind.
func Parse(summary string) Summary {
	body := stripBoilerplate(summary)
	var prose []string
	inCode := false
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			prose = append(prose, l)
		}
	}
	var out Summary
	out.Files = findPaths(strings.Join(prose, "\n"))
	add := func(list *[]string, u string) {
		if !slices.Contains(*list, u) {
			*list = append(*list, u)
		}
	}
	heading := ""
	for _, l := range prose {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if h, ok := headingOf(t); ok {
			heading = h
			continue
		}
		var units []string
		if bulletRE.MatchString(t) {
			units = []string{bulletRE.ReplaceAllString(t, "")}
		} else {
			units = sentences(t)
		}
		for _, u := range units {
			u = cleanUnit(u)
			if len(contentWords(u)) < minWords {
				continue
			}
			if decisionHeadingRE.MatchString(heading) || decisionRE.MatchString(u) || len(enrich.Decisions(summaryPatterns, u)) > 0 {
				add(&out.Decisions, u)
			}
			if pendingHeadingRE.MatchString(heading) {
				add(&out.Pending, u)
			}
			if errorHeadingRE.MatchString(heading) {
				add(&out.Errors, u)
			}
		}
	}
	return out
}

// summaryPatterns are the decision patterns a summary's units are read
// with: a copy of enrich.DefaultPatterns as they were when the check was
// written. The check used the detector's own list before, so that each
// improvement of the detector changed which units of a summary counted as
// decisions, and with them the figure it was meant to move; the rule that
// reads the summaries must stay put while the detector changes.
var summaryPatterns = []enrich.Pattern{
	{Name: "lets_use", Expr: `(?i)\blet['’]?s (go with|use|choose|pick|stick with|switch to)\b`, Weight: 0.9, Keywords: []string{"let's", "let’s", "lets "}},
	{Name: "decided_to", Expr: `(?i)\bdecided (to|on|that)\b`, Weight: 0.9, Keywords: []string{"decided"}},
	{Name: "approach_is", Expr: `(?i)\bthe approach (is|will be)\b`, Weight: 0.8, Keywords: []string{"approach"}},
	{Name: "choosing_over", Expr: `(?i)\bchoos(e|ing) \S.{0,80}? over\b`, Weight: 0.9, Keywords: []string{"choos"}},
	{Name: "going_with", Expr: `(?i)\b(we|i)('ll| will| are|'re| am|'m) go(ing)? with\b`, Weight: 0.8, Keywords: []string{"go with", "going with"}},
	{Name: "architecture", Expr: `(?i)\barchitecture\b.{0,120}\b(should|will)\b`, Weight: 0.7, Keywords: []string{"architecture"}},
	{Name: "pattern_for", Expr: `(?i)\bpattern for this\b`, Weight: 0.7, Keywords: []string{"pattern"}},
	{Name: "dont_because", Expr: `(?i)\b(don'?t|do not) (do|use)\b.{0,160}\bbecause\b`, Weight: 0.8, Keywords: []string{"don't", "dont", "do not"}},
	{Name: "avoid_because", Expr: `(?i)\bavoid\b.{0,160}\bbecause\b`, Weight: 0.8, Keywords: []string{"avoid"}},
	{Name: "failed_approach", Expr: `(?i)\bthis (broke|failed)\b`, Weight: 0.7, Keywords: []string{"this broke", "this failed"}},
	{Name: "remember_this", Expr: `(?i)\bremember (this|that)\b`, Weight: 1.0, Keywords: []string{"remember th"}},
	{Name: "note_future", Expr: `(?i)\bnote for (the )?(future|later)\b`, Weight: 1.0, Keywords: []string{"note for"}},
	{Name: "decision_is", Expr: `(?i)\b(the |our )?decision (is|was)\b`, Weight: 0.9, Keywords: []string{"decision"}},
	{Name: "prefer_over", Expr: `(?i)\bprefer(s|red|ring)?\b.{1,80}\bover\b`, Weight: 0.75, Keywords: []string{"prefer"}},
	{Name: "instead_of", Expr: `(?i)\b(use|using|used|switch(ed)? to|went with|chose|opted for)\b.{1,80}\binstead of\b`, Weight: 0.7, Keywords: []string{"instead of"}},
	{Name: "rather_than", Expr: `(?i)\b(use|using|keep|go with)\b.{1,80}\brather than\b`, Weight: 0.6, Keywords: []string{"rather than"}},
	{Name: "will_use", Expr: `(?i)\b(i|we)('ll| will| are going to) use\b`, Weight: 0.6, Keywords: []string{"i'll use", "we'll use", "i will use", "we will use", "going to use"}},
}

const minWords = 4

var (
	pathRE            = regexp.MustCompile(`(?:~|\.{1,2})?/?(?:[A-Za-z0-9_@.+-]+/)+[A-Za-z0-9_@.+-]+|\b[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*\.[a-z][a-z0-9]{0,5}\b`)
	bulletRE          = regexp.MustCompile(`^(?:[-*+]|\d+[.)])\s+`)
	numberedHeadRE    = regexp.MustCompile(`^\d+[.)]\s+([A-Z][^:.!?]{2,60}):\s*$`)
	boldHeadRE        = regexp.MustCompile(`^\*\*([^*]{2,60})\*\*:?\s*$`)
	decisionHeadingRE = regexp.MustCompile(`(?i)decision|problem solving|errors? and fix|\bfix|approach|design|solution|chose`)
	pendingHeadingRE  = regexp.MustCompile(`(?i)pending|remaining|next step|still (need|to do)|to-?do|open tasks|not yet|left to do`)
	errorHeadingRE    = regexp.MustCompile(`(?i)\berrors?\b`)
	decisionRE        = regexp.MustCompile(`(?i)\b(decided|decide to|chose|chosen|opted for|switch(ed)? to|instead of|rather than|prefer(s|red)?|fixed by|resolved by|replaced|rewrote|rewritten|settled on|went with|should (always|never))\b`)
	sentenceRE        = regexp.MustCompile(`[.!?](?:\s+|$)`)
	wordRE            = regexp.MustCompile(`[a-z0-9_][a-z0-9_./-]*[a-z0-9_]|[a-z0-9]`)
)

// stripBoilerplate drops the preamble Claude Code puts before a summary
// and the pointer to the transcript it puts after one.
func stripBoilerplate(s string) string {
	if i := strings.Index(s, "The summary below covers the earlier portion of the conversation."); i >= 0 {
		s = s[i+len("The summary below covers the earlier portion of the conversation."):]
	}
	if i := strings.Index(s, "If you need specific details from before compaction"); i >= 0 {
		s = s[:i]
	}
	return s
}

// fileExts are the extensions a bare name (no slash) or the last part of
// a relative path must have to count as a file: source, config, docs and
// data files. Without the list, module and function names (Sandbox.mode,
// String.t, create_ref/2) would count.
var fileExts = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`ex exs heex eex erl js mjs cjs ts tsx jsx go mod sum py pyi rb rs java kt kts scala
		c h cc cpp hpp cs swift m mm php lua pl r jl dart zig nim hs ml clj sh bash zsh fish ps1 bat
		md mdx rst txt json jsonl ndjson yaml yml toml ini cfg conf env lock xml html htm css scss sass less
		vue svelte sql proto graphql gql ipynb csv tsv parquet db sqlite vscdb gradle cmake mk make dockerfile tf`) {
		fileExts[e] = true
	}
}

// isFile applies the file rule to one match of pathRE.
func isFile(m string) bool {
	ext := ""
	if i := strings.LastIndexByte(m, '.'); i > strings.LastIndexByte(m, '/') {
		ext = strings.ToLower(m[i+1:])
	}
	switch {
	case fileExts[ext]:
		return true
	case strings.HasPrefix(m, "/") || strings.HasPrefix(m, "~/"):
		return strings.Count(m, "/") >= 2 // /proc/sys/kernel, ~/.claude/x
	}
	return false
}

func findPaths(text string) []string {
	var out []string
	for _, m := range pathRE.FindAllString(text, -1) {
		m = strings.TrimRight(m, ".,:;)-")
		if !isFile(m) || slices.Contains(out, m) {
			continue
		}
		out = append(out, m)
	}
	// A bare name whose path is also named counts once, as the path.
	var kept []string
	for _, p := range out {
		bare := !strings.Contains(p, "/")
		if bare && slices.ContainsFunc(out, func(q string) bool { return q != p && filepath.Base(q) == p }) {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

func headingOf(t string) (string, bool) {
	if strings.HasPrefix(t, "#") {
		return strings.TrimSpace(strings.TrimLeft(t, "#")), true
	}
	if m := numberedHeadRE.FindStringSubmatch(t); m != nil {
		return m[1], true
	}
	if m := boldHeadRE.FindStringSubmatch(t); m != nil {
		return m[1], true
	}
	if strings.HasSuffix(t, ":") && !bulletRE.MatchString(t) && len(t) < 40 {
		return strings.TrimSuffix(t, ":"), true
	}
	return "", false
}

// sentences cuts a line at ". ", "! ", "? " and its end; a dot inside a
// name (file.ex, 2.1.39) is followed by no space and does not cut.
func sentences(t string) []string {
	var out []string
	for {
		loc := sentenceRE.FindStringIndex(t)
		if loc == nil {
			break
		}
		out = append(out, t[:loc[0]+1])
		t = t[loc[1]:]
	}
	if strings.TrimSpace(t) != "" {
		out = append(out, t)
	}
	return out
}

func cleanUnit(u string) string {
	u = strings.NewReplacer("**", "", "`", "").Replace(u)
	return strings.TrimSpace(u)
}

// stopwords are left out of the content words of a decision.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the a an and or but of to in on at by for with from into onto as is are was were be been being
		it its this that these those there then than so such not no yes do does did done have has had will would should could can
		may might must shall we i you he she they them our your their my me us his her which who whom what when where why how
		all any each every some more most other also just only very via per about after before over under up down out off again
		new using use used uses now still yet if else while because since until once both either neither own same too`) {
		stopwords[w] = true
	}
}

// contentWords are the lower-cased words of a text (names with dots,
// slashes, dashes and underscores kept whole) less stopwords and words of
// one or two characters.
func contentWords(s string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(s), -1) {
		if len(w) > 2 && !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

// FindFiles marks the files the pack names: a file counts when its path
// or its base name appears anywhere in the pack's text.
func FindFiles(files []string, pack string) []Item {
	var out []Item
	for _, f := range files {
		found := strings.Contains(pack, f) || strings.Contains(pack, filepath.Base(f))
		out = append(out, Item{Text: f, Found: found})
	}
	return out
}

// DecisionThreshold is the share of a unit's (a decision's, a pending
// task's, an error's) distinct content words (compared as FindUnits
// says) that one pack item must contain for the unit to count as carried:
// 0.6, enough that the item states the same thing in mostly the same
// terms, while allowing the summary's rewording (-threshold changes it).
var DecisionThreshold = 0.6

// FindDecisions is FindUnits for decisions.
func FindDecisions(decisions, items []string) []Item { return FindUnits(decisions, items) }

// FindUnits marks the units (decisions, pending tasks, errors) a pack item
// carries: one included item must hold at least DecisionThreshold of the
// unit's distinct content words. Words are compared as the same word when
// they differ only by inflection (renamed, renaming and rename; functions
// and function: their Snowball English stems), a function's arity (an
// Elixir or Erlang name/1 is the name) or the parts of a compound the
// other text writes apart (table-rewrite and "table rewrite",
// compile/test/credo and "compile, test, credo"): a summary states in its
// own grammar what the session said, and the check counts what is said,
// not the grammar. Names (dots, underscores, digits) are compared whole.
func FindUnits(decisions, items []string) []Item {
	sets := make([]map[string]bool, len(items))
	for i, t := range items {
		sets[i] = termSet(t)
	}
	var out []Item
	for _, d := range decisions {
		words := unitTerms(d)
		best := 0.0
		for _, set := range sets {
			n := 0
			for _, w := range words {
				if holds(set, w) {
					n++
				}
			}
			best = max(best, float64(n)/float64(len(words)))
		}
		out = append(out, Item{Text: d, Found: best >= DecisionThreshold, Score: best})
	}
	return out
}

// arityRE is a function's arity after its name (load_session_data/1).
var arityRE = regexp.MustCompile(`/\d+$`)

// termKey is the form a content word is compared in: its arity dropped,
// and a plain word (letters only) stemmed.
func termKey(w string) string {
	w = arityRE.ReplaceAllString(w, "")
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" {
		env := snowballstem.NewEnv(w)
		english.Stem(env)
		return env.Current()
	}
	return w
}

// compoundParts are the parts of a compound of plain words joined by
// dashes or slashes (table-rewrite, compile/test/credo), or nil.
func compoundParts(w string) []string {
	w = arityRE.ReplaceAllString(w, "")
	parts := strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '/' })
	if len(parts) < 2 {
		return nil
	}
	for _, p := range parts {
		if len(p) < 2 || strings.Trim(p, "abcdefghijklmnopqrstuvwxyz") != "" {
			return nil
		}
	}
	return parts
}

// termSet is the keys of a text's content words, with the base name of
// each path (lib/a/b.ex holds b.ex) and the parts of each compound.
func termSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range contentWords(text) {
		set[termKey(w)] = true
		if strings.Contains(w, "/") {
			set[termKey(filepath.Base(w))] = true
		}
		for _, p := range compoundParts(w) {
			set[termKey(p)] = true
		}
	}
	return set
}

// unitTerms are a unit's distinct content words, one per key.
func unitTerms(unit string) []string {
	var out, keys []string
	for _, w := range contentWords(unit) {
		if k := termKey(w); !slices.Contains(keys, k) {
			keys = append(keys, k)
			out = append(out, w)
		}
	}
	return out
}

// holds tells whether a text's term set holds a unit's word: by its key,
// or every part of a compound.
func holds(set map[string]bool, w string) bool {
	if set[termKey(w)] {
		return true
	}
	parts := compoundParts(w)
	for _, p := range parts {
		if !set[termKey(p)] {
			return false
		}
	}
	return len(parts) > 0
}

func distinct(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func count(items []Item) (found int) {
	for _, it := range items {
		if it.Found {
			found++
		}
	}
	return found
}

// Totals are the files and decisions found and named over every session.
func (r *Report) Totals() (filesFound, files, decisionsFound, decisions int) {
	t := r.Sum()
	return t.Files.Found, t.Files.Named, t.Decisions.Found, t.Decisions.Named
}

// Tally is how many of one kind of item the summaries name and the packs
// carry.
type Tally struct{ Found, Named, Reachable, FoundReachable int }

func (t *Tally) add(items []Item) {
	t.Found += count(items)
	t.Named += len(items)
	for _, it := range items {
		if it.Reachable {
			t.Reachable++
			if it.Found {
				t.FoundReachable++
			}
		}
	}
}

// OfReachable is the tally of the items the transcript holds.
func (t Tally) OfReachable() Tally { return Tally{Found: t.FoundReachable, Named: t.Reachable} }

func (t Tally) String() string {
	return fmt.Sprintf("%d/%d\t%s", t.Found, t.Named, pct(t.Found, t.Named))
}

// Tallies are the four kinds' tallies.
type Tallies struct{ Files, Decisions, Pending, Errors Tally }

func (s *SessionResult) tallies() Tallies {
	var t Tallies
	t.Files.add(s.Files)
	t.Decisions.add(s.Decisions)
	t.Pending.add(s.Pending)
	t.Errors.add(s.Errors)
	return t
}

// Sum is the tallies over every session.
func (r *Report) Sum() Tallies { return r.sumOf(func(string) bool { return true }) }

// sumOf is the tallies over the sessions whose id keep accepts.
func (r *Report) sumOf(keep func(id string) bool) Tallies {
	var t Tallies
	for i := range r.Sessions {
		if !keep(r.Sessions[i].SessionID) {
			continue
		}
		s := r.Sessions[i].tallies()
		for _, p := range [][2]*Tally{{&t.Files, &s.Files}, {&t.Decisions, &s.Decisions}, {&t.Pending, &s.Pending}, {&t.Errors, &s.Errors}} {
			p[0].Found += p[1].Found
			p[0].Named += p[1].Named
			p[0].Reachable += p[1].Reachable
			p[0].FoundReachable += p[1].FoundReachable
		}
	}
	return t
}

// HeldOut tells the sessions whose summaries are held out: the pack's
// rules are tuned by reading the other summaries and their transcripts,
// and the held-out half shows whether what was learnt holds on summaries
// not read. The split is by session, fixed before any tuning: the first
// byte of the SHA-256 of the session id is odd.
func HeldOut(sessionID string) bool {
	h := sha256.Sum256([]byte(sessionID))
	return h[0]%2 == 1
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// Print writes the per-session figures and the totals.
func (r *Report) Print(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "continuity: what a %d-token smart pack from before each compaction carries of the compaction summary (unit threshold %.2f)\n", r.Budget, DecisionThreshold)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "session\tplatform\tboundary line\tfiles\t\tdecisions\t\tpending tasks\t\terrors fixed\t\tpack tokens\tpack items\t")
	for _, s := range r.Sessions {
		t := s.tallies()
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t\n", prefix(s.SessionID), s.Platform, s.Line,
			t.Files, t.Decisions, t.Pending, t.Errors, s.PackTokens, s.PackItems)
	}
	t := r.Sum()
	fmt.Fprintf(tw, "all (%d)\t\t\t%s\t%s\t%s\t%s\t\t\t\n", len(r.Sessions), t.Files, t.Decisions, t.Pending, t.Errors)
	fmt.Fprintf(tw, "reachable\t\t\t%s\t%s\t%s\t%s\t\t\t\n", t.Files.OfReachable(), t.Decisions.OfReachable(), t.Pending.OfReachable(), t.Errors.OfReachable())
	held := 0
	for _, s := range r.Sessions {
		if HeldOut(s.SessionID) {
			held++
		}
	}
	h := r.sumOf(HeldOut)
	fmt.Fprintf(tw, "held out (%d)\t\t\t%s\t%s\t%s\t%s\t\t\t\n", held, h.Files, h.Decisions, h.Pending, h.Errors)
	fmt.Fprintf(tw, "held out, reachable\t\t\t%s\t%s\t%s\t%s\t\t\t\n", h.Files.OfReachable(), h.Decisions.OfReachable(), h.Pending.OfReachable(), h.Errors.OfReachable())
	tw.Flush()
	fmt.Fprintln(w, "reachable: of the items the transcript before the boundary holds (a file anywhere, a unit within a stretch of consecutive messages; the rest the summary learnt elsewhere)")
	fmt.Fprintln(w, "held out: the sessions whose summaries the pack's rules were not tuned on (see HeldOut)")
	if len(r.Sessions) > 1 {
		c := r.Control
		fmt.Fprintf(w, "control: each summary's units against the other sessions' packs (what the matching credits a pack that does not carry them): decisions %s, pending tasks %s, errors fixed %s\n",
			strings.ReplaceAll(c.Decisions.String(), "\t", " "), strings.ReplaceAll(c.Pending.String(), "\t", " "), strings.ReplaceAll(c.Errors.String(), "\t", " "))
	}
	if !verbose {
		return
	}
	for _, s := range r.Sessions {
		fmt.Fprintf(w, "\nsession %s (%s, boundary at line %d)\n", s.SessionID, filepath.Base(s.File), s.Line)
		for _, it := range s.Files {
			fmt.Fprintf(w, "  file     %s%s %s\n", mark(it.Found), unreachable(it), it.Text)
		}
		for _, kind := range []struct {
			name  string
			items []Item
		}{{"decision", s.Decisions}, {"pending ", s.Pending}, {"error   ", s.Errors}} {
			for _, it := range kind.items {
				fmt.Fprintf(w, "  %s %s%s %.2f %.160s\n", kind.name, mark(it.Found), unreachable(it), it.Score, it.Text)
			}
		}
	}
}

// unreachable marks an item the transcript does not hold.
func unreachable(it Item) string {
	if it.Reachable {
		return " "
	}
	return "?"
}

func mark(found bool) string {
	if found {
		return "+"
	}
	return "-"
}

func prefix(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
