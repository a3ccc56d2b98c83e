package policy

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/keys"
)

// Bundle is a policy tree read from an OPA bundle (`opa build` output, a .tar.gz), verified
// when a key is given. It is read once and never changes; safe for concurrent use.
type Bundle struct {
	b bundle.Bundle
}

// BundleOptions say how a bundle is verified.
type BundleOptions struct {
	// VerificationKey is the public key (PEM) or HMAC secret the bundle's signature must
	// verify with; "" reads the bundle unverified (and refuses a signed one, as OPA does).
	VerificationKey string
	// KeyID names the key in the signature (default "default"); Algorithm is its algorithm
	// (default RS256).
	KeyID, Algorithm string
	// Scope is the signing scope to check, when the signer set one.
	Scope string
}

// maxBundleBytes bounds what a bundle may expand to.
const maxBundleBytes = 64 << 20

// ReadBundle reads and (with a key) verifies an OPA bundle from r.
func ReadBundle(r io.Reader, opts BundleOptions) (*Bundle, error) {
	rd := bundle.NewReader(r).
		WithRegoVersion(ast.RegoV1).
		WithCapabilities(Capabilities()).
		WithProcessAnnotations(true).
		WithSizeLimitBytes(maxBundleBytes)
	vc, err := opts.verification()
	if err != nil {
		return nil, err
	}
	if vc != nil {
		rd = rd.WithBundleVerificationConfig(vc)
	}
	b, err := rd.Read()
	if err != nil {
		return nil, fmt.Errorf("read policy bundle: %w", compileError(err))
	}
	return &Bundle{b: b}, nil
}

// verification is OPA's verification config for opts, nil without a key.
func (opts BundleOptions) verification() (*bundle.VerificationConfig, error) {
	if opts.VerificationKey == "" {
		return nil, nil
	}
	id := opts.KeyID
	if id == "" {
		id = "default"
	}
	alg := opts.Algorithm
	if alg == "" {
		alg = "RS256"
	}
	kc, err := keys.NewKeyConfig(opts.VerificationKey, alg, opts.Scope)
	if err != nil {
		return nil, fmt.Errorf("bundle verification key: %w", err)
	}
	return bundle.NewVerificationConfig(map[string]*bundle.KeyConfig{id: kc}, id, opts.Scope, nil), nil
}

// LoadBundle reads the bundle file at path (see ReadBundle).
func LoadBundle(path string, opts BundleOptions) (*Bundle, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy bundle: %w", err)
	}
	return ReadBundle(bytes.NewReader(raw), opts)
}

// IsBundlePath reports whether path names a bundle file rather than a policy directory.
func IsBundlePath(path string) bool {
	return strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz")
}

// Revision is the bundle's manifest revision.
func (b *Bundle) Revision() string { return b.b.Manifest.Revision }

// tree is the bundle's modules (tests left out unless withTests) and its data (fixtures
// left out unless withTests).
func (b *Bundle) tree(withTests bool) (tree, error) {
	t := tree{modules: map[string]*ast.Module{}, raw: map[string][]byte{}, data: make(map[string]any, len(b.b.Data))}
	for _, mf := range b.b.Modules {
		if (!withTests && strings.HasSuffix(mf.Path, "_test.rego")) || mf.Parsed == nil {
			continue
		}
		name := strings.TrimPrefix(mf.Path, "/")
		t.modules[name] = mf.Parsed
		t.raw[name] = mf.Raw
	}
	for k, v := range b.b.Data {
		if (withTests || k != FixturesDir) && k != "system" {
			t.data[k] = v
		}
	}
	return t, nil
}
