package scrub

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report counts what a run did. It holds no secret: rules, platforms and
// numbers only.
type Report struct {
	Records    int64                      `json:"records"`    // records read
	Changed    int64                      `json:"changed"`    // records with at least one redaction
	Redactions int64                      `json:"redactions"` // secrets (and PII) replaced by a marker
	Skipped    int64                      `json:"skipped"`    // bad input lines
	Bytes      int64                      `json:"bytes"`      // NDJSON bytes scanned
	Elapsed    time.Duration              `json:"-"`
	Rules      map[string]int64           `json:"rules"` // redactions per rule
	Platforms  map[string]*PlatformReport `json:"platforms"`
}

// PlatformReport counts one platform's records.
type PlatformReport struct {
	Records    int64            `json:"records"`
	Changed    int64            `json:"changed"`
	Redactions int64            `json:"redactions"`
	Rules      map[string]int64 `json:"rules"`
}

func newReport() Report {
	return Report{Rules: map[string]int64{}, Platforms: map[string]*PlatformReport{}}
}

func (r *Report) platform(p string) *PlatformReport {
	if p == "" {
		p = "unknown"
	}
	pr := r.Platforms[p]
	if pr == nil {
		pr = &PlatformReport{Rules: map[string]int64{}}
		r.Platforms[p] = pr
	}
	return pr
}

// Add adds o's counts to r.
func (r *Report) Add(o Report) {
	if r.Platforms == nil {
		r.Platforms = map[string]*PlatformReport{}
	}
	r.Records += o.Records
	r.Changed += o.Changed
	r.Redactions += o.Redactions
	r.Skipped += o.Skipped
	r.Bytes += o.Bytes
	r.Elapsed += o.Elapsed
	for p, po := range o.Platforms {
		pr := r.platform(p)
		pr.Records += po.Records
		pr.Changed += po.Changed
		pr.Redactions += po.Redactions
		for k, v := range po.Rules {
			pr.Rules[k] += v
		}
	}
	// The totals per rule are the sums over the platforms.
	r.Rules = map[string]int64{}
	for _, pr := range r.Platforms {
		for k, v := range pr.Rules {
			r.Rules[k] += v
		}
	}
}

// MBPerSec is the throughput in MB (10^6 bytes) of NDJSON per second.
func (r Report) MBPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds()
}

// WriteText writes the report as lines starting with prefix: a summary,
// then redactions per rule and per platform.
func (r Report) WriteText(w io.Writer, prefix string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%d records, %d changed, %d redactions; %d skipped; %.1f MB scanned in %.2fs (%.1f MB/s)\n",
		prefix, r.Records, r.Changed, r.Redactions, r.Skipped, float64(r.Bytes)/1e6, r.Elapsed.Seconds(), r.MBPerSec())
	if len(r.Rules) > 0 {
		width := len("rule")
		for k := range r.Rules {
			width = max(width, len(k))
		}
		fmt.Fprintf(&b, "%s  %-*s %10s\n", prefix, width, "rule", "redactions")
		for _, k := range byCount(r.Rules) {
			fmt.Fprintf(&b, "%s  %-*s %10d\n", prefix, width, k, r.Rules[k])
		}
	}
	if len(r.Platforms) > 0 {
		width := len("platform")
		for k := range r.Platforms {
			width = max(width, len(k))
		}
		fmt.Fprintf(&b, "%s  %-*s %10s %10s %10s\n", prefix, width, "platform", "records", "changed", "redactions")
		for _, k := range slices.Sorted(maps.Keys(r.Platforms)) {
			p := r.Platforms[k]
			fmt.Fprintf(&b, "%s  %-*s %10d %10d %10d\n", prefix, width, k, p.Records, p.Changed, p.Redactions)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as one JSON object and a newline.
func (r Report) WriteJSON(w io.Writer) error {
	type out struct {
		Report
		Seconds  float64 `json:"seconds"`
		MBPerSec float64 `json:"mb_per_s"`
	}
	b, err := json.Marshal(out{r, r.Elapsed.Seconds(), r.MBPerSec()})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// byCount returns the keys of m, most frequent first.
func byCount(m map[string]int64) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
	})
	return keys
}
