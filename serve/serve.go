// Package serve is pos-query serve: a read-only web page over the lake,
// for this machine only. It lists sessions (with filters), shows a
// session's transcript as export --format html does, searches as you type
// (lexically: the lake's index, no model, no network) and draws charts of
// tokens and cost per day and model, per project and per platform as SVG
// made on the server.
//
// It listens on 127.0.0.1 only, answers GET and HEAD only, loads nothing
// from elsewhere (a Content-Security-Policy forbids it to the pages too,
// and to any text from the histories they show) and makes no request of
// its own. Every text from the histories is escaped by html/template.
package serve

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/pricing"
	"github.com/pos-lake/pos/query"
)

// DefaultAddr is where serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8377"

// Options configure a server.
type Options struct {
	// Platforms are the platform names the list's filter offers.
	Platforms []string
	// Prices price the charts' costs; nil: the built-in table.
	Prices *pricing.Table
	// Now is the clock (tests fix it); nil: time.Now.
	Now func() time.Time
	// Location is the zone of the list's times, of the filter's dates and
	// of the charts' days; nil: the machine's (time.Local, $TZ).
	Location *time.Location
}

// CheckAddr accepts 127.0.0.1:PORT only: the page shows the histories, so
// it is never offered to other machines.
func CheckAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if host != "127.0.0.1" {
		return fmt.Errorf("--addr %q: serve listens on 127.0.0.1 only (give 127.0.0.1:PORT)", addr)
	}
	if port == "" {
		return fmt.Errorf("--addr %q: no port", addr)
	}
	return nil
}

// Listen checks addr (see CheckAddr) and listens there.
func Listen(addr string) (net.Listener, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	return net.Listen("tcp4", addr)
}

// Serve answers on l until ctx ends, then shuts down.
func Serve(ctx context.Context, l net.Listener, db *query.DB, opt Options) error {
	srv := &http.Server{Handler: Handler(db, opt), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if e := <-done; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
		return err
	}
}

// server holds the lake; one query runs at a time (the machine's cores
// are the engine's).
type server struct {
	db    *query.DB
	opt   Options
	pages *template.Template // pages, with the times in opt.Location
	mu    sync.Mutex
}

// csp lets the pages use their inline style and the one inline script
// (by its hash), and fetch from this server only.
var csp = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
	"script-src '" + scriptHash() + "'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func scriptHash() string {
	h := sha256.Sum256([]byte(searchScript))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

// Handler is the server's pages.
func Handler(db *query.DB, opt Options) http.Handler {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Location == nil {
		opt.Location = time.Local
	}
	loc := opt.Location
	s := &server{db: db, opt: opt, pages: template.Must(pages.Clone()).Funcs(template.FuncMap{
		"day": func(t time.Time) string { return t.In(loc).Format("2006-01-02 15:04") },
	})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.list)
	mux.HandleFunc("GET /session/{platform}/{id}", s.session)
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /api/search", s.searchJSON)
	mux.HandleFunc("GET /charts", s.charts)
	return guard(mux)
}

// guard answers reads only, from pages of this server only: a request
// whose Host is not the loopback address (a page elsewhere that had a
// name of its resolve here) is refused.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host != "127.0.0.1" && host != "localhost" {
			http.Error(w, "this server answers requests to 127.0.0.1 only", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// fail answers an error: a bad request for the user's mistakes (an
// unknown session, a bad date), else an internal error.
func fail(w http.ResponseWriter, err error) {
	var ae *query.ArgError
	code := http.StatusInternalServerError
	if errors.As(err, &ae) {
		code = http.StatusBadRequest
		if strings.Contains(ae.Msg, "no session") {
			code = http.StatusNotFound
		}
	}
	http.Error(w, err.Error(), code)
}

// render writes page name with data, buffered so that a failure is an
// error page and not half a page.
func (s *server) render(w http.ResponseWriter, name string, data any) {
	var b strings.Builder
	if err := s.pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, b.String())
}
