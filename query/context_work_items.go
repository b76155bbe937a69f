package query

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/excerpt"
)

// replyItems are what the assistant said and did in each exchange, in
// order: its words, its thinking (cut to thoughtMax), a line per tool call
// (consecutive reads of files in one line) and the errors they met. A
// long exchange is cut into parts of about replyPartMax tokens at steps,
// each an item of its own, so that the budget keeps the latest part when
// it cannot keep all.
func replyItems(steps []step, exchanges []exchangeStart) []ContextItem {
	var items []ContextItem
	for i, ex := range exchanges {
		var end time.Time
		if i+1 < len(exchanges) {
			end = exchanges[i+1].ts
		}
		var lines []string
		var starts []time.Time
		for _, s := range steps {
			if s.ts.Before(ex.ts) && i > 0 || !end.IsZero() && !s.ts.Before(end) {
				continue
			}
			l := stepLine(s)
			if l == "" {
				continue
			}
			if n := len(lines); n > 0 && s.kind == "tool" && isRead(s.tool) && strings.HasPrefix(lines[n-1], "→ "+s.tool+" ") {
				lines[n-1] += ", " + strings.TrimPrefix(s.call, s.tool+" ")
				continue
			}
			lines = append(lines, l)
			starts = append(starts, s.ts)
		}
		if len(lines) == 0 {
			continue
		}
		var parts [][2]int
		from, size := 0, 0
		for j, l := range lines {
			t := EstimateTokens(l)
			if j > from && size+t > replyPartMax {
				parts = append(parts, [2]int{from, j})
				from, size = j, 0
			}
			size += t
		}
		parts = append(parts, [2]int{from, len(lines)})
		for k, p := range parts {
			title := replyTitle(ex.prompt)
			if len(parts) > 1 {
				title = strings.TrimSpace(fmt.Sprintf("%s, part %d of %d", title, k+1, len(parts)))
			}
			ts := starts[p[0]]
			if k == 0 {
				ts = ex.ts
			}
			items = append(items, ContextItem{Kind: "reply", Priority: 5, TS: ts, Title: title, Text: strings.Join(lines[p[0]:p[1]], "\n\n")})
		}
	}
	return items
}

func isRead(tool string) bool {
	return strings.EqualFold(tool, "Read") || strings.EqualFold(tool, "read_file")
}

// stepLine is a step as a reply prints it.
func stepLine(s step) string {
	switch s.kind {
	case "said":
		return s.text
	case "thought":
		return "(thinking) " + cut(s.text, thoughtMax)
	case "tool":
		return "→ " + s.call
	case "error":
		return "✗ " + strings.ReplaceAll(s.text, "\n", "\n  ")
	}
	return ""
}

// cut is text cut to at most n bytes (never inside a redaction marker),
// with an ellipsis when it was longer.
func cut(text string, n int) string {
	text = strings.TrimSpace(text)
	if len(text) <= n {
		return text
	}
	return strings.TrimRight(excerpt.Prefix(text, n-len(excerpt.Ellipsis)), " \t\n") + excerpt.Ellipsis
}

// firstSentences is the start of a text: its first sentences within n
// bytes (at least the first, cut to n), on one line.
func firstSentences(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= n {
		return text
	}
	end := 0
	for i := 0; i < len(text) && i < n; i++ {
		if k := excerpt.MarkerLen(text[i:]); k > 0 {
			i += k - 1
			continue
		}
		if c := text[i]; (c == '.' || c == '!' || c == '?') && i+1 < len(text) && text[i+1] == ' ' {
			end = i + 1
		}
	}
	if end == 0 {
		return cut(text, n)
	}
	return text[:end]
}

