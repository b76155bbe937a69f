package cmdio

import (
	"context"
	"testing"
	"time"
)

// WhenStuck calls stuck only when the context is done and the run has not
// ended within the time given.
func TestWhenStuck(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stuck := make(chan struct{})
	done := WhenStuck(ctx, 10*time.Millisecond, func() { close(stuck) })
	cancel()
	select {
	case <-stuck:
	case <-time.After(5 * time.Second):
		t.Fatal("stuck was not called")
	}
	done()

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	called := make(chan struct{}, 1)
	done = WhenStuck(ctx, 10*time.Millisecond, func() { called <- struct{}{} })
	done() // the run ended first
	cancel()
	time.Sleep(50 * time.Millisecond)
	if len(called) > 0 {
		t.Error("stuck was called after the run ended")
	}
}
