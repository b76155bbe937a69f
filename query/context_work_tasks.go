package query

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/lazyre"
)

// tasksItems carry what the session's task tracker last printed (see
// trackerCommandPattern): the latest output of each command, the newest
// first while they fit in limit tokens, printed oldest first. The last
// lists are where the work stood by the tracker's account: the tasks
// open, in progress and blocked, which a summary names as pending. What
// does not fit follows at overflowPriority, which a pack takes only with the room everything
// else left: a task's description also holds the decisions its work
// followed. Each of those is an item of its own, so that what room is
// left takes what fits.
func tasksItems(steps []step, limit int) []ContextItem {
	type entry struct {
		i    int
		ts   time.Time
		text string
	}
	var found []entry
	seen := map[string]bool{}
	closed := map[string]time.Time{} // a task the session closed -> when
	for _, s := range steps {
		if s.kind == "tool" && s.shell {
			for _, id := range closedTasks(s.call) {
				closed[id] = s.ts
			}
		}
	}
	// Lists first (what is ready, open, blocked), then single tasks, and
	// last the tasks the session closed after it showed them: what they
	// said is done, while the others are the work still open.
	class := func(s step) int {
		if trackerListRE().MatchString(s.call) {
			return 0
		}
		f := strings.Fields(s.call)
		if at, ok := closed[f[len(f)-1]]; ok && !at.Before(s.ts) {
			return 2
		}
		return 1
	}
	for pass := range 3 {
		for i := len(steps) - 1; i >= 0; i-- {
			s := steps[i]
			if s.kind != "tasks" || seen[s.call] || class(s) != pass {
				continue
			}
			seen[s.call] = true
			text := s.text
			if pass > 0 {
				text = cutTask(text, trackerShowMax)
			}
			found = append(found, entry{i, s.ts, fmt.Sprintf("- `%s`:\n    %s\n", strings.ReplaceAll(s.call, "`", "'"), strings.ReplaceAll(text, "\n", "\n    "))})
		}
	}
	kept, rest := fitTokens(found, limit, func(e entry) string { return e.text })
	var items []ContextItem
	flush := func(g []entry, prio int) {
		if len(g) == 0 {
			return
		}
		slices.SortFunc(g, func(a, b entry) int { return a.i - b.i })
		var b strings.Builder
		ts := time.Time{}
		for _, e := range g {
			b.WriteString(e.text)
			if e.ts.After(ts) {
				ts = e.ts
			}
		}
		it := ContextItem{Kind: "tasks", Priority: prio, TS: ts, Text: b.String()}
		if prio == overflowPriority {
			it.Title = "more"
		}
		items = append(items, it)
	}
	flush(kept, 4)
	for _, e := range rest {
		flush([]entry{e}, overflowPriority)
	}
	return items
}

// trackerCloseRE finds a tracker command that closes tasks (bd close A B,
// gh issue close 12, bd update A --status closed) in a call's line; its
// group is what follows the subcommand.
var trackerCloseRE = lazyre.New(`(?:^|[;&|(` + "`" + `]\s*|\s)(?:(?:bd|beads|gh issue|glab issue|tea issues?|jira issue)\s+close\s+([^;&|` + "`" + `]*)|(?:bd|beads)\s+update\s+([^;&|` + "`" + `]*?--status[= ]+["']?(?:closed|done)\b))`)

// closedTasks are the ids of the tasks a call's line closes.
func closedTasks(call string) []string {
	var ids []string
	for _, m := range trackerCloseRE().FindAllStringSubmatch(call, -1) {
		for _, f := range strings.Fields(m[1] + " " + m[2]) {
			if strings.HasPrefix(f, "-") {
				break
			}
			ids = append(ids, strings.Trim(f, `"'`))
		}
	}
	return ids
}

// trackerListRE tells a tracker command that lists tasks from one that
// shows a task.
var trackerListRE = lazyre.New(`\b(?:ready|list|ls|blocked|next)\b`)