// errorsItems list the errors the session's tools met, each with the call
// that met it and what the assistant said or thought next (how it read the
// error, what it did about it): the newest first while they fit in max
// tokens (limit), printed oldest first, then the older ones at the lowest priority. An error met again with the same first line
// is listed once, where it was last met.
func errorsItems(steps []step, limit int) []ContextItem {
	type entry struct {
		ts   time.Time
		text string
	}
	var entries []entry
	errorKey := func(text string) string {
		return strings.ToLower(strings.TrimRightFunc(strings.SplitN(text, "\n", 2)[0], func(r rune) bool { return r >= '0' && r <= '9' || r == ' ' }))
	}
	for i, s := range latestOnce(steps, "error", errorKey) {
		var b strings.Builder
		fmt.Fprintf(&b, "- %s\n  ✗ %s\n", cmpOr(s.call, s.tool), strings.ReplaceAll(s.text, "\n", "\n    "))
		// What followed: what the assistant said or thought of the error
		// (its first words, then up to afterErrorSteps more until it
		// acted), and the first edit it made before it ran a command again
		// or met another error — the fix, as a summary pairs them.
		// Past its first words, what it said counts only on the way to a
		// fix.
		var then []string
		fix := ""
		for _, next := range steps[i+1:] {
			if next.kind == "error" || next.kind == "tool" && next.shell {
				break
			}
			if len(then) < afterErrorSteps && (next.kind == "said" || next.kind == "thought") {
				then = append(then, firstSentences(next.text, afterErrorMax))
			}
			if next.kind == "tool" && next.edit {
				lines := strings.Split(next.call, "\n")
				fix = strings.Join(lines[:min(len(lines), fixLines)], "\n  ")
				break
			}
		}
		if fix == "" {
			then = then[:min(len(then), 1)]
		}
		for _, t := range then {
			fmt.Fprintf(&b, "  then: %s\n", t)
		}
		if fix != "" {
			fmt.Fprintf(&b, "  fix: %s\n", fix)
		}
		entries = append(entries, entry{s.ts, b.String()})
	}
	// The newest that fit in limit make the item; the older ones follow
	// in items of overflowMax tokens at overflowPriority, which a pack
	// takes only with the room everything else left.
	var items []ContextItem
	flush := func(g []entry, prio int) {
		if len(g) == 0 {
			return
		}
		slices.Reverse(g)
		var b strings.Builder
		for _, e := range g {
			b.WriteString(e.text)
		}
		it := ContextItem{Kind: "errors", Priority: prio, TS: g[0].ts, Text: b.String()}
		if prio == overflowPriority {
			it.Title = "earlier"
		}
		items = append(items, it)
	}
	var cur []entry
	used, room, prio := 0, limit, 4
	for _, e := range entries {
		t := EstimateTokens(e.text)
		if used+t > room {
			flush(cur, prio)
			cur, used, room, prio = nil, 0, overflowMax, overflowPriority
		}
		if t <= room {
			used += t
			cur = append(cur, e)
		}
	}
	flush(cur, prio)
	return items
}

// overflowMax bounds each item that carries the errors or decisions their
// share of the budget did not hold; overflowPriority is theirs, the
// lowest, after the files read.
const (
	overflowMax      = 800
	overflowPriority = maxPriority
)

// latestOnce yields the steps of kind, newest first, with their index:
// of the steps whose texts have the same key, only the last.
func latestOnce(steps []step, kind string, key func(text string) string) iter.Seq2[int, step] {
	return func(yield func(int, step) bool) {
		seen := map[string]bool{}
		for i := len(steps) - 1; i >= 0; i-- {
			s := steps[i]
			if s.kind != kind {
				continue
			}
			k := key(s.text)
			if seen[k] {
				continue
			}
			seen[k] = true
			if !yield(i, s) {
				return
			}
		}
	}
}

// fitTokens splits items into those that fit in limit tokens, taken in
// order while the text of each (by text) fits in what is left, and the
// rest; both keep the order of items.
func fitTokens[T any](items []T, limit int, text func(T) string) (kept, rest []T) {
	used := 0
	for _, it := range items {
		t := EstimateTokens(text(it))
		if used+t > limit {
			rest = append(rest, it)
			continue
		}
		used += t
		kept = append(kept, it)
	}
	return kept, rest
}

// recordsItem lists the messages the session's commands carried — its
// commits, the tasks it closed, the pull requests it opened (see
// commandMessage) —, each with the command it went with: the newest first
// while they fit in limit tokens, printed oldest first. A message given
// again (a commit retried after a hook refused it) is listed once, where
// it was last given.
func recordsItem(steps []step, limit int) (ContextItem, bool) {
	var found []step
	recordKey := func(text string) string { return strings.ToLower(strings.TrimSpace(strings.SplitN(text, "\n", 2)[0])) }
	for _, s := range latestOnce(steps, "record", recordKey) {
		found = append(found, s)
	}
	kept, _ := fitTokens(found, limit, recordLine)
	if len(kept) == 0 {
		return ContextItem{}, false
	}
	slices.Reverse(kept)
	var b strings.Builder
	for _, s := range kept {
		b.WriteString(recordLine(s))
	}
	return ContextItem{Kind: "records", Priority: 4, TS: kept[len(kept)-1].ts, Text: b.String()}, true
}

func recordLine(s step) string {
	return fmt.Sprintf("- %s: %s\n", s.call, strings.ReplaceAll(s.text, "\n", "\n  "))
}
