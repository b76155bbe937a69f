package compact

// Names the black-box tests use.
var CompactFiles = compactFiles

const JournalFile = journalFile
