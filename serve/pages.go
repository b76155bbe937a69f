package serve

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/query"
)

// listLimit bounds the sessions a list shows.
const listLimit = 500

// filter is the list's and the charts' filters, from the query string.
type filter struct {
	Platform, Project, Since, Until string
	since, until                    time.Time
}

func readFilter(r *http.Request, platforms []string, loc *time.Location) (filter, error) {
	q := r.URL.Query()
	f := filter{Platform: q.Get("platform"), Project: strings.TrimSpace(q.Get("project")),
		Since: q.Get("since"), Until: q.Get("until")}
	if f.Platform != "" && !slices.Contains(platforms, f.Platform) {
		return f, fmt.Errorf("unknown platform %q", f.Platform)
	}
	var err error
	if f.Since != "" {
		if f.since, err = time.ParseInLocation(time.DateOnly, f.Since, loc); err != nil {
			return f, fmt.Errorf("since: a date as 2026-01-31")
		}
	}
	if f.Until != "" {
		if f.until, err = time.ParseInLocation(time.DateOnly, f.Until, loc); err != nil {
			return f, fmt.Errorf("until: a date as 2026-01-31")
		}
		f.until = f.until.AddDate(0, 0, 1) // the day given is included
	}
	if !f.since.IsZero() && !f.until.IsZero() && !f.since.Before(f.until) {
		return f, fmt.Errorf("since must not be after until")
	}
	return f, nil
}

// sessionURL is the page of a session's transcript.
func sessionURL(platform, id string) string {
	return "/session/" + url.PathEscape(platform) + "/" + url.PathEscape(id)
}

type listPage struct {
	Filter    filter
	Platforms []string
	Sessions  []query.Session
	Cut       bool
	Err       string
	Now       time.Time
}

func (s *server) list(w http.ResponseWriter, r *http.Request) {
	p := listPage{Platforms: s.opt.Platforms, Now: s.opt.Now()}
	f, err := readFilter(r, s.opt.Platforms, s.opt.Location)
	p.Filter = f
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		p.Err = err.Error()
		s.render(w, "list", p)
		return
	}
	s.mu.Lock()
	p.Sessions, err = s.db.Sessions(r.Context(), query.SessionFilter{Platform: f.Platform, Project: f.Project,
		Since: f.since, Until: f.until, Limit: listLimit + 1})
	s.mu.Unlock()
	if err != nil {
		fail(w, err)
		return
	}
	if len(p.Sessions) > listLimit {
		p.Sessions, p.Cut = p.Sessions[:listLimit], true
	}
	s.render(w, "list", p)
}

func (s *server) session(w http.ResponseWriter, r *http.Request) {
	platform, id := r.PathValue("platform"), r.PathValue("id")
	if !slices.Contains(s.opt.Platforms, platform) || id == "" {
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	s.mu.Lock()
	t, err := s.db.Transcript(r.Context(), query.TranscriptOptions{Session: id, Platform: platform})
	s.mu.Unlock()
	if err == nil && t.Session.SessionID != id {
		err = fmt.Errorf("no session %s", id) // a prefix: pages name sessions whole
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	var b strings.Builder
	if err := query.TranscriptHTML(&b, query.TranscriptPage{T: t, Back: "/"}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, b.String())
}

// searchK is how many hits a search shows.
const searchK = 20

// hit is a search hit as the page and the JSON endpoint give it.
type hit struct {
	SessionID string    `json:"session_id"`
	Platform  string    `json:"platform"`
	Title     string    `json:"title"`
	Project   string    `json:"project"`
	TS        time.Time `json:"ts"`
	Type      string    `json:"content_type"`
	Snippet   string    `json:"snippet"` // the query's words between ** and **
	URL       string    `json:"url"`
}

func (s *server) find(r *http.Request) (string, []hit, error) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		return q, nil, nil
	}
	if len(q) > 500 {
		return q, nil, &query.ArgError{Msg: "the query is too long (at most 500 bytes)"}
	}
	s.mu.Lock()
	res, err := s.db.Search(r.Context(), query.SearchOptions{Query: q, Mode: query.SearchLexical, K: searchK})
	s.mu.Unlock()
	if err != nil {
		return q, nil, err
	}
	hits := make([]hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		hits = append(hits, hit{SessionID: h.SessionID, Platform: h.Platform, Title: h.Title, Project: h.Project,
			TS: h.TS, Type: h.ContentType, Snippet: h.Snippet, URL: sessionURL(h.Platform, h.SessionID)})
	}
	return q, hits, nil
}

