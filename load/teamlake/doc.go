// Package teamlake publishes a local lake's indexed tables to a shared lake
// that many machines write: Apache Iceberg tables in an Iceberg REST
// catalog, their data in an S3-compatible bucket. Each machine loads its
// histories into its own local lake as always; Publish sends what is new,
// without the records the shared table already holds, in one Iceberg
// commit per table, retried on a conflict with another machine's commit.
// Maintain compacts the tables' small files, expires old snapshots and
// deletes the objects no snapshot references, beside publishers and
// readers.
// docs/team-lake-design.md gives the design.
package teamlake
