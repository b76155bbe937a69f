package teamlake

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/parquet-go/parquet-go"

	"github.com/pos-lake/pos/load/layout"
)

// Tables are the indexed tables a shared lake holds by default; raw is
// published only when asked for.
var Tables = []string{layout.TableMessages, layout.TableExchanges, layout.TableSessions,
	layout.TableDocuments, layout.TableDecisions, layout.TableFileRefs, layout.TableChunks}

// arrowSchema is a table's schema as Arrow reads the local lake's Parquet
// files: the schema of a zero-row file of the table's row type.
func arrowSchema(name string) (*arrow.Schema, error) {
	row := layout.RowType(name)
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, parquet.SchemaOf(row))
	if err := w.Close(); err != nil {
		return nil, err
	}
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(buf.Bytes()), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%s: the schema of %s: %w", name, reflect.TypeOf(row).Name(), err)
	}
	defer tbl.Release()
	return tbl.Schema(), nil
}

// icebergSchema is a table's Iceberg schema, with fresh field ids.
func icebergSchema(name string) (*iceberg.Schema, error) {
	sc, err := arrowSchema(name)
	if err != nil {
		return nil, err
	}
	return table.ArrowSchemaToIcebergWithFreshIDs(sc, false)
}

// partitionColumn is the timestamp whose UTC day is a table's date
// partition in the local lake: a session's last time, else the record's.
func partitionColumn(name string) string {
	if name == layout.TableSessions {
		return "last_ts"
	}
	return "ts"
}

// partitionSpec partitions a table by platform and day, as the local
// lake's platform=/date= directories do.
func partitionSpec(name string, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	plat, ok := sc.FindFieldByName("platform")
	if !ok {
		return iceberg.PartitionSpec{}, fmt.Errorf("%s: no platform column", name)
	}
	ts, ok := sc.FindFieldByName(partitionColumn(name))
	if !ok {
		return iceberg.PartitionSpec{}, fmt.Errorf("%s: no %s column", name, partitionColumn(name))
	}
	return iceberg.NewPartitionSpecOpts(
		iceberg.AddPartitionFieldBySourceID(plat.ID, "platform", iceberg.IdentityTransform{}, sc, nil),
		iceberg.AddPartitionFieldBySourceID(ts.ID, "day", iceberg.DayTransform{}, sc, nil),
	)
}
