// Package extract reads the session histories AI coding agents leave on disk
// and turns them into canonical pos records. Each platform is an Adapter in
// a package of its own (extract/claudecode, extract/cline, …) that registers
// itself (Register, from init) and is linked in by extract/all. This package
// holds what adapters share: discovery (Walk), reading from the incremental
// watermarks (OpenSource, Checkpoint; the watermarks themselves are kept by
// package internal/watermark), ordered parallel reading (Ordered) and the
// capability matrix.
//
// The contract every adapter keeps (extract/claudecode is the reference):
//
//   - Every native record — a JSONL line, an element of a JSON array, a
//     SQLite row, a markdown block — becomes one KindRaw record holding the
//     native record verbatim as one-line JSON (Record.Raw; a non-JSON native
//     record is wrapped as a JSON string or object), with its provenance
//     (Source: path, and line and byte offset, or Key for a row or JSON
//     path), and its id from schema.RawID. Nothing is dropped: a record the
//     adapter does not understand is still a raw record. The raw value is
//     strict JSON every reader of the lake takes (RawLine, RawJSON: invalid
//     UTF-8, control characters, invalid escapes and lone surrogates
//     repaired, nesting deeper than schema.MaxNesting kept as a JSON
//     string); Source.Altered names what was changed. JSONL formats read
//     their lines through ReadLines, which applies all of it alike.
//   - The message made from a native record (if any) follows its raw record
//     immediately, with Raw empty. Message ids are stable across runs:
//     schema.ID(platform, session, native id) when native ids are local to a
//     session. Role and ContentType classify it: a prompt the user typed is
//     role user, content_type text (or command); tool output is role tool,
//     tool_result; text a tool injected is role system. pos-normalize opens
//     an exchange at each prompt.
//   - Times are UTC with TSPrecision exact (the tool wrote it for this
//     record), derived (from a neighbour or a parent) or file_mtime.
//     Completeness is full, partial or metadata_only (bodies absent).
//   - Usage carries the provider's token counts for an answer, once: when a
//     platform repeats cumulative totals, the adapter emits the increments.
//   - An adapter may emit one KindSession record per session with what the
//     platform knows beyond its messages (Title, with Session.TitleSource
//     "platform"; Meta; Completeness); pos-normalize folds it into the
//     session rollup.
//   - Extract sets Options.Platform to its platform first thing: watermarks
//     are kept per platform and path.
//   - With Options.State set, each source file ends with a checkpoint record
//     (Checkpoint): consumed bytes, where the next run resumes, and the
//     context the adapter needs there. Formats that cannot be appended to
//     (a JSON array, a database) are read whole again when they change.
//   - A bad native record is reported through Options.Skip as a
//     schema.BadInput naming file and line (or key), and counted; it never
//     stops the run unless Skip says so (--strict). A record that is JSON
//     but makes no message (not an object, too deep, a shape the parser
//     cannot read) is kept raw and reported through Skip too; one kept with
//     repairs, or with a field that could not be read (a time that is no
//     time, a count that is a string or below zero), through Options.Warn.
//     A line type the adapter does not know is not bad: it is kept raw.
//   - Files are found with Options.Walk and opened with OpenSource (most
//     through ReadSource, which closes them after), or OpenFile and
//     ReadSmall for a file read beside them: never a symbolic
//     link below a root unless Options.FollowLinks, never anything but a
//     regular file, never blocking. An entry that cannot be read is
//     reported (Options.SkipFile) and the run goes on; a read that fails
//     part way is a ReadError, which Options.FileDone turns into a skip.
//   - Memory is bounded by the largest native record, not by the size of a
//     file: large files are streamed.
//   - Library code never reads the environment or the home directory by
//     itself: Options.Home and Options.Env give them.
package extract
