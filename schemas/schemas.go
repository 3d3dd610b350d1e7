// Package schemas holds the league.v2 JSON Schemas (draft 2020-12): defs.json with the shared
// definitions, game_metadata.json with what the League Manager reads of a result's game_metadata,
// and one file per message type, named after the type in lowercase
// (REGISTER_REFEREE_REQUEST is register_referee_request.json). Each message schema validates the
// JSON-RPC params or result object {envelope, payload}. The files are the contract that agents
// written in other languages read; the server validates every inbound message against them.
package schemas

import "embed"

// BaseURI is the base of every schema's $id: a file's $id is BaseURI followed by its name, and
// references between files resolve against it.
const BaseURI = "https://agentleague.dev/schemas/"

// FS holds the schema files at its root.
//
//go:embed *.json
var FS embed.FS
