// Command compare checks pos's token and cost figures against ccusage's,
// per day and model, and explains every difference by the transcript lines
// that cause it:
//
//	compare --ccusage daily.json --pos stats.json [--claude DIR] [--tolerance 0.005]
//
// daily.json is `ccusage claude daily --json --offline --timezone Z`,
// stats.json is `pos-query stats --by day,model --timezone Z --format
// json`, for the same zone Z (--timezone, default UTC). With --utc (the
// same ccusage report in UTC) it also says how many of daily.json's day
// and model rows are on another day than in UTC: a zone test where none
// is would pass with the zone ignored. With
// --claude (the folder both read: CLAUDE_CONFIG_DIR, or its projects/),
// compare also reads the transcripts and counts them twice, once by
// ccusage's rules and once by pos's (see README.md in this directory):
// each model must reproduce its tool's figures exactly, and every day and
// model where the tools differ must differ by exactly what the listed
// lines account for. Token counts must otherwise be equal, and costs
// within --tolerance (relative).
//
// It prints the rows that differ and a summary, and exits 1 when a
// difference is unexplained or a cost is out of tolerance.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, errFailed) {
			fmt.Fprintln(os.Stderr, "compare:", err)
		}
		os.Exit(1)
	}
}

var errFailed = errors.New("parity failed")

type tokens struct{ In, Out, CW, CR int64 }

func (t *tokens) add(o tokens) { t.In += o.In; t.Out += o.Out; t.CW += o.CW; t.CR += o.CR }
func (t tokens) sub(o tokens) tokens {
	return tokens{t.In - o.In, t.Out - o.Out, t.CW - o.CW, t.CR - o.CR}
}
func (t tokens) zero() bool   { return t == tokens{} }
func (t tokens) total() int64 { return t.In + t.Out + t.CW + t.CR }
func (t tokens) String() string {
	return fmt.Sprintf("in %d out %d cache_write %d cache_read %d", t.In, t.Out, t.CW, t.CR)
}

type rowKey struct{ Day, Model string }

type row struct {
	tokens
	Cost    float64
	HasCost bool
}

func run(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("compare", flag.ContinueOnError)
	ccPath := fl.String("ccusage", "", "ccusage claude daily --json output")
	posPath := fl.String("pos", "", "pos-query stats --by day,model --format json output")
	claude := fl.String("claude", "", "the Claude folder both read, to explain differences line by line")
	tol := fl.Float64("tolerance", 0.005, "largest relative cost difference accepted")
	maxLines := fl.Int("lines", 5, "lines shown per cause of a difference")
	zone := fl.String("timezone", "UTC", "the zone both reports' days are in")
	utcPath := fl.String("utc", "", "ccusage claude daily --json --offline --timezone UTC output, to count the rows the zone moves")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *ccPath == "" || *posPath == "" {
		return errors.New("--ccusage and --pos are required")
	}
	cc, err := readCcusage(*ccPath)
	if err != nil {
		return err
	}
	ps, err := readPos(*posPath)
	if err != nil {
		return err
	}
	loc, err := time.LoadLocation(*zone)
	if err != nil {
		return err
	}
	if *utcPath != "" {
		utc, err := readCcusage(*utcPath)
		if err != nil {
			return err
		}
		moved := 0
		for k := range cc {
			if _, ok := utc[k]; !ok {
				moved++
			}
		}
		fmt.Fprintf(stdout, "zone     %s: %d of %d day×model rows on another day than in UTC\n", *zone, moved, len(cc))
	}
	var expl *explanation
	if *claude != "" {
		if expl, err = explain(*claude, loc); err != nil {
			return err
		}
	}
	return report(stdout, cc, ps, expl, *tol, *maxLines)
}

// ---------------------------------------------------------------------------
// The two tools' outputs

func readCcusage(path string) (map[rowKey]row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Daily []struct {
			Date   string `json:"date"`
			Models []struct {
				Model string  `json:"modelName"`
				In    int64   `json:"inputTokens"`
				Out   int64   `json:"outputTokens"`
				CW    int64   `json:"cacheCreationTokens"`
				CR    int64   `json:"cacheReadTokens"`
				Cost  float64 `json:"cost"`
			} `json:"modelBreakdowns"`
		} `json:"daily"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[rowKey]row{}
	for _, d := range doc.Daily {
		for _, m := range d.Models {
			k := rowKey{d.Date, m.Model}
			r := out[k]
			r.add(tokens{m.In, m.Out, m.CW, m.CR})
			r.Cost += m.Cost
			r.HasCost = true
			out[k] = r
		}
	}
	return out, nil
}

func readPos(path string) (map[rowKey]row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Day   string   `json:"day"`
		Model string   `json:"model"`
		In    int64    `json:"input_tokens"`
		Out   int64    `json:"output_tokens"`
		CW    int64    `json:"cache_creation_tokens"`
		CR    int64    `json:"cache_read_tokens"`
		Cost  *float64 `json:"cost"`
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[rowKey]row{}
	for _, r := range rows {
		if r.Day == "" {
			return nil, fmt.Errorf("%s: rows without a day: run pos-query stats --by day,model --format json", path)
		}
		x := row{tokens: tokens{r.In, r.Out, r.CW, r.CR}}
		if r.Cost != nil {
			x.Cost, x.HasCost = *r.Cost, true
		}
		out[rowKey{r.Day, r.Model}] = x
	}
	return out, nil
}
