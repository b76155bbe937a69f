package query

import (
	"bytes"
	"context"
	"encoding/json"

	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/pricing"
)

// StatuslineInput is what Claude Code writes on a status line command's
// stdin; only the fields the line shows are read.
type StatuslineInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Model          struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Cost *struct {
		TotalCostUSD *float64 `json:"total_cost_usd"`
	} `json:"cost"`
	ContextWindow *struct {
		TotalInputTokens  int64 `json:"total_input_tokens"`
		ContextWindowSize int64 `json:"context_window_size"`
	} `json:"context_window"`
}

// MaxStatuslineInput bounds the statusline JSON read from stdin.
const MaxStatuslineInput = 1 << 20

// ParseStatuslineInput reads Claude Code's statusline JSON. A session_id
// is required, as ccusage requires it.
func ParseStatuslineInput(b []byte) (*StatuslineInput, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, argErrorf("no statusline JSON on stdin")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, argErrorf("statusline JSON: %v", err)
	}
	if _, ok := raw["session_id"]; !ok {
		return nil, argErrorf("statusline JSON: no session_id")
	}
	var in StatuslineInput
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, argErrorf("statusline JSON: %v", err)
	}
	return &in, nil
}

// Cost sources of the statusline's session cost, as ccusage names them.
const (
	CostAuto = "auto"    // Claude Code's figure when it gives one, else the lake's
	CostCC   = "cc"      // Claude Code's figure
	CostLake = "ccusage" // the lake's (ccusage's name for its own)
	CostBoth = "both"    // both
)

// Visual burn rates, as ccusage names them.
var VisualBurnRates = []string{"off", "emoji", "text", "emoji-text"}

// StatuslineOptions choose how Statusline counts.
type StatuslineOptions struct {
	Platform string         // the platform counted ("": all)
	Prices   *pricing.Table // nil: the embedded table
	Now      time.Time      // zero: time.Now()
	Location *time.Location // the zone "today" is in; nil: time.Local
}

// StatuslineFigures are the figures of a status line.
type StatuslineFigures struct {
	Model       string
	SessionCost float64  // the session's cost in the lake
	HookCost    *float64 // Claude Code's figure, when given
	Today       float64
	Block       *BillingBlock // the active block, nil when none
	Now         time.Time
	Context     *[2]int64 // input tokens and context size, when given
}

// Statusline computes the figures ccusage's statusline shows, from the
// lake, reading no more than it needs and never opening DuckDB: the
// messages of the partitions the active block and today need, in Go, and
// for the session's older messages the usage rollup (or, without one,
// the session's other partitions).
func Statusline(ctx context.Context, lake string, in *StatuslineInput, opt StatuslineOptions) (*StatuslineFigures, error) {
	if opt.Prices == nil {
		opt.Prices = pricing.Default()
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	loc := opt.Location
	if loc == nil {
		loc = time.Local
	}
	abs, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	y, m, d := opt.Now.In(loc).Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, loc)
	from := opt.Now.Add(-2 * BlockLength)
	if midnight.Before(from) {
		from = midnight
	}
	read, err := blockEntries(ctx, abs, opt.Platform, from, BlockLength)
	if err != nil {
		return nil, err
	}
	f := &StatuslineFigures{Model: in.Model.DisplayName, Now: opt.Now}
	if in.Cost != nil {
		f.HookCost = in.Cost.TotalCostUSD
	}
	if c := in.ContextWindow; c != nil {
		f.Context = &[2]int64{c.TotalInputTokens, c.ContextWindowSize}
	}
	pr := newEntryPricer(opt.Prices)
	for i := range read.entries {
		e := &read.entries[i]
		if e.TS.Before(midnight) && e.SessionID != in.SessionID {
			continue
		}
		c, ok := pr.cost(e)
		if !ok {
			continue
		}
		if !e.TS.Before(midnight) {
			f.Today += c
		}
		if e.SessionID == in.SessionID {
			f.SessionCost += c
		}
	}
	for _, b := range identifyBlocks(read.entries[read.reset:], BlockLength, opt.Now, newEntryPricer(opt.Prices)) {
		if b.Active {
			f.Block = &b
		}
	}
	older, err := memoCostBefore(ctx, abs, opt, in.SessionID, read.parts)
	if err != nil {
		return nil, err
	}
	f.SessionCost += older
	return f, nil
}

