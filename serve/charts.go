package serve

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/pos-lake/pos/query"
)

// A chart is drawn as SVG on the server: rectangles with a <title> each
// (the figure on hover), axis labels as <text>; every label from the lake
// is escaped.

type chart struct {
	ID, Title string
	SVG       template.HTML
	Legend    []legendItem
}

type legendItem struct{ Name, Color string }

// palette colours the models, in order of their tokens; the last colour
// is for the models past it, together.
var palette = []string{"#2f6fdb", "#e07b39", "#2ca58d", "#c6427a", "#8a63d2", "#d4a72c", "#3aa6c9", "#7a8b99"}

// maxDays bounds the days a daily chart draws: the latest ones.
const maxDays = 90

// maxBars bounds the rows of a chart per project or platform: the largest.
const maxBars = 15

func tokens(r query.StatsRow) float64 {
	return float64(r.Input + r.Output + r.CacheCreation + r.CacheRead)
}

func cost(r query.StatsRow) float64 {
	if r.Cost == nil {
		return 0
	}
	return *r.Cost
}

// buildCharts draws tokens and cost per day (stacked by model), and per
// project and per platform.
func buildCharts(daily, projects, platforms *query.StatsResult) ([]chart, []string) {
	var notes []string
	if len(daily.Rows) == 0 {
		return nil, nil
	}
	// Models by their tokens, the largest first.
	byModel := map[string]float64{}
	var days []string
	for _, r := range daily.Rows {
		byModel[key(r, 1)] += tokens(r)
		if d := key(r, 0); len(days) == 0 || days[len(days)-1] != d {
			days = append(days, d)
		}
	}
	slices.Sort(days)
	days = slices.Compact(days)
	if len(days) > maxDays {
		notes = append(notes, fmt.Sprintf("The daily charts show the latest %d of %d days with usage; since and until choose others.", maxDays, len(days)))
		days = days[len(days)-maxDays:]
	}
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	slices.SortFunc(models, func(a, b string) int {
		return cmp.Or(cmp.Compare(byModel[b], byModel[a]), strings.Compare(a, b))
	})
	slot := map[string]int{}
	var legend []legendItem
	for i, m := range models {
		k := min(i, len(palette)-1)
		slot[m] = k
		if i < len(palette)-1 {
			legend = append(legend, legendItem{Name: orNone(m), Color: palette[k]})
		} else if i == len(palette)-1 {
			legend = append(legend, legendItem{Name: "other models", Color: palette[k]})
		}
	}
	dayIndex := map[string]int{}
	for i, d := range days {
		dayIndex[d] = i
	}
	tok := make([][]float64, len(days))
	usd := make([][]float64, len(days))
	for i := range days {
		tok[i] = make([]float64, len(palette))
		usd[i] = make([]float64, len(palette))
	}
	for _, r := range daily.Rows {
		i, ok := dayIndex[key(r, 0)]
		if !ok {
			continue
		}
		k := slot[key(r, 1)]
		tok[i][k] += tokens(r)
		usd[i][k] += cost(r)
	}
	var charts []chart
	charts = append(charts, chart{ID: "tokens-per-day", Title: "Tokens per day, by model",
		SVG: stacked(days, tok, shortNumber), Legend: legend})
	charts = append(charts, chart{ID: "cost-per-day", Title: "Cost per day (USD), by model",
		SVG: stacked(days, usd, dollars), Legend: legend})
	charts = append(charts, chart{ID: "per-project", Title: "Tokens and cost per project", SVG: horizontal(projects.Rows)})
	charts = append(charts, chart{ID: "per-platform", Title: "Tokens and cost per platform", SVG: horizontal(platforms.Rows)})
	return charts, notes
}

func key(r query.StatsRow, i int) string {
	if i < len(r.Key) {
		return r.Key[i]
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// stacked draws a bar per day, stacked by slot.
func stacked(days []string, values [][]float64, label func(float64) string) template.HTML {
	const w, h, left, right, top, bottom = 900.0, 280.0, 64.0, 12.0, 12.0, 56.0
	top0 := 0.0
	for _, v := range values {
		s := 0.0
		for _, x := range v {
			s += x
		}
		top0 = max(top0, s)
	}
	scale := niceCeil(top0)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="100%%" role="img" font-family="sans-serif" font-size="12">`, w, h)
	plotW, plotH := w-left-right, h-top-bottom
	for i := 0; i <= 4; i++ {
		v := scale * float64(i) / 4
		y := top + plotH - plotH*float64(i)/4
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#e3e7ec"/>`, left, w-right, y, y)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" fill="#5f6b7a">%s</text>`, left-6, y+4, esc(label(v)))
	}
	n := float64(len(days))
	step := plotW / math.Max(n, 1)
	bw := math.Min(math.Max(step*0.8, 1), 48) // a few days: bars, not slabs
	every := int(math.Ceil(n / 15))           // at most 15 labels under the axis
	for i, d := range days {
		x := left + step*float64(i) + (step-bw)/2
		y := top + plotH
		for k, v := range values[i] {
			if v <= 0 || scale == 0 {
				continue
			}
			bh := plotH * v / scale
			y -= bh
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
				x, y, bw, math.Max(bh, 0.5), palette[k], esc(d), esc(label(v)))
		}
		if i%every == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="end" fill="#5f6b7a" transform="rotate(-40 %.1f %g)">%s</text>`,
				x+bw/2, top+plotH+14, x+bw/2, top+plotH+14, esc(d))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// horizontal draws a bar per row, the largest first: its tokens, with its
// cost written after the bar.
func horizontal(rows []query.StatsRow) template.HTML {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b query.StatsRow) int { return cmp.Compare(tokens(b), tokens(a)) })
	if len(rows) > maxBars {
		rows = rows[:maxBars]
	}
	const w, left, right, row = 900.0, 300.0, 170.0, 24.0
	h := row*float64(len(rows)) + 8
	top := 0.0
	for _, r := range rows {
		top = max(top, tokens(r))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="100%%" role="img" font-family="sans-serif" font-size="12">`, w, h)
	for i, r := range rows {
		y := 4 + row*float64(i)
		name := cutText(orNone(key(r, 0)), 46)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" fill="#1d232b">%s</text>`, left-8, y+15, esc(name))
		bw := 0.0
		if top > 0 {
			bw = (w - left - right) * tokens(r) / top
		}
		fmt.Fprintf(&b, `<rect class="bar" x="%g" y="%.1f" width="%.1f" height="%g" fill="%s"><title>%s: %s tokens, %s</title></rect>`,
			left, y+2, math.Max(bw, 1), row-6, palette[i%(len(palette)-1)], esc(orNone(key(r, 0))), query.GroupDigits(int64(tokens(r))), esc(costText(r)))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#5f6b7a">%s · %s</text>`, left+math.Max(bw, 1)+6, y+15,
			esc(shortNumber(tokens(r))), esc(costText(r)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func costText(r query.StatsRow) string {
	if r.Cost == nil {
		return "no price"
	}
	return dollars(*r.Cost)
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// niceCeil is the axis top: v rounded up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func shortNumber(v float64) string {
	switch {
	case v >= 1e9:
		return trim(v/1e9) + "B"
	case v >= 1e6:
		return trim(v/1e6) + "M"
	case v >= 1e3:
		return trim(v/1e3) + "k"
	}
	return trim(v)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

func dollars(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("$%.0f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