type searchPage struct {
	Query  string
	Hits   []hit
	Err    string
	Script template.JS
}

func (s *server) search(w http.ResponseWriter, r *http.Request) {
	q, hits, err := s.find(r)
	p := searchPage{Query: q, Hits: hits, Script: template.JS(searchScript)}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		p.Err = err.Error()
	}
	s.render(w, "search", p)
}

func (s *server) searchJSON(w http.ResponseWriter, r *http.Request) {
	q, hits, err := s.find(r)
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"query": q, "hits": hits})
}

// searchScript searches as the user types: it asks /api/search and lays
// the hits out with DOM calls, text as text. Without it the form works as
// a plain GET.
const searchScript = `(function(){
var input=document.getElementById("q"),list=document.getElementById("hits"),status=document.getElementById("status"),timer=null,seq=0;
function snippet(el,s){s.split("**").forEach(function(part,i){if(!part)return;if(i%2){var m=document.createElement("mark");m.textContent=part;el.appendChild(m)}else el.appendChild(document.createTextNode(part))})}
function show(data,n){if(n!==seq)return;list.textContent="";list.dataset.q=data.query||"";var hits=data.hits||[];status.textContent=data.error?data.error:hits.length+" hits";
hits.forEach(function(h){var d=document.createElement("div");d.className="hit";var a=document.createElement("a");a.href=h.url;a.textContent=h.title||h.session_id;d.appendChild(a);
var m=document.createElement("div");m.className="meta";m.textContent=h.platform+" · "+h.session_id.slice(0,8)+" · "+(h.ts||"").slice(0,10)+" · "+h.content_type;d.appendChild(m);
var p=document.createElement("div");p.className="text";snippet(p,h.snippet||"");d.appendChild(p);list.appendChild(d)})}
function run(){var q=input.value.trim(),n=++seq;history.replaceState(null,"","/search"+(q?"?q="+encodeURIComponent(q):""));
if(!q){list.textContent="";status.textContent="";return}status.textContent="searching…";
fetch("/api/search?q="+encodeURIComponent(q)).then(function(r){return r.json()}).then(function(d){show(d,n)}).catch(function(e){if(n===seq)status.textContent=String(e)})}
input.addEventListener("input",function(){clearTimeout(timer);timer=setTimeout(run,150)});
})();`

// snippetParts splits a snippet at its ** markers: odd parts are the
// query's words.
func snippetParts(s string) []struct {
	Text string
	Mark bool
} {
	var out []struct {
		Text string
		Mark bool
	}
	for i, part := range strings.Split(s, "**") {
		if part != "" {
			out = append(out, struct {
				Text string
				Mark bool
			}{part, i%2 == 1})
		}
	}
	return out
}

type chartsPage struct {
	Filter    filter
	Platforms []string
	Charts    []chart
	Err       string
	Notes     []string
}

func (s *server) charts(w http.ResponseWriter, r *http.Request) {
	p := chartsPage{Platforms: s.opt.Platforms}
	f, err := readFilter(r, s.opt.Platforms, s.opt.Location)
	p.Filter = f
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		p.Err = err.Error()
		s.render(w, "charts", p)
		return
	}
	stats := func(by ...string) (*query.StatsResult, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.db.Stats(r.Context(), query.StatsOptions{By: by, Since: f.since, Until: f.until,
			Platform: f.Platform, Project: f.Project, Prices: s.opt.Prices, Location: s.opt.Location})
	}
	daily, err := stats("day", "model")
	if err != nil {
		fail(w, err)
		return
	}
	projects, err := stats("project")
	if err != nil {
		fail(w, err)
		return
	}
	platforms, err := stats("platform")
	if err != nil {
		fail(w, err)
		return
	}
	p.Charts, p.Notes = buildCharts(daily, projects, platforms)
	s.render(w, "charts", p)
}

