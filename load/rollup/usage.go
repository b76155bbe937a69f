package rollup

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pos-lake/pos/load/layout"
)

// UsageEntry is one message the rollup counts (an assistant message, the
// placeholder model "<synthetic>" left out), with its time: what reports
// that need each message's time (billing blocks) read instead of the
// rollup's hours.
type UsageEntry struct {
	Platform      string
	SessionID     string
	Model         string
	TS            time.Time // zero when the message has none
	Input         int64
	Output        int64
	CacheCreation int64
	CacheRead     int64
	// CacheCreation1h is the 1-hour share of CacheCreation, never more.
	CacheCreation1h int64
}

// Prompt is the message's prompt size, the quantity long-context tiers
// look at.
func (e *UsageEntry) Prompt() int64 { return e.Input + e.CacheCreation + e.CacheRead }

// UsagePartitions lists the messages partitions ("platform/date") of
// platform ("": every platform) whose date is on or after since (zero: all).
func UsagePartitions(lake, platform string, since time.Time) ([]string, error) {
	parts, err := layout.Partitions(lake, layout.TableMessages, platform)
	if err != nil {
		return nil, err
	}
	from := ""
	if !since.IsZero() {
		from = since.UTC().Format(time.DateOnly)
	}
	var out []string
	for _, p := range parts {
		if p.Date >= from {
			out = append(out, p.Platform+"/"+p.Date)
		}
	}
	slices.Sort(out)
	return out, nil
}

// UsageEntries reads the messages of the given partitions the rollup
// counts, in Go, by the rollup's own rules (rollupFilter, the latest
// version of each message), in partition order.
func UsageEntries(ctx context.Context, lake string, parts []string) ([]UsageEntry, error) {
	versioned := layout.Versioned(lake)[layout.TableMessages]
	out := make([][]UsageEntry, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, part := range parts {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			es, err := usagePartition(lake, part, versioned)
			if err != nil {
				return fmt.Errorf("usage: %w", err)
			}
			out[i] = es
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []UsageEntry
	for _, es := range out {
		all = append(all, es...)
	}
	return all, nil
}

func usagePartition(lake, part string, versioned bool) ([]UsageEntry, error) {
	platform, _, rows, err := partitionRows(lake, part, versioned)
	if err != nil {
		return nil, err
	}
	p := rollupRules()
	col := func(name string) int { return slices.Index(p.cols, name) }
	session, model := col("session_id"), col("model")
	in, outc, cw, cr := col("input_tokens"), col("output_tokens"), col("cache_creation_tokens"), col("cache_read_tokens")
	c1h := col(rollupOneHour)
	for _, c := range []int{session, model, in, outc, cw, cr, c1h} {
		if c < 0 {
			return nil, fmt.Errorf("usage: a column of the rollup's rules is missing")
		}
	}
	strs := map[string]string{}
	intern := func(s string) string {
		if v, ok := strs[s]; ok {
			return v
		}
		strs[s] = s
		return s
	}
	out := make([]UsageEntry, 0, len(rows))
rows:
	for _, m := range rows {
		for i, c := range rollupFilter {
			if (m[p.filter[i]].Str == c.val) == c.not { // NULL reads as ""
				continue rows
			}
		}
		e := UsageEntry{Platform: platform, SessionID: intern(m[session].Str), Model: intern(m[model].Str),
			Input: m[in].Int, Output: m[outc].Int, CacheCreation: m[cw].Int, CacheRead: m[cr].Int,
			CacheCreation1h: min(m[c1h].Int, m[cw].Int)}
		if ts := m[p.ts]; !ts.Null {
			e.TS = time.Unix(0, ts.Int).UTC()
		}
		out = append(out, e)
	}
	return out, nil
}
