package cline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/schema"
)

// uiRow is one element of ui_messages.json (a ClineMessage).
type uiRow struct {
	TS        json.RawMessage `json:"ts"`
	Type      string          `json:"type"`
	Say       string          `json:"say"`
	Ask       string          `json:"ask"`
	Text      string          `json:"text"`
	Reasoning string          `json:"reasoning"`
	Partial   bool            `json:"partial"`
	ModelInfo *modelInfo      `json:"modelInfo"`
	Index     *int            `json:"conversationHistoryIndex"`
}

// apiReqInfo is the JSON text of a say:"api_req_started" row.
type apiReqInfo struct {
	TokensIn    float64  `json:"tokensIn"`
	TokensOut   float64  `json:"tokensOut"`
	CacheWrites float64  `json:"cacheWrites"`
	CacheReads  float64  `json:"cacheReads"`
	Cost        *float64 `json:"cost"`
}

// clamp reads token counts below zero as zero, and reports whether there
// was one.
func (a *apiReqInfo) clamp() bool {
	neg := false
	for _, n := range []*float64{&a.TokensIn, &a.TokensOut, &a.CacheWrites, &a.CacheReads} {
		if *n < 0 {
			*n, neg = 0, true
		}
	}
	return neg
}

// request is one API request the ui recorded.
type request struct {
	index   int // conversationHistoryIndex: the api history's length-1 when it started
	ts      time.Time
	usage   schema.Usage
	cost    float64
	hasCost bool
	model   modelInfo
}

// uiInfo is what the ui rows tell about the api history, by api index.
type uiInfo struct {
	reqTS  map[int]time.Time // when the request that sent message j started
	rowTS  map[int]time.Time // the first other row after message j-1
	userTS map[int]time.Time // the user's own rows (the task, feedback) after message j-1
	models map[int]modelInfo // the model of the rows streaming message j
	reqs   []request         // with an index, sorted by it
	loose  []request         // without an index, by time
	task   string            // the task as the user typed it
}

func minTS(m map[int]time.Time, k int, ts time.Time) {
	if old, ok := m[k]; !ok || ts.Before(old) {
		m[k] = ts
	}
}

// userRow tells the rows that hold what the user typed.
func userRow(i int, row *uiRow) bool {
	return (i == 0 && row.Type == "say" && (row.Say == "text" || row.Say == "task")) || row.Say == "user_feedback"
}

// readUI reads ui_messages.json: a raw record per row, what the rows tell
// about the api history, and, for an orphan ui file, messages.
func (t *task) readUI(ctx context.Context, s *source) error {
	ui := &t.ui
	ui.reqTS, ui.rowTS, ui.userTS, ui.models = map[int]time.Time{}, map[int]time.Time{}, map[int]time.Time{}, map[int]modelInfo{}
	o := &orphanState{}
	var last time.Time
	end, err := t.records(ctx, s, func(rec *schema.Record, i int, raw []byte) error {
		var (
			row   uiRow
			info  apiReqInfo
			isObj bool
			warns []string // what of the row could not be read
		)
		if len(raw) > 0 && raw[0] == '{' {
			odd, err := lenientOdd(raw, &row)
			isObj = err == nil
			if odd != nil {
				warns = append(warns, odd.Error())
			}
		}
		ts, ok := epochMS(row.TS)
		if v := bytes.TrimSpace(row.TS); !ok && len(v) > 0 && string(v) != "null" {
			warns = append(warns, fmt.Sprintf("ts %s is not a time: not read", v))
		}
		if row.Say == "api_req_started" {
			if odd, _ := lenientOdd([]byte(row.Text), &info); odd != nil {
				warns = append(warns, "text: "+odd.Error())
			}
			if info.clamp() {
				warns = append(warns, "text: a token count below zero: read as 0")
			}
		}
		if len(warns) > 0 {
			w := &schema.BadInput{Path: s.path, Key: key(s.name, i), Err: errors.New(strings.Join(warns, "; "))}
			if err := t.r.opt.Warn(w); err != nil {
				return err
			}
		}
		switch {
		case ok:
			rec.TS, rec.TSPrecision, last = ts, schema.PrecisionExact, ts
			if ts.After(t.uiLast) {
				t.uiLast = ts
			}
		case !last.IsZero():
			rec.TS, rec.TSPrecision = last, schema.PrecisionDerived
		default:
			rec.TS, rec.TSPrecision = s.fp.Mtime, schema.PrecisionFileMtime
		}
		if !isObj {
			// Another shape: kept raw only, in its place.
			if t.orphan {
				return t.orphanRow(o, i, &uiRow{}, rec)
			}
			return t.emit(rec)
		}
		rec.NativeType = strings.Trim(row.Type+"/"+cmp.Or(row.Say, row.Ask), "/")
		if row.Partial {
			rec.Completeness = schema.CompletePartial
		}
		c, j := -2, -1
		if row.Index != nil {
			c = *row.Index
			j = c + 1
		}
		switch {
		case row.Say == "api_req_started":
			req := request{index: c, ts: rec.TS, usage: schema.Usage{
				Input: int64(info.TokensIn), Output: int64(info.TokensOut),
				CacheCreation: int64(info.CacheWrites), CacheRead: int64(info.CacheReads),
			}}
			if info.Cost != nil {
				req.cost, req.hasCost = *info.Cost, true
				t.cost += *info.Cost
				t.costSeen = true
			}
			if row.ModelInfo != nil {
				req.model = *row.ModelInfo
			}
			t.requests++
			if row.Index != nil {
				ui.reqs = append(ui.reqs, req)
				if _, ok := ui.reqTS[j]; !ok {
					ui.reqTS[j] = rec.TS
				}
			} else {
				ui.loose = append(ui.loose, req)
			}
			if t.orphan {
				o.pending = append(o.pending, req)
			}
		case userRow(i, &row):
			if i == 0 {
				ui.task = row.Text
			}
			if row.Index != nil {
				minTS(ui.userTS, j, rec.TS)
			}
		case row.Index != nil:
			minTS(ui.rowTS, j, rec.TS)
			if _, ok := ui.models[j]; !ok && row.ModelInfo != nil && row.ModelInfo.ModelID != "" {
				ui.models[j] = *row.ModelInfo
			}
		}
		if !t.orphan {
			return t.emit(rec)
		}
		return t.orphanRow(o, i, &row, rec)
	})
	if t.orphan {
		if err := o.flush(t); err != nil {
			return err
		}
	}
	slices.SortStableFunc(ui.reqs, func(a, b request) int { return cmp.Compare(a.index, b.index) })
	slices.SortStableFunc(ui.loose, func(a, b request) int { return a.ts.Compare(b.ts) })
	return t.endArray(s, end, err)
}
