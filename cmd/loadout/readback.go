package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
)

// The render text output says what a plugin actually produced, read back from the files
// rather than from the request: which MCP servers each config file holds, and which skills
// each directory holds. The read-back knows no harness: a config is a JSON or TOML file with a
// table of servers (an object whose members are objects with a command, url or httpUrl), so a
// plugin for a new harness is described the same way.

// serverKeys mark an object as an MCP server entry.
var serverKeys = []string{"command", "url", "httpUrl"}

// configTable is the servers table of one config file, as read back.
type configTable struct {
	key     string   // the table's name in the file, e.g. mcpServers or mcp_servers
	servers []string // the server names, in file order
}

// fileContent is what was written to f, or on a dry run what would be (secrets masked).
func fileContent(f host.FileResult) (string, bool) {
	if f.Written != "" {
		b, err := os.ReadFile(f.Written)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return f.Content, f.Content != ""
}

// readConfig returns the servers tables of a JSON or TOML file, in file order; none for any
// other file or one that does not parse.
func readConfig(name, content string) []configTable {
	switch path.Ext(name) {
	case ".json":
		return jsonTables(content)
	case ".toml":
		return tomlTables(content)
	}
	return nil
}

// jsonTables reads the top-level object of a JSON document in order.
func jsonTables(content string) []configTable {
	dec := json.NewDecoder(strings.NewReader(content))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []configTable
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out
		}
		if names, ok := jsonServers(raw); ok && (len(names) > 0 || tableName(key)) {
			out = append(out, configTable{key: key, servers: names})
		}
	}
	return out
}

// jsonServers returns the member names of raw when it is an object whose every member is a
// server entry.
func jsonServers(raw json.RawMessage) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	names := []string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var entry map[string]json.RawMessage
		if err := dec.Decode(&entry); err != nil || !isServer(func(k string) bool { _, ok := entry[k]; return ok }) {
			return nil, false
		}
		names = append(names, t.(string))
	}
	return names, true
}

// tomlTables reads the tables of a TOML document whose every subtable is a server entry.
func tomlTables(content string) []configTable {
	doc, err := plan.ParseTOML(content)
	if err != nil {
		return nil
	}
	var out []configTable
	index := map[string]int{}
	for _, k := range doc.Keys {
		if len(k) == 0 {
			continue
		}
		sub, ok := doc.Map[k[0]].(map[string]any)
		if !ok || !tomlServerTable(sub) || (len(sub) == 0 && !tableName(k[0])) {
			continue
		}
		i, seen := index[k[0]]
		if !seen {
			i = len(out)
			index[k[0]] = i
			out = append(out, configTable{key: k[0], servers: []string{}})
		}
		if len(k) == 2 {
			out[i].servers = append(out[i].servers, k[1])
		}
	}
	return out
}

func tomlServerTable(t map[string]any) bool {
	for _, v := range t {
		entry, ok := v.(map[string]any)
		if !ok || !isServer(func(k string) bool { _, ok := entry[k]; return ok }) {
			return false
		}
	}
	return true
}

func isServer(has func(string) bool) bool {
	for _, k := range serverKeys {
		if has(k) {
			return true
		}
	}
	return false
}

// tableName reports whether an empty table's name says it holds servers.
func tableName(key string) bool {
	return strings.Contains(strings.ToLower(key), "servers")
}

// skillDir is one directory of installed skills.
type skillDir struct {
	where  string // root:dir/
	skills []string
}

// skillDirs groups the plan's SKILL.md files by the directory holding their skill directories,
// in plan order.
func skillDirs(files []host.FileResult) []skillDir {
	var out []skillDir
	index := map[string]int{}
	for _, f := range files {
		if path.Base(f.Path) != "SKILL.md" {
			continue
		}
		skill := path.Dir(f.Path)
		where := fmt.Sprintf("%s:%s/", f.Root, path.Dir(skill))
		if path.Dir(skill) == "." {
			where = f.Root + ":"
		}
		i, ok := index[where]
		if !ok {
			i = len(out)
			index[where] = i
			out = append(out, skillDir{where: where})
		}
		out[i].skills = append(out[i].skills, path.Base(skill))
	}
	return out
}
