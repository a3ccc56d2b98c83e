package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/server"
)

// echoRenderer answers every request with an empty plan for the requested harness.
type echoRenderer struct{}

func (echoRenderer) Render(_ context.Context, rr host.RenderRequest) (*host.Result, error) {
	return &host.Result{Harness: rr.Harness, DryRun: rr.DryRun}, nil
}
func (echoRenderer) Plugins() []host.PluginInfo {
	return []host.PluginInfo{{Name: "render.claude", Harness: "claude"}}
}
func (echoRenderer) Close(context.Context) error { return nil }

func Example() {
	srv, err := server.New(context.Background(), server.Config{
		Loader: func(context.Context) (server.Renderer, error) { return echoRenderer{}, nil },
	})
	if err != nil {
		fmt.Println("new:", err)
		return
	}
	defer srv.Close()

	post := func(target string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json") // anything else is 415
		return req
	}
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, post("/v1/render?harness=claude"))
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"harness":"claude"`), strings.Contains(rec.Body.String(), `"dryRun":true`))

	rec = httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, post("/v1/render?harness=codex"))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 200 true true
	// 400 {"error":{"code":"bad_request","message":"no plugin for harness \"codex\""}}
}
