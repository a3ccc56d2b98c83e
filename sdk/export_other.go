//go:build !wasip1

package sdk

// Outside wasip1 the package has no exports: natively a renderer runs through Plugin.Render,
// which is what sdk/sdktest calls.
