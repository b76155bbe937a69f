// Package oaiwire holds what pos's two OpenAI-compatible clients (the
// embedding provider and the summarizer's chat client) share about the
// wire: how a failed request's status and message are read, which
// failures a retry may fix, how long to wait before the next attempt
// (honouring Retry-After), and a sleep that a cancelled context ends.
package oaiwire

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// MaxWait caps a single wait between attempts.
const MaxWait = 2 * time.Minute

// ErrorStatus returns the HTTP status of a failed request (0 when the
// server was not reached or answered nothing usable) and its message,
// shortened to 200 characters.
func ErrorStatus(err error) (int, string) {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae.HTTPStatusCode, ae.Message
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		msg := strings.TrimSpace(string(re.Body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		if msg == "" {
			msg = re.HTTPStatus
		}
		return re.HTTPStatusCode, msg
	}
	return 0, err.Error()
}

// Retryable reports whether a retry may fix a failure of this status: rate
// limits, server errors, and no answer at all (0).
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 || status == 0
}

// Wait is how long to wait before attempt+1: exponential from base with
// jitter (half to all of base<<attempt), at least what the server asked
// for in Retry-After, at most MaxWait.
func Wait(base time.Duration, attempt int, hint *Hint) time.Duration {
	w := base << attempt
	w = w/2 + time.Duration(rand.Int64N(int64(w/2)+1))
	if hint != nil && hint.After > w {
		w = hint.After
	}
	return min(w, MaxWait)
}

// Hint carries a 429's or 503's Retry-After from the HTTP client back to
// the retry loop (the OpenAI client does not expose the headers of
// errors).
type Hint struct{ After time.Duration }

type hintKey struct{}

// WithHint returns a context whose requests, made through an HTTPClient,
// record their Retry-After in the returned Hint.
func WithHint(ctx context.Context) (context.Context, *Hint) {
	h := &Hint{}
	return context.WithValue(ctx, hintKey{}, h), h
}

// HTTPClient wraps an http.Client to fill in the Hint of a request's
// context when the server answers 429 or 503.
type HTTPClient struct{ C *http.Client }

// Do implements openai.HTTPDoer.
func (h *HTTPClient) Do(req *http.Request) (*http.Response, error) {
	resp, err := h.C.Do(req)
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if hint, ok := req.Context().Value(hintKey{}).(*Hint); ok {
			hint.After = ParseRetryAfter(resp.Header.Get("Retry-After"))
		}
	}
	return resp, err
}

// NewClient returns a client of the OpenAI-compatible API at baseURL (a
// trailing slash dropped) that sends key and fills in the Hint of each
// request's context; timeout bounds each HTTP request (0: no bound).
func NewClient(baseURL, key string, timeout time.Duration) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = strings.TrimRight(baseURL, "/")
	cfg.HTTPClient = &HTTPClient{C: &http.Client{Timeout: timeout}}
	return openai.NewClientWithConfig(cfg)
}

// Retries is how many times a client retries a failed request, from its
// option n: def when n is 0 (not set), none when n is negative.
func Retries(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// Backoff is the first wait between attempts, from its option d: a second
// unless d is set.
func Backoff(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Second
	}
	return d
}

// ParseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func ParseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// Sleep waits d, or until ctx ends (returning its error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OpenAIBaseURL is OpenAI's own endpoint, the default of both clients.
const OpenAIBaseURL = "https://api.openai.com/v1"

// IsOpenAI reports whether a base URL is OpenAI's own API (empty means the
// default, which is): the one endpoint $OPENAI_API_KEY is meant for.
func IsOpenAI(baseURL string) bool {
	if strings.TrimSpace(baseURL) == "" {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Scheme != "https" || u.User != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	return host == "api.openai.com" && (u.Port() == "" || u.Port() == "443")
}

// Key is the API key to send to baseURL: the key the user named for
// this endpoint (a flag or a pos-specific variable) or, for OpenAI's own
// API only, $OPENAI_API_KEY's value. A key meant for OpenAI never goes to
// another host, whatever base URL a variable or a lake names.
func Key(baseURL, named, openAIKey string) string {
	if named != "" {
		return named
	}
	if IsOpenAI(baseURL) {
		return openAIKey
	}
	return ""
}

// Redact returns a base URL fit to be stored or shown: scheme, host, port
// and path, without user information, query or fragment (where a
// credential might be).
func Redact(baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Host == "" {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return strings.TrimRight(u.String(), "/")
}
