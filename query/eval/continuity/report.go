package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

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
