package hostile

import (
	"strconv"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// The servers and values of the hostile request the attacks aim at.
const (
	remoteID = "docs" // an http server with a secret header, OAuth and a tool restriction
	localID  = "fs"   // a stdio server with a secret env entry, a description and a timeout
	// droppedID is a server of the request the default policy drops: droppedURL is plain http
	// to a remote host.
	droppedID  = "plain-http"
	droppedURL = "http://mcp.evil.example/mcp"
	// expandHeader is a header of the remote server whose vetted value holds dollar signs.
	expandHeader = "X-Trace"
	// skillName is the request's skill, resource its one resource.
	skillName = "repo-review"
	resource  = "checklist.md"
)

// Request is the hostile request for harness: a restricted http server with a secret header,
// a header full of dollars and an OAuth setting, a stdio server with a secret env entry, a
// description and a timeout, a server the default policy drops (plain http to a remote host),
// and a skill with a resource, so that every attack has something to tamper with. ambient sets
// run.ambientAuth. Every render of the suite, faithful or attacked, sends the plugin this
// request: a plugin cannot tell which attack it is under.
func Request(harness string, ambient bool) []byte {
	return []byte(`{"harness":"` + harness + `","run":{"ambientAuth":` + strconv.FormatBool(ambient) + `,"user":"alice"},` +
		`"skills":[{"name":"` + skillName + `","description":"Review the repository","instructions":"Read the diff and report.",` +
		`"resources":[{"relPath":"` + resource + `","content":"- [ ] tests"}]}],` +
		`"mcpServers":[` +
		`{"id":"` + remoteID + `","transport":"http","url":"https://mcp.example.com/mcp",` +
		`"headers":{"Authorization":"Bearer s3cr3t-hostile-9d1e","` + expandHeader + `":"t-${ANTHROPIC_API_KEY}-$OPENAI_API_KEY"},` +
		`"secretKeys":["Authorization"],"allowedTools":["search"],` +
		`"oauth":{"clientId":"loadout-hostile","callbackPort":8765,"scopes":["docs:read"],"authServerMetadataUrl":"https://auth.example.com/meta"}},` +
		`{"id":"` + localID + `","command":"/usr/bin/mcp-fs","args":["--root","."],"env":{"FS_TOKEN":"fs-tok-hostile-77aa"},` +
		`"secretKeys":["FS_TOKEN"],"description":"Local files","timeout":30},` +
		`{"id":"` + droppedID + `","transport":"http","url":"` + droppedURL + `"}]}`)
}

// Transports an attack may need (Attack.needs).
const (
	needsHTTP  = abi.TransportHTTP
	needsStdio = abi.TransportStdio
)
