package protocol

// Backoff exposes backoff to the external tests.
var Backoff = backoff

// ReadMetadataTyped and ReadMetadataByMember expose ReadGameMetadata's two ways.
var (
	ReadMetadataTyped    = readMetadataTyped
	ReadMetadataByMember = readMetadataByMember
)
