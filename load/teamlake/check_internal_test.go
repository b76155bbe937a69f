package teamlake

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/pos-lake/pos/load/layout"
)

// The schema and spec checks accept what publishing creates and name what
// differs from it: a missing column, a changed type or nullability, a
// different partition transform.
func TestCheckSchemaAndSpec(t *testing.T) {
	sc, err := icebergSchema(layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameSchema(layout.TableMessages, sc); err != nil {
		t.Fatalf("the schema publish creates: %v", err)
	}
	fields := sc.Fields()
	changes := map[string]func([]iceberg.NestedField) []iceberg.NestedField{
		"a column dropped": func(f []iceberg.NestedField) []iceberg.NestedField { return f[1:] },
		"a type changed": func(f []iceberg.NestedField) []iceberg.NestedField {
			for i := range f {
				if f[i].Name == "text" {
					f[i].Type = iceberg.PrimitiveTypes.Binary
				}
			}
			return f
		},
		"nullability changed": func(f []iceberg.NestedField) []iceberg.NestedField {
			f[0].Required = !f[0].Required
			return f
		},
	}
	for what, change := range changes {
		other := iceberg.NewSchema(0, change(append([]iceberg.NestedField(nil), fields...))...)
		if err := sameSchema(layout.TableMessages, other); err == nil {
			t.Errorf("%s: the schema check passes", what)
		}
	}

	spec, err := partitionSpec(layout.TableMessages, sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameSpec(layout.TableMessages, sc, spec); err != nil {
		t.Fatalf("the spec publish creates: %v", err)
	}
	plat, _ := sc.FindFieldByName("platform")
	ts, _ := sc.FindFieldByName("ts")
	monthly, err := iceberg.NewPartitionSpecOpts(
		iceberg.AddPartitionFieldBySourceID(plat.ID, "platform", iceberg.IdentityTransform{}, sc, nil),
		iceberg.AddPartitionFieldBySourceID(ts.ID, "day", iceberg.MonthTransform{}, sc, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := sameSpec(layout.TableMessages, sc, monthly); err == nil || !strings.Contains(err.Error(), "day=month(ts)") {
		t.Errorf("a monthly spec: %v, want an error naming day=month(ts)", err)
	}
}