// The status line is asked for again and again while a session runs, and
// between two syncs the cost of the session's older partitions stays the
// same: it is kept in <lake>/rollup/statusline.json, for the lake's state
// (layout.StateStamp, which every load changes) and the prices it was
// computed with. A lake the status line cannot write is answered all the
// same.
const statuslineMemoFile = "statusline.json"

type statuslineMemo struct {
	Stamp  string             `json:"stamp"`
	Prices string             `json:"prices"`
	Costs  map[string]float64 `json:"costs"` // memoKey -> cost
}

// memoCostBefore is sessionCostBefore, remembered.
func memoCostBefore(ctx context.Context, lake string, opt StatuslineOptions, session string, read []string) (float64, error) {
	stamp := layout.StateStamp(lake)
	if session == "" || stamp == "" {
		return sessionCostBefore(ctx, lake, opt, session, read)
	}
	path := filepath.Join(lake, layout.RollupDir, statuslineMemoFile)
	prices := pricesKey(opt.Prices)
	key := opt.Platform + "|" + session + "|" + strings.Join(read, ",")
	var m statuslineMemo
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &m) == nil && m.Stamp == stamp && m.Prices == prices {
		if c, ok := m.Costs[key]; ok {
			return c, nil
		}
	}
	c, err := sessionCostBefore(ctx, lake, opt, session, read)
	if err != nil {
		return 0, err
	}
	if m.Stamp != stamp || m.Prices != prices || len(m.Costs) >= 64 {
		m = statuslineMemo{Stamp: stamp, Prices: prices}
	}
	if m.Costs == nil {
		m.Costs = map[string]float64{}
	}
	m.Costs[key] = c
	// Only if the lake is as it was when the cost was read: a load that
	// came between would change the stamp.
	if b, err := json.Marshal(m); err == nil && layout.StateStamp(lake) == stamp {
		if _, err := os.Stat(filepath.Dir(path)); err == nil {
			atomicfile.Write(path, b)
		}
	}
	return c, nil
}

// pricesKey tells price tables apart: their date, sources, and the files
// applied with their sizes and times.
func pricesKey(t *pricing.Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s;%q;", t.Updated, t.Sources)
	for _, f := range t.Files {
		fmt.Fprintf(&b, "%q", f)
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, ":%d:%d", fi.Size(), fi.ModTime().UnixNano())
		}
		b.WriteByte(';')
	}
	return b.String()
}

// sessionCostBefore is the cost of a session's messages in the
// partitions of platform other than read: from the usage rollup where it
// is current, from the messages elsewhere.
func sessionCostBefore(ctx context.Context, lake string, opt StatuslineOptions, session string, read []string) (float64, error) {
	if session == "" {
		return 0, nil
	}
	all, err := rollup.UsagePartitions(lake, opt.Platform, time.Time{})
	if err != nil {
		return 0, err
	}
	skip := map[string]bool{}
	for _, p := range read {
		skip[p] = true
	}
	var total float64
	var rest []string
	d := &DB{lake: lake}
	if ru := d.rollupPlan(StatsOptions{}, opt.Prices); ru != nil {
		rows, err := rollup.ReadRollupRows(ru.path)
		if err == nil {
			drop := map[string]bool{}
			for _, p := range ru.drop {
				drop[p] = true
			}
			acc := newStatsAcc(StatsOptions{Prices: opt.Prices}, opt.Prices, ru.thresholds)
			for i := range rows {
				r := &rows[i]
				part := r.Platform + "/" + r.DateString()
				if r.SessionID == session && !skip[part] && !drop[part] && (opt.Platform == "" || r.Platform == opt.Platform) {
					acc.add(r)
				}
			}
			total = acc.groups[""].costs[0]
			for _, p := range ru.stale {
				if !skip[p] && slices.Contains(all, p) {
					rest = append(rest, p)
				}
			}
			return addSessionEntries(ctx, lake, opt.Prices, session, rest, total)
		}
	}
	for _, p := range all {
		if !skip[p] {
			rest = append(rest, p)
		}
	}
	return addSessionEntries(ctx, lake, opt.Prices, session, rest, total)
}

