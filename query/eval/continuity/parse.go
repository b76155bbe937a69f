package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"

	"github.com/pos-lake/pos/transform/enrich"
)

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
