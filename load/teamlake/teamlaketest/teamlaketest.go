// Package teamlaketest has what the tests of the shared lake share: the
// messages they load into local lakes and the ids a shared table holds.
//
// It is imported by tests only.
package teamlaketest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/schema"
)

// ID is the id of message i.
func ID(i int) string { return fmt.Sprintf("m%03d", i) }

// IDs are the ids of messages from..to.
func IDs(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, ID(i))
	}
	return out
}

// Messages are messages from..to of one session, five hours apart from
// 2026-11-03 09:00 UTC on, so that they span days. They carry pos-scrub's
// mark (schema.ScrubSecrets), as records of a pipeline with pos-scrub do:
// a shared lake takes no rows that were never scrubbed.
func Messages(from, to int) []*schema.Record {
	day := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	var out []*schema.Record
	for i := from; i <= to; i++ {
		r := loadtest.Msg(ID(i), "s1", fmt.Sprintf("message %d", i), day.Add(time.Duration(i)*5*time.Hour))
		r.SetScrubMark(schema.ScrubSecrets)
		out = append(out, r)
	}
	return out
}

// TableIDs are the ids of a shared table's current snapshot, sorted, one
// per row.
func TableIDs(t testing.TB, l *teamlake.Lake, name string) []string {
	t.Helper()
	var out []string
	EachBatch(t, l, name, func(rec arrow.RecordBatch) {
		col := rec.Column(0).(*array.String)
		for i := range col.Len() {
			out = append(out, col.Value(i))
		}
	}, "id")
	slices.Sort(out)
	return out
}

// EachBatch calls fn with each record batch of a shared table's current
// snapshot, of the given fields (none: all); it reports false, calling fn
// for none, when the table does not exist.
func EachBatch(t testing.TB, l *teamlake.Lake, name string, fn func(arrow.RecordBatch), fields ...string) bool {
	t.Helper()
	ctx := context.Background()
	tbl, err := l.Table(ctx, name)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	var opts []table.ScanOption
	if len(fields) > 0 {
		opts = append(opts, table.WithSelectedFields(fields...))
	}
	at, err := tbl.Scan(opts...).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	for tr.Next() {
		fn(tr.RecordBatch())
	}
	return true
}

// S3 is an S3 client for the endpoint and credentials the AWS SDK's
// variables name (seaweedtest's Setenv), addressing buckets path-style.
func S3(t testing.TB) *s3.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = true
		o.DisableLogOutputChecksumValidationSkipped = true // SeaweedFS sends none
	})
}

// CopyBucket downloads every object of bucket to dir/KEY, as a local copy
// of the bucket, and returns the keys.
func CopyBucket(t testing.TB, bucket, dir string) []string {
	t.Helper()
	ctx := context.Background()
	c := S3(t)
	var keys []string
	pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("listing %s: %v", bucket, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	for _, k := range keys {
		if strings.HasSuffix(k, "/") {
			continue // a directory marker
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		if err != nil {
			t.Fatalf("getting %s: %v", k, err)
		}
		b, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil {
			t.Fatalf("reading %s: %v", k, err)
		}
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// DeleteObject removes s3://BUCKET/KEY.
func DeleteObject(t testing.TB, uri string) {
	t.Helper()
	bucket, key, ok := strings.Cut(strings.TrimPrefix(uri, "s3://"), "/")
	if !ok {
		t.Fatalf("not an object: %s", uri)
	}
	if _, err := S3(t).DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Fatalf("deleting %s: %v", uri, err)
	}
}
