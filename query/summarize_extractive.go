package query

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/excerpt"
)

// extractive summarizes a session without a model: a line of facts (size,
// span, the tools and files used most), the session's latest chapter
// labels, then the k most informative sentences of its prompts, answers,
// subagent reports and compaction summaries, in the order they were said.
//
// Sentences come from the texts with code blocks, tables and markup left
// out; a candidate has at least four words (or ten characters of CJK text)
// and is mostly letters. Each gets a score:
//
//	score = source × topicality + cues + position − narration
//
// where
//
//   - topicality is the sum, over the sentence's distinct content words, of
//     ln(1 + how often the word occurs in the whole session), divided by
//     the square root of their number, then scaled so that the best
//     sentence has 3: sentences dense in the words the session keeps
//     returning to are about its subject;
//   - source is 1.2 for a subagent report or a compaction summary (already
//     a digest), 1.1 for a prompt (the user's intent), 1 for an answer;
//   - cues are +2 for decision language (decided, instead of, because,
//     going with, switch to …), +1 for an outcome (fixed, passes,
//     implemented, root cause, fails …), +0.5 for something specific (a
//     path, a file name, code in backticks);
//   - position is +2 for the first sentence of the first prompt (the goal)
//     and +1 for the answers of the last two exchanges (where it ended);
//   - narration is 2 for the agent narrating its next step ("Let me check
//     …", "Now I'll …", "Perfect!").
//
// The best are taken greedily, skipping a sentence that shares half its
// words with one already taken and taking at most max(2, k/3) from one
// exchange or report, so one long answer cannot fill the summary. Ties go
// to the earlier sentence: the result depends only on the session.
func extractive(m *material, k int) string {
	var b strings.Builder
	b.WriteString(m.facts())
	if len(m.labels) > 0 {
		labels := m.labels[max(0, len(m.labels)-6):]
		b.WriteString("\nChapters: " + strings.Join(labels, "; ") + ".")
	}
	picked := pickSentences(m, k)
	if len(picked) > 0 {
		b.WriteString("\n")
	}
	for _, c := range picked {
		b.WriteString("\n- " + c.origin() + ": " + c.text)
	}
	return b.String()
}

// candidate sentence of the extractive summary.
type sentence struct {
	text   string
	terms  []string // distinct content words
	seg    int      // index of its segment
	pos    int      // index within the segment's sentences, prompt first
	source string   // prompt, answer, report, compaction
	number int64    // the exchange's number
	agent  string
	score  float64
}

func (s sentence) origin() string {
	switch s.source {
	case "prompt", "answer":
		who := "user"
		if s.source == "answer" {
			who = "agent"
		}
		if s.agent != "" {
			return fmt.Sprintf("#%d %s (%s)", s.number, who, s.agent)
		}
		return fmt.Sprintf("#%d %s", s.number, who)
	case "report":
		return "subagent report"
	}
	return "compaction summary"
}

var sourceWeight = map[string]float64{"report": 1.2, "compaction": 1.2, "prompt": 1.1, "answer": 1}

func pickSentences(m *material, k int) []sentence {
	var cands []sentence
	freq := map[string]int{}
	lastEx := -1 // index of the second-to-last exchange segment
	nEx := 0
	for i := len(m.segments) - 1; i >= 0 && nEx < 2; i-- {
		if m.segments[i].kind == "exchange" {
			lastEx = i
			nEx++
		}
	}
	firstPrompt := true
	for i, seg := range m.segments {
		pos := 0
		add := func(text, source string) {
			for _, t := range splitSentences(text) {
				s := sentence{text: t, seg: i, pos: pos, source: source, number: seg.number, agent: seg.agent}
				words := contentWords(t)
				for _, w := range words {
					freq[w]++
				}
				s.terms = distinct(words)
				pos++
				if !informative(t) {
					continue
				}
				cands = append(cands, s)
			}
		}
		switch seg.kind {
		case "exchange":
			add(seg.prompt, "prompt")
			add(seg.response, "answer")
		default:
			add(seg.response, seg.kind)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	best := 0.0
	topical := make([]float64, len(cands))
	for i, c := range cands {
		sum := 0.0
		for _, t := range c.terms {
			sum += math.Log1p(float64(freq[t]))
		}
		if len(c.terms) > 0 {
			topical[i] = sum / math.Sqrt(float64(len(c.terms)))
		}
		best = max(best, topical[i])
	}
	for i := range cands {
		c := &cands[i]
		t := 0.0
		if best > 0 {
			t = 3 * topical[i] / best
		}
		weight := sourceWeight[c.source]
		c.score = weight*t + cueScore(c.text)
		if firstPrompt && c.source == "prompt" {
			c.score += 2
			firstPrompt = false
		}
		if lastEx >= 0 && c.seg >= lastEx && c.source == "answer" {
			c.score++
		}
		if narration(c.text) {
			c.score -= 2
		}
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case cands[a].score > cands[b].score:
			return -1
		case cands[a].score < cands[b].score:
			return 1
		}
		return 0 // stable: the earlier sentence first
	})
	perSeg := max(2, k/3)
	taken := map[int]int{}
	var picked []sentence
	for _, i := range order {
		if len(picked) == k {
			break
		}
		c := cands[i]
		if taken[c.seg] >= perSeg {
			continue
		}
		dup := false
		for _, p := range picked {
			if overlap(c.terms, p.terms) >= 0.5 {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		taken[c.seg]++
		picked = append(picked, c)
	}
	slices.SortFunc(picked, func(a, b sentence) int {
		if a.seg != b.seg {
			return a.seg - b.seg
		}
		return a.pos - b.pos
	})
	return picked
}

// splitSentences cuts a text into sentences: fenced code, tables, XML-ish
// tags and markdown markers out; a line break or a sentence end (. ! ? and
// their CJK forms followed by a space) ends a sentence. Long sentences are
// cut at a word boundary.
func splitSentences(text string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || trim == "" || strings.HasPrefix(trim, "|") || strings.HasPrefix(trim, "<") {
			continue
		}
		trim = strings.TrimLeft(trim, "#>*-+ \t")
		if i := strings.IndexFunc(trim, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && i < 4 &&
			(strings.HasPrefix(trim[i:], ". ") || strings.HasPrefix(trim[i:], ") ")) {
			trim = trim[i+2:] // "1. item"
		}
		trim = strings.ReplaceAll(trim, "**", "")
		start := 0
		rs := []rune(trim)
		for i, r := range rs {
			end := false
			switch r {
			case '。', '！', '？':
				end = true
			case '.', '!', '?':
				end = i+1 == len(rs) || rs[i+1] == ' '
			}
			if end {
				out = appendSentence(out, string(rs[start:i+1]))
				start = i + 1
			}
		}
		out = appendSentence(out, string(rs[start:]))
	}
	return out
}

const maxSentenceRunes = 300

func appendSentence(out []string, s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return out
	}
	if utf8.RuneCountInString(s) > maxSentenceRunes {
		r := excerpt.PrefixRunes(s, maxSentenceRunes)
		cut := strings.LastIndexByte(r, ' ')
		if cut < len(r)/2 {
			cut = len(r)
		}
		s = strings.TrimRight(r[:cut], " ,;:") + excerpt.Ellipsis
	}
	return append(out, s)
}

// informative reports whether a sentence can stand in a summary: long
// enough, mostly letters, not boilerplate the agents write.
func informative(s string) bool {
	words := len(strings.Fields(s))
	letters, cjk, n := 0, 0, 0
	for _, r := range s {
		n++
		switch {
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r):
			cjk++
			letters++
		case unicode.IsLetter(r) || r == ' ':
			letters++
		}
	}
	if words < 4 && cjk < 10 {
		return false
	}
	if float64(letters) < 0.6*float64(n) {
		return false
	}
	low := strings.ToLower(s)
	for _, p := range boilerplate {
		if strings.HasPrefix(low, p) {
			return false
		}
	}
	return true
}

