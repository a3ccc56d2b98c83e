package profileyaml

import (
	"fmt"
	"go/format"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/profile"
)

// GoSource writes p (its exported fields) as the Go source of a file of package pkg declaring
// var name = profile.MustCompile(&profile.Profile{…}), gofmt-ed. The literal is what Parse read:
// a plugin's test holds the two equal (a profile.yaml edited without regenerating fails it).
func GoSource(pkg, name, from string, p *profile.Profile) ([]byte, error) {
	var lit strings.Builder
	if err := literal(&lit, reflect.ValueOf(*p)); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated from %s by sdk/profile/profileyaml; DO NOT EDIT.\n\npackage %s\n\n", from, pkg)
	b.WriteString("import (\n\t\"github.com/loadout-dev/loadout/sdk/profile\"\n")
	if strings.Contains(lit.String(), "valuesyntax.") {
		b.WriteString("\t\"github.com/loadout-dev/loadout/sdk/valuesyntax\"\n")
	}
	b.WriteString(")\n\n")
	fmt.Fprintf(&b, "// %s is %s, compiled.\nvar %s = profile.MustCompile(&%s)\n", name, from, name, lit.String())
	return format.Source([]byte(b.String()))
}

// literal writes v as a Go expression of its own type: exported struct fields only, zero
// fields left out, map keys sorted.
func literal(b *strings.Builder, v reflect.Value) error {
	t := v.Type()
	switch v.Kind() {
	case reflect.String:
		b.WriteString(strconv.Quote(v.String()))
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Float64:
		b.WriteString("float64(" + strconv.FormatFloat(v.Float(), 'g', -1, 64) + ")")
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		b.WriteString("&")
		return literal(b, v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		e := v.Elem()
		if e.Kind() == reflect.Int {
			fmt.Fprintf(b, "int(%d)", e.Int())
			return nil
		}
		return literal(b, e)
	case reflect.Struct:
		b.WriteString(t.String() + "{\n")
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || v.Field(i).IsZero() {
				continue
			}
			b.WriteString(f.Name + ": ")
			if err := literal(b, v.Field(i)); err != nil {
				return fmt.Errorf("%s.%s: %w", t, f.Name, err)
			}
			b.WriteString(",\n")
		}
		b.WriteString("}")
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		b.WriteString(t.String() + "{\n")
		for i := 0; i < v.Len(); i++ {
			if err := literal(b, v.Index(i)); err != nil {
				return err
			}
			b.WriteString(",\n")
		}
		b.WriteString("}")
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("nil")
			return nil
		}
		b.WriteString(t.String() + "{\n")
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
		for _, k := range keys {
			if err := literal(b, k); err != nil {
				return err
			}
			b.WriteString(": ")
			if err := literal(b, v.MapIndex(k)); err != nil {
				return err
			}
			b.WriteString(",\n")
		}
		b.WriteString("}")
	default:
		return fmt.Errorf("a value of kind %s", v.Kind())
	}
	return nil
}
