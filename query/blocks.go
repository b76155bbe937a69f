package query

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/pricing"
)

// BlockLength is the length of a billing block: Anthropic's 5-hour usage
// window.
const BlockLength = 5 * time.Hour

// BlocksOptions choose the billing blocks Blocks returns.
type BlocksOptions struct {
	// Platform is the platform whose messages make the blocks ("": all).
	Platform string
	// Since and Until keep the blocks that start in [Since, Until).
	Since, Until time.Time
	// Length is a block's length; zero: BlockLength.
	Length time.Duration
	// Active keeps the active block only.
	Active bool
	// Prices prices the messages; nil: the embedded table.
	Prices *pricing.Table
	// Now is the time blocks are active at; zero: time.Now().
	Now time.Time
}

// BlockTokens are a block's tokens by kind.
type BlockTokens struct {
	Input         int64 `json:"inputTokens"`
	Output        int64 `json:"outputTokens"`
	CacheCreation int64 `json:"cacheCreationInputTokens"`
	CacheRead     int64 `json:"cacheReadInputTokens"`
}

// Total is the sum of the four kinds.
func (t BlockTokens) Total() int64 { return t.Input + t.Output + t.CacheCreation + t.CacheRead }

// BurnRate is how fast an active block uses tokens and money, over the
// time from its first message to its last.
type BurnRate struct {
	TokensPerMinute float64 `json:"tokensPerMinute"`
	// TokensPerMinuteForIndicator counts input and output tokens only.
	TokensPerMinuteForIndicator float64 `json:"tokensPerMinuteForIndicator"`
	CostPerHour                 float64 `json:"costPerHour"`
}

// Projection is what an active block will have used at its end if the
// burn rate holds.
type Projection struct {
	TotalTokens      int64   `json:"totalTokens"`
	TotalCost        float64 `json:"totalCost"`
	RemainingMinutes int64   `json:"remainingMinutes"`
}

// BillingBlock is a billing window, or the gap between two (Gap). The
// JSON fields are ccusage's (`ccusage blocks --json`), so that scripts
// written for it read pos's output; unpricedEntries is pos's own.
type BillingBlock struct {
	ID          string      `json:"id"`
	Start       time.Time   `json:"startTime"`
	End         time.Time   `json:"endTime"`
	ActualEnd   *time.Time  `json:"actualEndTime"`
	Active      bool        `json:"isActive"`
	Gap         bool        `json:"isGap"`
	Entries     int         `json:"entries"`
	Tokens      BlockTokens `json:"tokenCounts"`
	TotalTokens int64       `json:"totalTokens"`
	Cost        float64     `json:"costUSD"`
	Unpriced    int64       `json:"unpricedEntries"`
	Models      []string    `json:"models"`
	BurnRate    *BurnRate   `json:"burnRate"`
	Projection  *Projection `json:"projection"`

	first time.Time // the first message's time
}

// BlocksResult holds the blocks in time order.
type BlocksResult struct {
	Blocks []BillingBlock `json:"blocks"`
	// Notes name the models without a price.
	Notes []string `json:"-"`
}