var boilerplate = []string{
	"caveat:", "[request interrupted", "this session is being continued", "analysis:", "summary:",
	"please continue the conversation", "tool_use_id", "no response requested",
}

var decisionCues = []string{"decided", "decide ", "decision", "chose ", "choose ", "instead of", "because", "going with",
	"switch to", "switched to", "we'll use", "will use", "let's use", "prefer", "rather than", "trade-off", "tradeoff"}

var outcomeCues = []string{"fixed", "fixes", "works", "working now", "passes", "passing", "all tests", "implemented",
	"added", "created", "removed", "resolved", "root cause", "caused by", "the cause", "fails", "failed", "broke", "error:"}

func cueScore(s string) float64 {
	low := strings.ToLower(s)
	score := 0.0
	if containsAny(low, decisionCues) {
		score += 2
	}
	if containsAny(low, outcomeCues) {
		score++
	}
	if strings.Contains(s, "`") || strings.Contains(s, "/") || fileLike(s) {
		score += 0.5
	}
	return score
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// fileLike reports a word like name.ext.
func fileLike(s string) bool {
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, ".,;:()'\"")
		if i := strings.LastIndexByte(w, '.'); i > 0 && i < len(w)-1 && len(w)-i <= 5 {
			ext := w[i+1:]
			if strings.IndexFunc(ext, func(r rune) bool { return !unicode.IsLower(r) && !unicode.IsDigit(r) }) < 0 {
				return true
			}
		}
	}
	return false
}

var narrationStarts = []string{"let me", "now let me", "now i", "i'll ", "i will ", "let's check", "let's look", "first, let",
	"perfect", "great", "good", "excellent", "ok", "okay", "alright", "now, let", "next, let"}

func narration(s string) bool {
	low := strings.ToLower(s)
	for _, p := range narrationStarts {
		if strings.HasPrefix(low, p) {
			return true
		}
	}
	return false
}

// contentWords are a text's lowercase words of three or more letters or
// digits (not all digits), stop words left out; a run of CJK characters is
// one word.
func contentWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		if utf8.RuneCountInString(w) < 3 || stopWords[w] || strings.IndexFunc(w, unicode.IsLetter) < 0 {
			continue
		}
		out = append(out, w)
	}
	return out
}

func distinct(words []string) []string {
	out := slices.Clone(words)
	slices.Sort(out)
	return slices.Compact(out)
}

// overlap is the Jaccard similarity of two sorted word sets.
func overlap(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// stopWords are English function words and the words every agent
// transcript is full of, which say nothing about a session's subject.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and for are but not you your yours all any can had has have her was one our out
day get him his how its may new now old see two who boy did man way she use uses used using this that with from they
will would there their them then than what when where which while whom why into onto over under about above after
again against been before being below between both down during each few further here hers herself himself itself
just more most myself nor off once only other ours ourselves own same should some such themselves these those
through too until very were also let lets let's i'll i've i'm we'll we're it's that's don't doesn't didn't can't won't
isn't aren't wasn't need needs want wants like look looks looking check checking make makes made going okay yes sure
please thanks thank could might must shall does done doing got gets getting able via per etc something anything
everything nothing thing things way ways want first next now still already well really actually`) {
		m[w] = true
	}
	return m
}()
