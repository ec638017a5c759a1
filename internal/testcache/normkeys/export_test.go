package normkeys

var (
	Fetch    = fetch
	EntryKey = entryKey
)
