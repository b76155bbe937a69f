package oaiwire

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "2": 2 * time.Second, "0.5": 500 * time.Millisecond, "-1": 0, "soon": 0} {
		if got := ParseRetryAfter(v); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	if got := ParseRetryAfter(future); got < 80*time.Second || got > 91*time.Second {
		t.Errorf("HTTP date 90 s ahead gave %v", got)
	}
}

func TestWait(t *testing.T) {
	for attempt := range 4 {
		w := Wait(time.Second, attempt, nil)
		if lo, hi := (time.Second<<attempt)/2, time.Second<<attempt; w < lo || w > hi {
			t.Errorf("attempt %d: %v outside [%v, %v]", attempt, w, lo, hi)
		}
	}
	if w := Wait(time.Millisecond, 0, &Hint{After: 3 * time.Second}); w != 3*time.Second {
		t.Errorf("Retry-After 3s gave %v", w)
	}
	if w := Wait(time.Minute, 5, nil); w != MaxWait {
		t.Errorf("uncapped wait %v", w)
	}
}

func TestHintFromServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	ctx, hint := WithHint(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	resp, err := (&HTTPClient{C: srv.Client()}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hint.After != 7*time.Second {
		t.Fatalf("hint %v, want 7s", hint.After)
	}
	if !Retryable(429) || !Retryable(502) || !Retryable(0) || Retryable(401) || Retryable(404) {
		t.Error("Retryable misjudges a status")
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a cancelled context: %v", err)
	}
}

func TestRetriesAndBackoff(t *testing.T) {
	for _, c := range []struct{ n, def, want int }{{0, 3, 3}, {-1, 3, 0}, {7, 3, 7}, {0, 5, 5}} {
		if got := Retries(c.n, c.def); got != c.want {
			t.Errorf("Retries(%d, %d) = %d, want %d", c.n, c.def, got, c.want)
		}
	}
	for d, want := range map[time.Duration]time.Duration{0: time.Second, -1: time.Second, 3 * time.Second: 3 * time.Second} {
		if got := Backoff(d); got != want {
			t.Errorf("Backoff(%v) = %v, want %v", d, got, want)
		}
	}
}