// stoppedItem says where the session's work stood at its end: the agent's
// last todo list, the last request when it is not the first, the
// assistant's last words, and the last error when nothing was said after
// it.
func stoppedItem(steps []step, todos string, exchanges []exchangeStart) (ContextItem, bool) {
	var b strings.Builder
	if todos != "" {
		b.WriteString("Todo list:\n" + todos + "\n")
	}
	if n := len(exchanges); n > 1 {
		b.WriteString("Last request: " + cut(exchanges[n-1].prompt, lastWordsMax) + "\n\n")
	}
	var last []string
	for i := len(steps) - 1; i >= 0 && len(last) < 2; i-- {
		if steps[i].kind == "said" {
			last = append(last, cut(steps[i].text, lastWordsMax))
		}
	}
	if len(last) > 0 {
		slices.Reverse(last)
		b.WriteString("Last words:\n\n" + strings.Join(last, "\n\n") + "\n\n")
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].kind == "said" {
			break
		}
		if steps[i].kind == "error" {
			fmt.Fprintf(&b, "Last error (nothing said after it): %s\n  ✗ %s\n", steps[i].call, strings.ReplaceAll(steps[i].text, "\n", "\n    "))
			break
		}
	}
	if b.Len() == 0 {
		return ContextItem{}, false
	}
	ts := time.Time{}
	if len(steps) > 0 {
		ts = steps[len(steps)-1].ts
	}
	return ContextItem{Kind: "stopped", Priority: 3, TS: ts, Text: b.String()}, true
}

// foundDecision is a decision enrichment found.
type foundDecision struct {
	ts          time.Time
	text, after string // the sentence, and the one after it in its message
	conf        float64
}

// decisionsText lists decisions a line each, "- (confidence) text": each
// once (a sentence stated again, in other case or spacing, is the same
// decision, kept at its highest confidence and latest time); when they
// do not all fit in limit tokens, the most certain are kept, and of equally
// certain ones the newest, since a later decision revises an earlier one.
// The lines are in time order.
func decisionsText(found []foundDecision, limit int) string {
	text, _ := decisionsTexts(found, limit)
	return text
}

// decisionsTexts is decisionsText and, in texts of at most overflowMax
// tokens, the decisions it had no room for: the most certain first, each
// text in time order.
func decisionsTexts(found []foundDecision, limit int) (string, []string) {
	byKey := map[string]int{}
	var list []foundDecision
	for _, f := range found {
		f.text = strings.Join(strings.Fields(f.text), " ")
		if f.text == "" {
			continue
		}
		key := strings.ToLower(f.text)
		if i, ok := byKey[key]; ok {
			list[i].conf = max(list[i].conf, f.conf)
			list[i].ts = f.ts
			list[i].after = cmpOr(f.after, list[i].after)
			continue
		}
		byKey[key] = len(list)
		list = append(list, f)
	}
	rank := slices.Clone(list)
	slices.SortStableFunc(rank, func(a, b foundDecision) int {
		if a.conf != b.conf {
			if a.conf > b.conf {
				return -1
			}
			return 1
		}
		return b.ts.Compare(a.ts)
	})
	main, rest := fitTokens(rank, limit, decisionLine)
	// The rest, the most certain first, in groups of overflowMax tokens.
	var more []string
	var cur []foundDecision
	used := 0
	for _, f := range rest {
		t := EstimateTokens(decisionLine(f))
		if t > overflowMax {
			continue
		}
		if used+t > overflowMax {
			more = append(more, decisionLines(cur))
			cur, used = nil, 0
		}
		cur = append(cur, f)
		used += t
	}
	if len(cur) > 0 {
		more = append(more, decisionLines(cur))
	}
	return decisionLines(main), more
}

// decisionLines are the decisions' lines in time order.
func decisionLines(fs []foundDecision) string {
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, func(a, b foundDecision) int { return a.ts.Compare(b.ts) })
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(decisionLine(f))
	}
	return b.String()
}

func decisionLine(f foundDecision) string {
	if f.after = strings.Join(strings.Fields(f.after), " "); f.after != "" {
		return fmt.Sprintf("- (%.2f) %s\n  then: %s\n", f.conf, f.text, f.after)
	}
	return fmt.Sprintf("- (%.2f) %s\n", f.conf, f.text)
}