func addSessionEntries(ctx context.Context, lake string, prices *pricing.Table, session string, parts []string, total float64) (float64, error) {
	if len(parts) == 0 {
		return total, nil
	}
	es, err := rollup.UsageEntries(ctx, lake, parts)
	if err != nil {
		return 0, err
	}
	pr := newEntryPricer(prices)
	for i := range es {
		if es[i].SessionID == session {
			if c, ok := pr.cost(&es[i]); ok {
				total += c
			}
		}
	}
	return total, nil
}

// StatuslineFormat chooses what the line shows.
type StatuslineFormat struct {
	CostSource     string // CostAuto (default), CostCC, CostLake or CostBoth
	VisualBurnRate string // one of VisualBurnRates ("": off)
}

// Line is the status line as ccusage 20.0.24 prints it:
//
//	🤖 MODEL | 💰 $S session / $T today / $B block (Hh Mm left) | 🔥 $R/hr | 🧠 N (P%)
func (f *StatuslineFigures) Line(opt StatuslineFormat) (string, error) {
	money := func(v float64) string { return "$" + strconv.FormatFloat(v+0, 'f', 2, 64) }
	na := func(v *float64) string {
		if v == nil {
			return "N/A"
		}
		return money(*v)
	}
	lake := f.SessionCost
	var session string
	switch opt.CostSource {
	case "", CostAuto:
		if f.HookCost != nil {
			session = money(*f.HookCost)
		} else {
			session = money(lake)
		}
	case CostCC:
		session = na(f.HookCost)
	case CostLake:
		session = money(lake)
	case CostBoth:
		session = fmt.Sprintf("(%s cc / %s ccusage)", na(f.HookCost), money(lake))
	default:
		return "", argErrorf("unknown cost source %q (use auto, cc, ccusage or both)", opt.CostSource)
	}
	if opt.VisualBurnRate != "" && !slices.Contains(VisualBurnRates, opt.VisualBurnRate) {
		return "", argErrorf("unknown visual burn rate %q (use %s)", opt.VisualBurnRate, strings.Join(VisualBurnRates, ", "))
	}
	block, burn := "No active block", ""
	if b := f.Block; b != nil {
		left := max(int64(b.End.Sub(f.Now)/time.Minute), 0)
		remaining := fmt.Sprintf("%dm left", left%60)
		if left >= 60 {
			remaining = fmt.Sprintf("%dh %dm left", left/60, left%60)
		}
		block = fmt.Sprintf("%s block (%s)", money(b.Cost), remaining)
		if r := b.BurnRate; r != nil {
			parts := []string{money(r.CostPerHour) + "/hr"}
			emoji, text := "🚨", "High"
			switch {
			case r.TokensPerMinuteForIndicator < 2000:
				emoji, text = "🟢", "Normal"
			case r.TokensPerMinuteForIndicator < 5000:
				emoji, text = "⚠️", "Moderate"
			}
			if opt.VisualBurnRate == "emoji" || opt.VisualBurnRate == "emoji-text" {
				parts = append(parts, emoji)
			}
			if opt.VisualBurnRate == "text" || opt.VisualBurnRate == "emoji-text" {
				parts = append(parts, "("+text+")")
			}
			burn = " | 🔥 " + strings.Join(parts, " ")
		}
	}
	ctxInfo := "N/A"
	if c := f.Context; c != nil {
		pct := int64(0)
		if c[1] > 0 {
			pct = int64(float64(c[0])/float64(c[1])*100 + 0.5)
		}
		ctxInfo = fmt.Sprintf("%s (%d%%)", GroupDigits(c[0]), pct)
	}
	return fmt.Sprintf("🤖 %s | 💰 %s session / %s today / %s%s | 🧠 %s", f.Model, session, money(f.Today), block, burn, ctxInfo), nil
}

// GroupDigits writes n with a comma every three digits.
func GroupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