// Blocks groups the priced messages of the lake into billing blocks as
// ccusage 20.0.24 does: a block starts at the hour of its first message
// and lasts Length; a message more than Length after its block's start,
// or more than Length after the message before it, starts a new block;
// the time between a block's last message plus Length and the next
// message, when the messages are more than Length apart, is a gap. A
// block is active while now is within Length of its last message and
// before its end. It reads the messages in Go (no DuckDB), from the
// partitions a window needs: blocks start anew after each gap, so only
// the messages since the last gap before the window count.
func Blocks(ctx context.Context, lake string, opt BlocksOptions) (*BlocksResult, error) {
	if err := checkWindow(opt.Since, opt.Until); err != nil {
		return nil, err
	}
	if opt.Length <= 0 {
		opt.Length = BlockLength
	}
	if opt.Prices == nil {
		opt.Prices = pricing.Default()
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	abs, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	from := opt.Since
	if opt.Active {
		// An active block's last message is within Length of now, and
		// its first within Length of its last.
		from = opt.Now.Add(-2 * opt.Length)
	}
	read, err := blockEntries(ctx, abs, opt.Platform, from, opt.Length)
	if err != nil {
		return nil, err
	}
	// From the message before the gap the blocks start anew after, so
	// that the gap is there too; that message's block (from a part of
	// its chain) is left out.
	entries := read.entries[max(read.reset-1, 0):]
	acc := newEntryPricer(opt.Prices)
	blocks := identifyBlocks(entries, opt.Length, opt.Now, acc)
	if read.reset > 0 && len(blocks) > 0 {
		blocks = blocks[1:]
	}
	res := &BlocksResult{}
	for _, b := range blocks {
		if opt.Active && !b.Active {
			continue
		}
		if !opt.Since.IsZero() && b.Start.Before(opt.Since) || !opt.Until.IsZero() && !b.Start.Before(opt.Until) {
			continue
		}
		res.Blocks = append(res.Blocks, b)
	}
	if len(acc.unpriced) > 0 {
		res.Notes = append(res.Notes, unpricedNote(acc.unpriced))
	}
	return res, nil
}

// entriesRead are the messages blockEntries read, sorted by time: the
// blocks start anew at entries[reset]; parts are the partitions read.
type entriesRead struct {
	entries []rollup.UsageEntry
	reset   int
	parts   []string
}

// blockEntries reads the messages of platform whose blocks can start at
// or after from (zero: all of them): those since the last gap of more
// than length before from. It reads the partitions from a day before
// from, then four times further back, until such a gap shows or the lake
// has no more.
func blockEntries(ctx context.Context, lake, platform string, from time.Time, length time.Duration) (*entriesRead, error) {
	all, err := rollup.UsagePartitions(lake, platform, time.Time{})
	if err != nil {
		return nil, err
	}
	back := 24 * time.Hour
	for {
		var since time.Time
		if !from.IsZero() {
			since = from.Add(-back)
		}
		parts, err := rollup.UsagePartitions(lake, platform, since)
		if err != nil {
			return nil, err
		}
		es, err := rollup.UsageEntries(ctx, lake, parts)
		if err != nil {
			return nil, err
		}
		es = slices.DeleteFunc(es, func(e rollup.UsageEntry) bool { return e.TS.IsZero() })
		slices.SortStableFunc(es, func(a, b rollup.UsageEntry) int { return a.TS.Compare(b.TS) })
		r := &entriesRead{entries: es, parts: parts}
		if since.IsZero() || len(parts) == len(all) {
			return r, nil
		}
		// The partitions read hold every message from the day since
		// starts on: a message more than length after the one before it
		// (or after that day's start) starts a block whatever came
		// before, so the blocks from the last such message at or before
		// the first one from from on are those of the whole lake.
		day := since.UTC().Truncate(24 * time.Hour)
		k, _ := slices.BinarySearchFunc(es, from, func(e rollup.UsageEntry, t time.Time) int { return e.TS.Compare(t) })
		if k == len(es) {
			// No message from from on: no block of interest.
			r.reset = k
			return r, nil
		}
		for i := min(k, len(es)-1); i >= 0; i-- {
			prev := day
			if i > 0 {
				prev = es[i-1].TS
			}
			if es[i].TS.Sub(prev) > length {
				r.reset = i
				return r, nil
			}
		}
		back *= 4
	}
}

// identifyBlocks splits entries, sorted by time, into blocks and gaps.
func identifyBlocks(entries []rollup.UsageEntry, length time.Duration, now time.Time, pr *entryPricer) []BillingBlock {
	var blocks []BillingBlock
	var cur *BillingBlock
	var last time.Time
	var models map[string]bool
	closeBlock := func() {
		if cur == nil {
			return
		}
		end := last
		cur.ActualEnd = &end
		cur.Active = now.Sub(last) < length && now.Before(cur.End)
		cur.TotalTokens = cur.Tokens.Total()
		if cur.Active {
			cur.BurnRate, cur.Projection = burnRate(cur, now)
		}
		blocks = append(blocks, *cur)
		cur = nil
	}
	for i := range entries {
		e := &entries[i]
		if cur != nil && (e.TS.Sub(cur.Start) > length || e.TS.Sub(last) > length) {
			gap := e.TS.Sub(last) > length
			closeBlock()
			if gap {
				start := last.Add(length)
				blocks = append(blocks, BillingBlock{ID: "gap-" + jsTime(start), Start: start, End: e.TS, Gap: true, Models: []string{}})
			}
		}
		if cur == nil {
			start := e.TS.UTC().Truncate(time.Hour)
			cur = &BillingBlock{ID: jsTime(start), Start: start, End: start.Add(length), Models: []string{}, first: e.TS}
			models = map[string]bool{}
		}
		cur.Entries++
		cur.Tokens.Input += e.Input
		cur.Tokens.Output += e.Output
		cur.Tokens.CacheCreation += e.CacheCreation
		cur.Tokens.CacheRead += e.CacheRead
		if c, ok := pr.cost(e); ok {
			cur.Cost += c
		} else {
			cur.Unpriced++
		}
		if e.Model != "" && !models[e.Model] {
			models[e.Model] = true
			cur.Models = append(cur.Models, e.Model)
		}
		last = e.TS
	}
	closeBlock()
	return blocks
}

// burnRate is an active block's burn rate and projection, as ccusage
// computes them: over the minutes from its first message to its last,
// projected over the minutes left (rounded), the cost to the cent.
func burnRate(b *BillingBlock, now time.Time) (*BurnRate, *Projection) {
	minutes := float64(b.ActualEnd.Sub(b.first).Milliseconds()) / 60000
	if minutes <= 0 {
		return nil, nil
	}
	r := &BurnRate{
		TokensPerMinute:             float64(b.Tokens.Total()) / minutes,
		TokensPerMinuteForIndicator: float64(b.Tokens.Input+b.Tokens.Output) / minutes,
		CostPerHour:                 b.Cost / minutes * 60,
	}
	left := float64(max(b.End.Sub(now).Milliseconds(), 0)) / 60000
	left = float64(int64(left + 0.5))
	cost := b.Cost + r.CostPerHour/60*left
	return r, &Projection{
		TotalTokens:      int64(float64(b.Tokens.Total()) + r.TokensPerMinute*left + 0.5),
		TotalCost:        float64(int64(cost*100+0.5)) / 100,
		RemainingMinutes: int64(left),
	}
}

// jsTime formats t as JavaScript's toISOString does (ccusage's block ids).
func jsTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// entryPricer prices messages one at a time by the rules Stats applies
// to the rollup's rows.
type entryPricer struct {
	acc        *statsAcc
	thresholds []int64
	unpriced   map[string]int64
}

func newEntryPricer(prices *pricing.Table) *entryPricer {
	th := statsThresholds(prices)
	return &entryPricer{acc: newStatsAcc(StatsOptions{Prices: prices}, prices, th), thresholds: th, unpriced: map[string]int64{}}
}

// cost is the cost of one message, false when its model has no price.
func (p *entryPricer) cost(e *rollup.UsageEntry) (float64, bool) {
	row := entryRow(e, p.thresholds)
	pr := p.acc.price(row.Model)
	if pr.m == nil {
		p.unpriced[row.Model]++
		return 0, false
	}
	g := p.acc.groups[""]
	g.costs[0] = 0
	p.acc.add(&row)
	return g.costs[0], true
}

// entryRow is a message as a rollup row of its own, its exact time in
// the hour column (so a price tier that ends within an hour applies
// exactly).
func entryRow(e *rollup.UsageEntry, thresholds []int64) rollup.RollupRow {
	var rank uint8
	for _, t := range thresholds {
		if e.Prompt() > t {
			rank++
		}
	}
	return rollup.RollupRow{Platform: e.Platform, SessionID: e.SessionID, Model: e.Model, Hour: e.TS, CtxRank: rank,
		Messages: 1, Input: e.Input, Output: e.Output, CacheCreation: e.CacheCreation, CacheRead: e.CacheRead,
		CacheCreation1h: e.CacheCreation1h}
}

// unpricedNote names the models without a price and their messages.
func unpricedNote(unpriced map[string]int64) string {
	s := "unknown model, no price:"
	for i, m := range sortedKeys(unpriced) {
		label := m
		if label == "" {
			label = NoModel
		}
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %s (%d messages)", label, unpriced[m])
	}
	return s + "; their cost is left out"
}

// BillingBlocks writes blocks as a table: start, status (ACTIVE, gap, or
// how long it ran), models, tokens and cost; the active block is
// followed by its burn rate and projection.
func (o *Output) BillingBlocks(res *BlocksResult) error {
	t := &Table{Columns: []Column{{Name: "start", Type: "TIMESTAMP WITH TIME ZONE"}, {Name: "status", Type: "VARCHAR"},
		{Name: "models", Type: "VARCHAR"}, {Name: "tokens", Type: "BIGINT"}, {Name: "cost", Type: "DOUBLE"},
		{Name: "burn_rate", Type: "VARCHAR"}, {Name: "projection", Type: "VARCHAR"}}}
	for _, b := range res.Blocks {
		status, burn, proj := "", "", ""
		switch {
		case b.Gap:
			status = fmt.Sprintf("gap until %s (%dh)", b.End.UTC().Format(time.RFC3339), int64(b.End.Sub(b.Start)/time.Hour))
		case b.Active:
			status = fmt.Sprintf("ACTIVE, %s left", b.End.Sub(o.Now).Truncate(time.Minute))
		default:
			status = b.ActualEnd.Sub(b.Start).Truncate(time.Minute).String()
		}
		if r := b.BurnRate; r != nil {
			burn = fmt.Sprintf("%.0f tokens/min, $%.2f/hour", r.TokensPerMinute, r.CostPerHour)
		}
		if p := b.Projection; p != nil {
			proj = fmt.Sprintf("%d tokens, $%.2f", p.TotalTokens, p.TotalCost)
		}
		var cost any = b.Cost
		if b.Gap {
			cost = nil
		}
		t.Rows = append(t.Rows, []any{b.Start, status, strings.Join(b.Models, ", "), b.TotalTokens, cost, burn, proj})
	}
	return o.Table(t, nil, []string{"projection", "burn_rate"}, "models")
}

// MarshalJSON writes the times as ccusage does (JavaScript's toISOString).
func (b BillingBlock) MarshalJSON() ([]byte, error) {
	type plain BillingBlock
	var actual *string
	if b.ActualEnd != nil {
		s := jsTime(*b.ActualEnd)
		actual = &s
	}
	return json.Marshal(struct {
		plain
		Start     string  `json:"startTime"`
		End       string  `json:"endTime"`
		ActualEnd *string `json:"actualEndTime"`
	}{plain(b), jsTime(b.Start), jsTime(b.End), actual})
}
