package extract

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pos-lake/pos/schema"
)

func TestOrderedKeepsJobOrder(t *testing.T) {
	const jobs, per = 40, 700
	var got []string
	err := Ordered(context.Background(), 3, jobs, func(ctx context.Context, i int, emit Emit) error {
		for k := range per {
			if rand.IntN(200) == 0 {
				time.Sleep(time.Millisecond)
			}
			r := schema.New(schema.KindRaw)
			r.ID = fmt.Sprintf("%d/%d", i, k)
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	}, func(r *schema.Record) error { got = append(got, r.ID); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != jobs*per {
		t.Fatalf("%d records", len(got))
	}
	for i, id := range got {
		if want := fmt.Sprintf("%d/%d", i/per, i%per); id != want {
			t.Fatalf("record %d is %s, want %s", i, id, want)
		}
	}
}

func TestOrderedStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	err := Ordered(context.Background(), 2, 100, func(ctx context.Context, i int, emit Emit) error {
		if i == 7 {
			return boom
		}
		return emit(schema.New(schema.KindRaw))
	}, func(*schema.Record) error { return nil })
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	stop := errors.New("consumer")
	err = Ordered(context.Background(), 2, 100, func(ctx context.Context, i int, emit Emit) error {
		return emit(schema.New(schema.KindRaw))
	}, func(*schema.Record) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("err %v", err)
	}
}

// A job that fails while the dispatcher waits for a free worker, with the
// next job already queued for the consumer: Ordered returns the error (it
// hung once, the consumer waiting on the queued job nobody would start).
func TestOrderedErrorWhileAJobIsQueued(t *testing.T) {
	boom := errors.New("boom")
	done := make(chan error, 1)
	go func() {
		done <- Ordered(context.Background(), 2, 10, func(ctx context.Context, i int, emit Emit) error {
			switch i {
			case 0:
				<-ctx.Done() // busy until the failure
				return ctx.Err()
			case 1:
				time.Sleep(50 * time.Millisecond) // job 2 is queued meanwhile
				return boom
			}
			return emit(schema.New(schema.KindRaw))
		}, func(*schema.Record) error { return nil })
	}()
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Fatalf("err %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ordered did not return")
	}
}