var pages = template.Must(template.New("pages").Funcs(template.FuncMap{
	"style": func() template.CSS { return template.CSS(query.TranscriptStyle) },
	"url":   sessionURL,
	"ago":   func(now, t time.Time) string { return humanize.RelTime(t, now, "ago", "from now") },
	// Times in the machine's zone ($TZ), as pos-query's tables show them by
	// default; each server's copy shows them in its Options.Location.
	"day":     func(t time.Time) string { return t.Local().Format("2006-01-02 15:04") },
	"num":     query.GroupDigits,
	"cut":     func(s string, n int) string { return cutText(query.OneLine(s), n) },
	"parts":   snippetParts,
	"short":   func(s string) string { return cutText(s, 8) },
	"shortid": func(s string) string { return shortID(s) },
}).Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.}} · pos</title><style>{{style}}</style></head>
<body><header class="top"><a href="/">Sessions</a><a href="/search">Search</a><a href="/charts">Charts</a></header>
<main>{{end}}

{{define "filters"}}<form class="filters" method="get">
<label>platform<select name="platform"><option value="">all</option>{{$p := .Filter.Platform}}{{range .Platforms}}<option{{if eq . $p}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>project contains<input name="project" value="{{.Filter.Project}}"></label>
<label>since<input type="date" name="since" value="{{.Filter.Since}}"></label>
<label>until<input type="date" name="until" value="{{.Filter.Until}}"></label>
<button type="submit">Filter</button></form>
{{with .Err}}<p class="meta" id="error">{{.}}</p>{{end}}{{end}}

{{define "list"}}{{template "head" "Sessions"}}<h1>Sessions</h1>
{{template "filters" .}}
<table id="sessions"><thead><tr><th>last active</th><th>title</th><th>platform</th><th class="num">turns</th><th class="num">out tokens</th><th>project</th></tr></thead><tbody>
{{$now := .Now}}{{range .Sessions}}<tr class="session"><td class="when">{{day .LastTS}}<br><span class="meta">{{ago $now .LastTS}}</span></td>
<td><a href="{{url .Platform .SessionID}}">{{with .Title}}{{cut . 100}}{{else}}(untitled){{end}}</a><br><span class="meta">{{shortid .SessionID}}</span></td>
<td>{{.Platform}}</td><td class="num">{{.Exchanges}}</td><td class="num">{{num .Output}}</td><td class="path">{{cut .Project 48}}</td></tr>
{{else}}<tr><td colspan="6">No session matches.</td></tr>{{end}}</tbody></table>
{{if .Cut}}<p class="meta">Showing the {{len .Sessions}} most recently active sessions; narrow the filters to see others.</p>{{end}}
</main></body></html>{{end}}

{{define "search"}}{{template "head" "Search"}}<h1>Search</h1>
<form class="filters" method="get" action="/search" role="search"><label>words<input id="q" name="q" value="{{.Query}}" size="50" autofocus autocomplete="off"></label><button type="submit">Search</button></form>
<p class="meta" id="status">{{with .Err}}{{.}}{{else}}{{if .Query}}{{len .Hits}} hits{{end}}{{end}}</p>
<div id="hits">{{range .Hits}}<div class="hit"><a href="{{.URL}}">{{with .Title}}{{cut . 120}}{{else}}{{.SessionID}}{{end}}</a>
<div class="meta">{{.Platform}} · {{shortid .SessionID}} · {{day .TS}} · {{.Type}}</div>
<div class="text">{{range parts .Snippet}}{{if .Mark}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}</div></div>{{end}}</div>
<script>{{.Script}}</script>
</main></body></html>{{end}}

{{define "charts"}}{{template "head" "Charts"}}<h1>Tokens and cost</h1>
{{template "filters" .}}
{{range .Notes}}<p class="meta">{{.}}</p>{{end}}
{{range .Charts}}<div class="chart" id="{{.ID}}"><h2>{{.Title}}</h2>{{.SVG}}
{{with .Legend}}<div class="legend">{{range .}}<span><i style="background:{{.Color}}"></i>{{.Name}}</span>{{end}}</div>{{end}}</div>
{{else}}<p>No usage in the lake for these filters.</p>{{end}}
</main></body></html>{{end}}
`))

func shortID(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func cutText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
