package materialize

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// escaper turns a value into its spelling inside a file of some format.
type escaper func(string) string

func raw(s string) string { return s }

// jsonEscape and tomlEscape spell a value inside a JSON or TOML string exactly as sdk/format
// (the plugins' encoders) and the policy's redaction set spell it, so a substituted secret is
// found by redaction in every spelling it takes.
func jsonEscape(s string) string { return format.JSONStringBody(s) }

func tomlEscape(s string) string { return format.TOMLStringBody(s) }

func escaperFor(format string) escaper {
	switch format {
	case abi.FormatJSON:
		return jsonEscape
	case abi.FormatTOML:
		return tomlEscape
	}
	return raw
}

// substitute replaces every placeholder of s by its value from vals, escaped by esc, in one
// pass: a substituted value is never scanned again. A placeholder without a value is an error.
func substitute(s string, vals map[string]string, esc escaper) (string, error) {
	occs := plan.Scan(s)
	if len(occs) == 0 {
		return s, nil
	}
	var b strings.Builder
	prev := 0
	for _, o := range occs {
		v, ok := vals[o.Text]
		if !ok {
			return "", fmt.Errorf("no value for placeholder %s", strconv.Quote(o.Text))
		}
		b.WriteString(s[prev:o.Start])
		b.WriteString(esc(v))
		prev = o.End
	}
	b.WriteString(s[prev:])
	return b.String(), nil
}

// verifyRoundTrip re-parses the substituted content of a json, toml or markdown file and checks
// that it is the template's parse with each placeholder replaced by its raw value, and that each
// secret the template holds is found, whole, in the parsed strings: a value can neither break
// out of its string nor go missing.
func verifyRoundTrip(format, tmpl, got string, vals map[string]string, secrets map[string]string) error {
	sub := func(s string) string {
		out, err := substitute(s, vals, raw)
		if err != nil {
			return "\x00unsubstituted"
		}
		return out
	}
	var parsed []string
	switch format {
	case abi.FormatJSON:
		tv, err := plan.ParseJSON([]byte(tmpl))
		if err != nil {
			return fmt.Errorf("parse template: %w", err)
		}
		gv, err := plan.ParseJSON([]byte(got))
		if err != nil {
			return fmt.Errorf("parse substituted json: %w", err)
		}
		if !equalJSON(tv, gv, sub) {
			return fmt.Errorf("substituted json differs from its template")
		}
		parsed = jsonStrings(gv)
	case abi.FormatTOML:
		td, err := plan.ParseTOML(tmpl)
		if err != nil {
			return fmt.Errorf("parse template: %w", err)
		}
		gd, err := plan.ParseTOML(got)
		if err != nil {
			return fmt.Errorf("parse substituted toml: %w", err)
		}
		if !equalAny(td.Map, gd.Map, sub) {
			return fmt.Errorf("substituted toml differs from its template")
		}
		parsed = anyStrings(gd.Map)
	case abi.FormatMarkdown:
		_, tm, thas, err := plan.FrontMatter(tmpl)
		if err != nil {
			return fmt.Errorf("parse template front matter: %w", err)
		}
		_, gm, ghas, err := plan.FrontMatter(got)
		if err != nil {
			return fmt.Errorf("parse substituted front matter: %w", err)
		}
		if thas != ghas || !equalAny(tm, gm, sub) {
			return fmt.Errorf("substituted front matter differs from its template")
		}
		parsed = []string{got}
	default:
		parsed = []string{got}
	}
	for ph, val := range secrets {
		if !strings.Contains(tmpl, ph) {
			continue
		}
		found := false
		for _, s := range parsed {
			if strings.Contains(s, val) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("secret %s does not read back from the file", ph)
		}
	}
	if !utf8.ValidString(got) {
		return fmt.Errorf("substituted content is not valid UTF-8")
	}
	return nil
}

func equalJSON(t, g *plan.Value, sub func(string) string) bool {
	if t.Kind != g.Kind {
		return false
	}
	switch t.Kind {
	case plan.String:
		return sub(t.Str) == g.Str
	case plan.Number:
		return t.Number == g.Number
	case plan.Bool:
		return t.Bool == g.Bool
	case plan.Array:
		if len(t.Items) != len(g.Items) {
			return false
		}
		for i := range t.Items {
			if !equalJSON(t.Items[i], g.Items[i], sub) {
				return false
			}
		}
	case plan.Object:
		if len(t.Members) != len(g.Members) {
			return false
		}
		for i := range t.Members {
			if sub(t.Members[i].Name) != g.Members[i].Name || !equalJSON(t.Members[i].Value, g.Members[i].Value, sub) {
				return false
			}
		}
	}
	return true
}

func equalAny(t, g any, sub func(string) string) bool {
	switch tv := t.(type) {
	case string:
		gv, ok := g.(string)
		return ok && sub(tv) == gv
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok || len(tv) != len(gv) {
			return false
		}
		for k, v := range tv {
			w, ok := gv[sub(k)]
			if !ok || !equalAny(v, w, sub) {
				return false
			}
		}
		return true
	case []any:
		gv, ok := g.([]any)
		if !ok || len(tv) != len(gv) {
			return false
		}
		for i := range tv {
			if !equalAny(tv[i], gv[i], sub) {
				return false
			}
		}
		return true
	case []map[string]any:
		gv, ok := g.([]map[string]any)
		if !ok || len(tv) != len(gv) {
			return false
		}
		for i := range tv {
			if !equalAny(tv[i], gv[i], sub) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(t, g)
}

func jsonStrings(v *plan.Value) []string {
	var out []string
	switch v.Kind {
	case plan.String:
		out = append(out, v.Str)
	case plan.Array:
		for _, it := range v.Items {
			out = append(out, jsonStrings(it)...)
		}
	case plan.Object:
		for _, m := range v.Members {
			out = append(out, m.Name)
			out = append(out, jsonStrings(m.Value)...)
		}
	}
	return out
}

func anyStrings(v any) []string {
	var out []string
	switch t := v.(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, it := range t {
			out = append(out, anyStrings(it)...)
		}
	case []map[string]any:
		for _, it := range t {
			out = append(out, anyStrings(it)...)
		}
	case map[string]any:
		for k, it := range t {
			out = append(out, k)
			out = append(out, anyStrings(it)...)
		}
	}
	return out
}
